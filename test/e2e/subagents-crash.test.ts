/**
 * Sub-agents across a SIGKILL: the built daemon (bin/switchyard.js) is killed while three of a
 * parent's five helpers are inside their model calls, then restarted on the same home. The three
 * run again from their transcripts, the parent's wake brings all five results, and the person
 * gets the comparison exactly once.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { ModelSimulator, type ScriptedTurn, type SimulatedRequest } from "../fakes/model-simulator.js";
import { spawnGateway } from "../helpers/gateway-process.js";
import { postChat } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

type Message = { role: string; content?: unknown };
const messagesOf = (r: SimulatedRequest): Message[] => (r.body as { messages: Message[] }).messages;
const isHelper = (r: SimulatedRequest): boolean =>
  String(messagesOf(r)[0]?.content ?? "").startsWith("You are a helper agent");
const text = (r: SimulatedRequest): string => JSON.stringify(messagesOf(r));
const isWake = (r: SimulatedRequest): boolean => !isHelper(r) && text(r).includes("[helper ");

describe("sub-agents across a SIGKILL", () => {
  let sim: ModelSimulator;
  let home: string;
  let configPath: string;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    home = mkdtempSync(join(tmpdir(), "sy-sub-crash-"));
    configPath = join(home, "switchyard.yaml");
    writeFileSync(
      configPath,
      [
        "agent:",
        "  model: openai/gpt-test",
        "providers:",
        "  openai:",
        "    apiKey: sk-test-key",
        `    baseUrl: ${sim.url}/v1`,
        "lanes:",
        "  maxConcurrent: 8",
        "logging:",
        "  level: warn",
      ].join("\n"),
    );
  });
  afterAll(async () => {
    await sim.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** Helpers 1 and 2 answer; 3 to 5 hang inside their model call until `hang` is false. */
  let hang = true;
  const never = new Promise<ScriptedTurn>(() => {});
  const responder = (r: SimulatedRequest): ScriptedTurn | Promise<ScriptedTurn> => {
    if (isHelper(r)) {
      const n = Number(/Check vendor (\d)/.exec(text(r))?.[1] ?? 0);
      return hang && n >= 3 ? never : { text: `vendor ${n} costs ${n * 10} EUR` };
    }
    if (isWake(r)) {
      const seen = [1, 2, 3, 4, 5].filter((n) => text(r).includes(`vendor ${n} costs`)).length;
      return { text: `Comparison of ${seen} vendors.` };
    }
    const last = messagesOf(r).at(-1);
    if (last?.role === "tool") return { text: "Asked 5 helpers." };
    return {
      toolCalls: [1, 2, 3, 4, 5].map((n) => ({
        name: "spawn_agent",
        args: { task: `Check vendor ${n}.`, label: `v${n}` },
      })),
    };
  };

  it("delivers every result once and the comparison once after a kill mid-run", async () => {
    sim.setDefault(responder);
    const start = () => spawnGateway(["--home", home, "--config", configPath, "--port", "0"]);
    let gw = await start();
    const r = await postChat(gw.url, "ann", "compare the vendors");
    expect(r.body.replies?.[0]?.text).toBe("Asked 5 helpers.");
    // Two helpers answered (committed); three are inside their model calls.
    await until(() => sim.requests.filter(isHelper).length >= 5, "five helper requests", 15_000);
    const peek = openSqliteStore({ path: join(home, "switchyard.db") });
    try {
      await until(async () => {
        const rows = await peek.subagents.listForParent("agent:main:http:dm:ann");
        return rows.filter((c) => c.state === "done").length === 2;
      }, "two helpers done");
    } finally {
      await peek.close();
    }
    await gw.kill();

    hang = false;
    const from = sim.requests.length;
    gw = await start();
    try {
      await until(() => sim.requests.slice(from).some(isWake), "the parent's wake", 20_000);
      // Only the three interrupted helpers ran again.
      expect(sim.requests.slice(from).filter(isHelper)).toHaveLength(3);
    } finally {
      await gw.kill("SIGTERM");
    }
    const wakes = sim.requests.filter(isWake);
    expect(wakes).toHaveLength(1);
    for (const n of [1, 2, 3, 4, 5])
      expect(text(wakes[0] as SimulatedRequest).split(`vendor ${n} costs`)).toHaveLength(2);
    const store = openSqliteStore({ path: join(home, "switchyard.db") });
    try {
      const rows = await store.subagents.listForParent("agent:main:http:dm:ann");
      expect(rows.map((c) => c.state)).toEqual(Array(5).fill("done"));
      const mailbox = await store.outbox.listMailbox("http", "ann", 0, 50);
      expect(mailbox.map((m) => m.text)).toEqual(["Asked 5 helpers.", "Comparison of 5 vendors."]);
    } finally {
      await store.close();
    }
  });
});
