/**
 * The gateway on PostgreSQL end to end (`store.engine: postgres`), a throwaway cluster, the
 * real OpenAI SDK against the model simulator, people over HTTP: a conversation is answered and
 * kept in the database (a restarted gateway with another home folder continues it: nothing of
 * it lives on the node); two gateways on one database answer their own people, each message
 * once; a node with its own workspace folder instead of the shared one refuses to start; helpers
 * fan out and their results wake the parent once.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator, type ScriptedTurn, type SimulatedRequest } from "../fakes/model-simulator.js";
import { type TestPostgres, startPostgres } from "../helpers/postgres.js";
import { simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

type Message = { role: string; content?: unknown };
const messagesOf = (r: SimulatedRequest) => (r.body as { messages: Message[] }).messages;
const isHelper = (r: SimulatedRequest): boolean =>
  String(messagesOf(r)[0]?.content ?? "").startsWith("You are a helper agent");
const lastUser = (r: SimulatedRequest): string =>
  JSON.stringify([...messagesOf(r)].reverse().find((m) => m.role === "user")?.content ?? "");

/** Echoes the person; spawns 3 helpers when asked to fan out; counts results when woken. */
function responder(r: SimulatedRequest): ScriptedTurn {
  const last = messagesOf(r).at(-1);
  if (isHelper(r)) return { text: "a helper's result" };
  if (lastUser(r).includes("fan out") && last?.role === "user")
    return {
      toolCalls: [1, 2, 3].map((i) => ({
        name: "spawn_agent",
        args: { task: `Part ${i}.`, label: `p${i}` },
      })),
    };
  if (last?.role === "tool") return { text: "asked 3 helpers" };
  if (lastUser(r).includes("[helper ")) {
    const n = (JSON.stringify(messagesOf(r)).match(/a helper's result/g) ?? []).length;
    return { text: `${n} results in` };
  }
  const said = /message \d+|the sky is green|what did I say\?/.exec(lastUser(r))?.[0] ?? "something";
  return { text: `you said: ${said}` };
}

describe("the gateway on PostgreSQL", () => {
  let sim: ModelSimulator;
  let server: TestPostgres;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    sim.setDefault(responder);
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await sim?.close();
    await server?.stop();
  });

  /** One database and one workspace folder: what the nodes of a cluster share. */
  const config = (url: string, workspace: string) => ({
    ...simulatorConfig(sim, "openai"),
    agent: { ...simulatorConfig(sim, "openai").agent, workspace },
    store: { engine: "postgres", url, poolSize: 4 },
  });
  const folder = () => mkdtempSync(join(tmpdir(), "sy-shared-ws-"));

  it("answers, keeps the conversation in the database, and a gateway started elsewhere continues it", async () => {
    const url = await server.createDatabase("chat");
    const shared = folder();
    const first = await startTestGateway(config(url, shared));
    try {
      const r = await first.chat("ann", "the sky is green");
      expect(r.body.replies?.[0]?.text).toBe("you said: the sky is green");
    } finally {
      await first.stop();
    }
    // Another home folder: only the database carries the session over.
    const second = await startTestGateway(config(url, shared));
    try {
      const from = sim.requests.length;
      const r = await second.chat("ann", "what did I say?");
      expect(r.body.replies?.[0]?.text).toContain("you said:");
      const sent = JSON.stringify(messagesOf(sim.requests.at(from) as SimulatedRequest));
      expect(sent).toContain("the sky is green");
      const session = await second.running.store.sessions.get("agent:main:http:dm:ann");
      const events = await second.running.store.transcript.tail(
        session?.sessionKey ?? "",
        session?.sessionId ?? "",
        50,
      );
      expect(events.filter((e) => e.payload.type === "user")).toHaveLength(2);
    } finally {
      await second.stop();
    }
  });

  it("two gateways on one database answer their own people, each message once", async () => {
    const url = await server.createDatabase("two");
    const shared = folder();
    const [a, b] = await Promise.all([
      startTestGateway(config(url, shared)),
      startTestGateway(config(url, shared)),
    ]);
    try {
      const asked = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).chat(`p${i % 4}`, `message ${i}`)),
      );
      expect(asked.map((r) => r.body.replies?.[0]?.text)).toEqual(
        Array.from({ length: 12 }, (_, i) => `you said: message ${i}`),
      );
      const runs = await a.running.store.usage.summarize({ since: 0, by: "session" });
      expect(runs.reduce((n, r) => n + r.calls, 0)).toBe(12);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("the server going away: intake refuses naming the store, a turn's commit waits for it; once back, all answered once", async () => {
    const url = await server.createDatabase("away");
    let failedCommits = 0;
    const gw = await startTestGateway(config(url, folder()), {
      wrapStore: (store) =>
        Object.assign(Object.create(store) as typeof store, {
          commitTurn: (...args: Parameters<typeof store.commitTurn>) =>
            store.commitTurn(...args).catch((err: unknown) => {
              failedCommits++;
              throw err;
            }),
        }),
    });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      expect((await gw.chat("cy", "message 1")).body.replies?.[0]?.text).toBe("you said: message 1");
      // A turn at its model call when the server goes away: its answer exists only in memory.
      sim.setDefault(async (r) => {
        if (lastUser(r).includes("message 4")) await held;
        return responder(r);
      });
      const from = sim.requests.length;
      const midTurn = gw.chat("dee", "message 4");
      await until(() => sim.requests.length > from, "dee's model call");
      await server.pause();
      const refused = await gw.chat("cy", "message 2", "m2");
      expect(refused.status).toBe(503);
      expect(JSON.stringify(refused.body)).toContain(
        `the PostgreSQL store at 127.0.0.1:${server.port}/away is unreachable`,
      );
      release();
      await until(() => failedCommits > 0, "a commit refused while the server is away");
      await server.resume();
      // The turn's commit is retried with backoff and lands; the client resends the refused message.
      expect((await midTurn).body.replies?.[0]?.text).toBe("you said: message 4");
      const again = await gw.chat("cy", "message 2", "m2");
      expect(again.body.replies?.[0]?.text).toBe("you said: message 2");
      expect((await gw.chat("cy", "message 3")).body.replies?.[0]?.text).toBe("you said: message 3");
      const runs = await gw.running.store.usage.summarize({ since: 0, by: "session" });
      expect(runs.reduce((n, r) => n + r.calls, 0)).toBe(4);
    } finally {
      release();
      sim.setDefault(responder);
      await gw.stop();
    }
  }, 60_000);

  it("a node whose workspace is not the shared folder refuses to start, naming it", async () => {
    const url = await server.createDatabase("workspace");
    const first = await startTestGateway(config(url, folder()));
    await first.stop();
    const local = folder();
    await expect(startTestGateway(config(url, local))).rejects.toThrow(
      `the workspace ${local} is not the one the other nodes use: it has no .switchyard-workspace`,
    );
  });

  it("helpers fan out on PostgreSQL and their results wake the parent once", async () => {
    const url = await server.createDatabase("helpers");
    const gw = await startTestGateway(config(url, folder()));
    try {
      const r = await gw.chat("bob", "fan out please");
      expect(r.body.replies?.[0]?.text).toBe("asked 3 helpers");
      await until(async () => {
        const rows = await gw.running.store.outbox.listMailbox("http", "bob", 0, 50);
        return JSON.stringify(rows).includes("3 results in");
      }, "the wake's answer");
      const children = await gw.running.store.subagents.listForParent("agent:main:http:dm:bob");
      expect(children.map((c) => [c.state, c.deliveredRunId !== null])).toEqual([
        ["done", true],
        ["done", true],
        ["done", true],
      ]);
    } finally {
      await gw.stop();
    }
  });
});
