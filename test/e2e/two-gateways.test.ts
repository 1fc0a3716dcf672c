/**
 * Two gateway processes on one SQLite file (HTTP only, two ports): the store's ownership
 * contract in action. Both answer their own traffic; one is SIGKILLed in the middle of a run;
 * the survivor takes over the dead one's leased work only after its lease expired — never
 * before — and every message is answered exactly once, also the one whose client resends it
 * to the survivor.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type GatewayProcess, spawnGateway } from "../helpers/gateway-process.js";
import { until } from "../helpers/until.js";

const TTL_MS = 2_000;

interface ChatBody {
  state?: string;
  duplicate?: boolean;
  replies?: Array<{ text: string }>;
}

async function chat(url: string, sender: string, text: string, id: string): Promise<ChatBody> {
  const res = await fetch(`${url}/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sender, text, id }),
  });
  return (await res.json()) as ChatBody;
}

describe("two gateway processes on one database", () => {
  const home = mkdtempSync(join(tmpdir(), "sy-two-"));
  const dbPath = join(home, "switchyard.db");
  let sim: ModelSimulator;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    const config = join(home, "switchyard.yaml");
    writeFileSync(
      config,
      [
        "gateway:",
        `  leaseTtlMs: ${TTL_MS}`,
        "agent:",
        "  model: openai/gpt-test",
        "providers:",
        "  openai:",
        "    apiKey: sk-test-key-two-gateways",
        `    baseUrl: ${sim.url}/v1`,
        "heartbeat:",
        "  everyMs: 0",
        "",
      ].join("\n"),
    );
    [a, b] = await Promise.all([
      spawnGateway(["--config", config, "--home", home, "--port", "0"]),
      spawnGateway(["--config", config, "--home", home, "--port", "0"]),
    ]);
  });
  afterAll(async () => {
    await a?.kill("SIGKILL");
    await b?.kill("SIGTERM");
    await sim.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("both answer their own traffic, each message once", async () => {
    const results = await Promise.all(
      ["ann", "bob", "cy", "dee"].flatMap((sender, i) =>
        [1, 2].map((n) => chat(i % 2 === 0 ? a.url : b.url, sender, `${sender} says ${n}`, `${sender}-${n}`)),
      ),
    );
    for (const r of results) {
      expect(r.state).toBe("answered");
      expect(r.replies).toHaveLength(1);
    }
    const store = openSqliteStore({ path: dbPath, readonly: true });
    try {
      expect((await store.inbox.countByState()).answered).toBe(8);
      expect((await store.runs.countByOutcome()).answered).toBe(8);
    } finally {
      await store.close();
    }
  });

  it("the survivor takes over a killed gateway's run after its lease expires, never before", async () => {
    const sessionKey = "agent:main:http:dm:zoe";
    // A's model call never answers: A dies holding zoe's session lease, mid-run.
    sim.script({ hang: true });
    const seen = sim.requests.length;
    const lost = chat(a.url, "zoe", "the hanging question", "z1").catch(() => undefined);
    await until(() => sim.requests.length > seen, "A's model call");

    const store = openSqliteStore({ path: dbPath, readonly: true });
    let leaseUntil: number;
    try {
      const lease = await store.leases.getSession(sessionKey, Date.now());
      expect(lease).toBeDefined();
      leaseUntil = lease?.leaseUntil ?? 0;
    } finally {
      await store.close();
    }
    await a.kill("SIGKILL");
    await lost;

    // Zoe asks the survivor something else, and her client sends the lost message again.
    const [second, resent] = await Promise.all([
      chat(b.url, "zoe", "a second question", "z2"),
      chat(b.url, "zoe", "the hanging question", "z1"),
    ]);
    expect(second.state).toBe("answered");
    expect(resent).toMatchObject({ state: "answered", duplicate: true });
    expect(resent.replies?.[0]?.text).toContain("the hanging question");

    // Never before: every model call for zoe after A's was made once the lease had expired.
    const later = sim.requests.slice(seen + 1).filter((r) => JSON.stringify(r.body).includes("question"));
    expect(later.length).toBeGreaterThanOrEqual(1);
    for (const r of later) expect(r.timeMs).toBeGreaterThanOrEqual(leaseUntil);

    // Exactly once: each of zoe's messages answered by one committed run and one reply; the
    // lost one was claimed twice (by A, then by the survivor).
    const db = new BetterSqlite3(dbPath, { readonly: true });
    try {
      const rows = db
        .prepare("SELECT id, state, attempts, run_id FROM inbox WHERE session_key = ? ORDER BY id")
        .all(sessionKey) as Array<{ id: number; state: string; attempts: number; run_id: string }>;
      expect(rows.map((r) => [r.state, r.attempts])).toEqual([
        ["answered", 2],
        ["answered", 1],
      ]);
      for (const row of rows) {
        const replies = db.prepare("SELECT COUNT(*) AS n FROM outbox WHERE inbox_id = ?").get(row.id) as {
          n: number;
        };
        expect(replies.n).toBe(1);
      }
      const runs = db.prepare("SELECT outcome FROM runs WHERE session_key = ?").all(sessionKey) as Array<{
        outcome: string;
      }>;
      expect(runs.map((r) => r.outcome)).toEqual(["answered", "answered"]);
    } finally {
      db.close();
    }
  });
});
