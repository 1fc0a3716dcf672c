/**
 * `switchyard db copy --from sqlite --to postgres` on a home the test builds: a real gateway on
 * SQLite holds a conversation (sessions, transcript, inbox, outbox, runs, usage), a cron job, a
 * pairing request. The copy moves it into an empty PostgreSQL database; a gateway started on the
 * copy (engine postgres, the home's workspace) continues the conversation, sees the job and the
 * request, and its new rows get ids after the copied ones. A second copy into the same database
 * is refused: it is not empty.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator, type SimulatedRequest } from "../fakes/model-simulator.js";
import { type TestPostgres, startPostgres } from "../helpers/postgres.js";
import { simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

let server: TestPostgres;
let sim: ModelSimulator;
beforeAll(async () => {
  server = await startPostgres();
  sim = new ModelSimulator();
  await sim.start();
  sim.setDefault(() => ({ text: "noted" }));
}, 60_000);
afterAll(async () => {
  await sim?.close();
  await server?.stop();
  removeTempDirs();
});

const DM = "agent:main:http:dm:ann";

describe("switchyard db copy", () => {
  it("moves a home's state into an empty PostgreSQL database, where a gateway goes on with it", async () => {
    const home = tempDir();
    const workspace = join(home, "workspace");
    const base = { ...simulatorConfig(sim, "openai") };
    const sqliteGw = await startTestGateway(base, { home });
    try {
      await sqliteGw.chat("ann", "my locker code is 4711");
      await sqliteGw.chat("ann", "and the bike is blue");
      const store = sqliteGw.running.store;
      await store.cron.add(
        {
          agentId: "main",
          name: "standup",
          source: "cli",
          schedule: { kind: "cron", expr: "0 9 * * 1-5", tz: "Europe/Berlin" },
          prompt: "Summarize yesterday's notes",
          sessionMode: "isolated",
          deliver: { kind: "chat", target: { channel: "telegram", accountId: "default", chatId: "42" } },
          catchUp: "one",
          timeoutMs: 600_000,
          enabled: true,
        },
        Date.now() + 60_000,
        Date.now(),
      );
      await store.pairing.request(
        { channel: "telegram", accountId: "default", senderId: "42", senderName: "Ann", code: "ABCD2345" },
        { ttlMs: 3_600_000, maxPending: 3 },
        Date.now(),
      );
    } finally {
      await sqliteGw.stop();
    }

    const url = await server.createDatabase("copy");
    const cwd = tempDir();
    writeFileSync(join(cwd, "switchyard.yaml"), "store:\n  url: ${DATABASE_URL}\n");
    const env = { DATABASE_URL: url };
    const copied = await runCli(["db", "copy", "--from", "sqlite", "--to", "postgres", "--home", home], {
      cwd,
      env,
    });
    expect(copied.err).toBe("");
    expect(copied.code).toBe(0);
    expect(copied.out).toMatch(/^copied \d+ rows from .*switchyard\.db to 127\.0\.0\.1:\d+\/copy: /);
    expect(copied.out).toMatch(/sessions 1\b/);
    expect(copied.out).toMatch(/cron_jobs 1\b/);
    expect(copied.out).toMatch(/pairing_requests 1\b/);

    const again = await runCli(["db", "copy", "--from", "sqlite", "--to", "postgres", "--home", home], {
      cwd,
      env,
    });
    expect(again.code).toBe(1);
    expect(again.err).toContain("is not empty");

    const pgGw = await startTestGateway(
      { ...base, agent: { ...base.agent, workspace }, store: { engine: "postgres", url } },
      { home: tempDir() },
    );
    try {
      const store = pgGw.running.store;
      const before = (await store.inbox.countByState()).answered ?? 0;
      expect(before).toBe(2);
      const from = sim.requests.length;
      const r = await pgGw.chat("ann", "what was the locker code?");
      expect(r.body.replies?.[0]?.text).toBe("noted");
      // The copied conversation is the model's context.
      const body = JSON.stringify((sim.requests[from] as SimulatedRequest).body);
      expect(body).toContain("my locker code is 4711");
      expect(body).toContain("and the bike is blue");
      expect((await store.cron.list("main")).map((j) => j.name)).toEqual(["standup"]);
      expect((await store.pairing.listPending(Date.now())).map((p) => p.code)).toEqual(["ABCD2345"]);
      const session = await store.sessions.get(DM);
      const events = await store.transcript.tail(DM, session?.sessionId ?? "", 50);
      // New rows come after the copied ones: ids keep growing.
      const ids = events.map((e) => e.id);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      expect(events.filter((e) => e.payload.type === "user")).toHaveLength(3);
    } finally {
      await pgGw.stop();
    }
  }, 120_000);

  it("names what is wrong: another direction, no store.url", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "switchyard.yaml"), "");
    const wrong = await runCli(["db", "copy", "--from", "postgres", "--to", "sqlite"], { cwd });
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain("copy goes --from sqlite --to postgres");
    const noUrl = await runCli(["db", "copy", "--from", "sqlite", "--to", "postgres"], { cwd });
    expect(noUrl.code).toBe(2);
    expect(noUrl.err).toContain("store.url is not set");
  });
});
