/**
 * Just-in-time instructions and the environment block end to end: a real gateway over the HTTP
 * channel, the real OpenAI SDK against the model simulator. A rule's line reaches the one model
 * call it fired for, after the cached prefix (which stays byte-identical from call to call), is
 * recorded in the transcript and counted in /metrics; `agent.jit.disable` silences a rule.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

type Message = { role: string; content?: unknown };
const messagesOf = (sim: ModelSimulator, i: number): Message[] =>
  ((sim.requests[i]?.body as { messages?: Message[] } | undefined)?.messages ?? []) as Message[];
const text = (m: Message | undefined): string => JSON.stringify(m?.content ?? "");

const SERIAL_LINE = "read the files you need in one step";

/** Four model calls that each read one file, then an answer. */
function scriptSerialReads(sim: ModelSimulator): void {
  sim.script(
    ...["a.txt", "b.txt", "c.txt", "d.txt"].map((path) => ({
      toolCalls: [{ name: "read_file", args: { path } }],
    })),
    { text: "read them all" },
  );
}

async function jitEvents(gw: TestGateway, sessionKey: string) {
  const session = await gw.running.store.sessions.get(sessionKey);
  const events = await gw.running.store.transcript.tail(sessionKey, session?.sessionId ?? "", 500);
  return events.flatMap((e) => (e.payload.type === "jit" ? [e.payload] : []));
}

describe("JIT instructions", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(simulatorConfig(sim, "openai"));
    for (const f of ["a.txt", "b.txt", "c.txt", "d.txt"])
      writeFileSync(join(gw.running.workspaceDir, f), `contents of ${f}\n`);
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
  });

  it("fires serial-reads once, in the volatile tail of that call only; the cached prefix is byte-identical", async () => {
    const first = sim.requests.length;
    scriptSerialReads(sim);
    const r = await gw.chat("reader", "summarise a to d");
    expect(r.body.replies?.[0]?.text).toBe("read them all");
    const calls = [0, 1, 2, 3, 4].map((k) => messagesOf(sim, first + k));
    // Three calls in a row each read one file: the fourth call is told, the fifth is not (once).
    const told = calls.map((m) => text(m.at(-1)).includes(SERIAL_LINE));
    expect(told).toEqual([false, false, false, true, false]);
    // The line is the call's last message, after everything the previous call sent.
    const withLine = calls[3] as Message[];
    expect(withLine.at(-1)?.role).toBe("user");
    expect(text(withLine.at(-1))).toContain("<context>");
    // Each call's messages start with the previous call's, byte for byte (system prompt included):
    // the JIT line never entered the prefix, and it is gone from the call after.
    for (let k = 1; k < calls.length; k++) {
      const previous = calls[k - 1] as Message[];
      const prefix = k === 4 ? previous.slice(0, -1) : previous;
      expect(JSON.stringify((calls[k] as Message[]).slice(0, prefix.length))).toBe(JSON.stringify(prefix));
    }
    const recorded = await jitEvents(gw, "agent:main:http:dm:reader");
    expect(recorded).toEqual([expect.objectContaining({ rule: "serial-reads", call: 4 })]);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('switchyard_jit_firings_total{rule="serial-reads"} 1');
  });

  it("says what the workspace holds in the turn's environment block", async () => {
    const first = sim.requests.length;
    sim.script({ text: "ok" });
    await gw.chat("env", "hello");
    const user = messagesOf(sim, first).find((m) => m.role === "user");
    expect(text(user)).toContain("# Environment");
    expect(text(user)).toMatch(/Workspace top level: .*AGENTS\.md.*a\.txt/);
  });
});

describe("JIT after /compact", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    const config = simulatorConfig(sim, "openai");
    gw = await startTestGateway({
      ...config,
      agent: { ...config.agent, compaction: { keepRecentTokens: 1_000 } },
    });
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
  });

  it("tells the first call after a compaction to check its notes", async () => {
    for (let i = 1; i <= 4; i++)
      await gw.chat("ann", `note ${i}: ${"the harbour keeps its lamps lit all night. ".repeat(60)}`);
    await gw.chat("ann", "/compact");
    const before = sim.requests.length;
    sim.clearScript();
    const r = await gw.chat("ann", "and now?");
    expect(r.body.state).toBe("answered");
    const turn = messagesOf(sim, sim.requests.length - 1);
    expect(text(turn.at(-1))).toContain("Context was compacted: check PROGRESS.md");
    // Only the turn's own call: the summary and the memory flush before it were not told.
    const told = sim.requests
      .slice(before)
      .filter((q) => JSON.stringify(q.body).includes("Context was compacted"));
    expect(told).toHaveLength(1);
    expect(await jitEvents(gw, "agent:main:http:dm:ann")).toEqual([
      expect.objectContaining({ rule: "after-compaction", call: 1 }),
    ]);
  });
});

describe("agent.jit config", () => {
  it("disable: a named rule stays silent; enabled: false runs none", async () => {
    const sim = new ModelSimulator();
    await sim.start();
    try {
      for (const jit of [{ disable: ["serial-reads"] }, { enabled: false }]) {
        const config = simulatorConfig(sim, "openai");
        const gw = await startTestGateway({ ...config, agent: { ...config.agent, jit } });
        try {
          const first = sim.requests.length;
          scriptSerialReads(sim);
          await gw.chat("quiet", "read");
          const lines = sim.requests.slice(first).filter((q) => JSON.stringify(q.body).includes(SERIAL_LINE));
          expect(lines).toHaveLength(0);
          expect(await jitEvents(gw, "agent:main:http:dm:quiet")).toEqual([]);
        } finally {
          await gw.stop();
        }
      }
    } finally {
      await sim.close();
    }
  });
});
