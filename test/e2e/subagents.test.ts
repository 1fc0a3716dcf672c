/**
 * Sub-agents end to end: a real gateway over the HTTP channel, the real OpenAI SDK against the
 * model simulator, whose responder answers by who is asking (a helper's short prompt, or the
 * parent). A parent spawns helpers and answers at once; its next turn brings every result; each
 * helper saw only its task; limits and the parent's policy hold; /stop ends helpers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator, type ScriptedTurn, type SimulatedRequest } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

type Message = { role: string; content?: unknown; tool_calls?: unknown };
const bodyOf = (r: SimulatedRequest) =>
  r.body as { messages: Message[]; tools?: Array<{ function: { name: string } }> };
const systemOf = (r: SimulatedRequest): string => String(bodyOf(r).messages[0]?.content ?? "");
const isHelper = (r: SimulatedRequest): boolean => systemOf(r).startsWith("You are a helper agent");
const lastUser = (r: SimulatedRequest): string =>
  JSON.stringify([...bodyOf(r).messages].reverse().find((m) => m.role === "user")?.content ?? "");
const toolNames = (r: SimulatedRequest): string[] => (bodyOf(r).tools ?? []).map((t) => t.function.name);

const VENDORS = ["acme", "bolt", "crux", "dyna", "echo"];

/**
 * The parent spawns one helper per vendor when asked to compare, answers at once, and sums up
 * when results arrive; a helper answers with its vendor's price.
 */
function responder(r: SimulatedRequest): ScriptedTurn {
  const asked = lastUser(r);
  if (isHelper(r)) {
    const vendor = VENDORS.find((v) => asked.includes(`price of ${v}`)) ?? "unknown";
    return { text: `${vendor} costs ${VENDORS.indexOf(vendor) + 10} EUR` };
  }
  const last = bodyOf(r).messages.at(-1);
  if (asked.includes("compare the vendors") && last?.role === "user")
    return {
      toolCalls: VENDORS.map((v) => ({
        name: "spawn_agent",
        args: { task: `Find the price of ${v}.`, label: `vendor-${v}` },
      })),
    };
  if (last?.role === "tool") return { text: "I've asked 5 helpers; I'll come back with the comparison." };
  if (asked.includes("[helper ")) {
    // Every result since the parent's last answer (one message each).
    const messages = bodyOf(r).messages;
    const since = messages.slice(messages.map((m) => m.role).lastIndexOf("assistant") + 1);
    const results = (JSON.stringify(since).match(/costs \d+ EUR/g) ?? []).length;
    return { text: `Comparison of ${results} results ready.` };
  }
  return { text: "ok" };
}

describe("sub-agents", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    sim.setDefault(responder);
    gw = await startTestGateway(simulatorConfig(sim, "openai"));
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
  });

  it("a parent spawns 5 helpers, answers at once, and its next turn brings all 5 results", async () => {
    const first = sim.requests.length;
    const r = await gw.chat("ann", "compare the vendors");
    expect(r.body.replies?.[0]?.text).toBe("I've asked 5 helpers; I'll come back with the comparison.");
    const key = "agent:main:http:dm:ann";
    await until(async () => {
      const rows = await gw.running.store.subagents.listForParent(key);
      return rows.length === 5 && rows.every((c) => c.deliveredRunId !== null);
    }, "5 results delivered");
    await until(
      () => sim.requests.slice(first).some((q) => !isHelper(q) && lastUser(q).includes("[helper ")),
      "the parent's wake",
    );
    const helpers = sim.requests.slice(first).filter(isHelper);
    expect(helpers).toHaveLength(5);
    for (const h of helpers) {
      // Each saw only its task: never the person's message, never another vendor.
      const all = JSON.stringify(bodyOf(h).messages);
      expect(all).not.toContain("compare the vendors");
      expect(VENDORS.filter((v) => all.includes(`price of ${v}`))).toHaveLength(1);
      expect(toolNames(h)).not.toContain("memory_write");
    }
    const wakes = sim.requests.slice(first).filter((q) => !isHelper(q) && lastUser(q).includes("[helper "));
    expect(wakes).toHaveLength(1);
    for (const v of VENDORS)
      expect(JSON.stringify(bodyOf(wakes[0] as SimulatedRequest).messages)).toContain(`${v} costs`);
    // The comparison reaches the person's mailbox (the wake's answer).
    await until(async () => {
      const rows = await gw.running.store.outbox.listMailbox("http", "ann", 0, 50);
      return JSON.stringify(rows).includes("Comparison of 5 results ready.");
    }, "the comparison delivered");
    // Committed: the helpers' model calls count against the parent's session, as origin subagent.
    const bySession = await gw.running.store.usage.summarize({ since: 0, by: "session" });
    expect(bySession.map((r) => r.key)).toEqual([key]);
    const byOrigin = await gw.running.store.usage.summarize({ since: 0, by: "origin" });
    expect(byOrigin.find((r) => r.key === "subagent")?.calls).toBe(6); // 5 helpers + the wake
  });
});

/** Opens when `open()` is called: helpers wait at it while a test looks at the fan-out. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open: () => open() };
}

/** A helper's answer once the gate opens. */
function gated(g: ReturnType<typeof gate>, text: string) {
  return async (): Promise<ScriptedTurn> => {
    await g.opened;
    return { text };
  };
}

/** A parent that spawns `n` helpers (with `args`) when told "spawn <n>", then answers "spawned". */
function spawner(
  helper: (r: SimulatedRequest) => Promise<ScriptedTurn> | ScriptedTurn,
  extra: Record<string, unknown> = {},
) {
  return async (r: SimulatedRequest): Promise<ScriptedTurn> => {
    if (isHelper(r)) return helper(r);
    const last = bodyOf(r).messages.at(-1);
    const n = /spawn (\d+)/.exec(lastUser(r))?.[1];
    if (n && last?.role === "user")
      return {
        toolCalls: Array.from({ length: Number(n) }, (_, i) => ({
          name: "spawn_agent",
          args: { task: `Count to ${i + 1}.`, label: `h${i + 1}`, ...extra },
        })),
      };
    if (last?.role === "tool") return { text: "spawned" };
    return { text: lastUser(r).includes("what time") ? "tea time" : "ok" };
  };
}

/** The tool results the parent's second request carried (spawn_agent's answers). */
function spawnResults(sim: ModelSimulator, from: number): string[] {
  const second = sim.requests.slice(from).filter((q) => !isHelper(q))[1];
  return (second ? bodyOf(second).messages : [])
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));
}

describe("sub-agents: limits, policy, /stop, priority and restart", () => {
  let sim: ModelSimulator;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
  });
  afterAll(async () => {
    await sim.close();
  });

  it("refuses the 9th active helper at maxChildrenPerAgent 8 and stops them all with /stop", async () => {
    const g = gate();
    sim.setDefault(spawner(gated(g, "late")));
    const gw = await startTestGateway({ ...simulatorConfig(sim, "openai"), lanes: { maxConcurrent: 12 } });
    try {
      const from = sim.requests.length;
      expect((await gw.chat("lim", "spawn 9")).body.replies?.[0]?.text).toBe("spawned");
      const results = spawnResults(sim, from);
      expect(results.filter((c) => c.startsWith("Started helper"))).toHaveLength(8);
      expect(results.at(-1)).toContain(
        "error (limit): 8 helpers are running (at most 8 at once, subagents.maxChildrenPerAgent)",
      );
      const key = "agent:main:http:dm:lim";
      expect(await gw.running.store.subagents.listForParent(key)).toHaveLength(8);
      const stop = await gw.chat("lim", "/stop");
      expect(stop.body.replies?.[0]?.text).toBe("Stopping 8 helpers.");
      const rows = await gw.running.store.subagents.listForParent(key);
      expect(rows.map((c) => c.state)).toEqual(Array(8).fill("cancelled"));
      g.open();
      // Nothing is delivered for stopped helpers: the parent has no results to be woken with.
      expect(await gw.running.store.subagents.parentsWithResults()).toEqual([]);
    } finally {
      g.open();
      await gw.stop();
    }
  });

  it("nests at most maxDepth deep, and a helper gets only tools its parent is offered", async () => {
    sim.setDefault(async (r) => {
      if (!isHelper(r))
        return spawner(() => ({ text: "x" }), { tools: ["read_file", "spawn_agent", "wait_agents"] })(r);
      const last = bodyOf(r).messages.at(-1);
      // Woken with its own helper's result (it answered before that one ended): done.
      if (last?.role === "tool" || lastUser(r).includes("[helper ")) return { text: "helper done" };
      // Every helper tries to spawn one more, and to write a file its parent was not offered.
      return {
        toolCalls: [
          { name: "spawn_agent", args: { task: "Count to 2." } },
          { name: "write_file", args: { path: "x.txt", content: "no" } },
        ],
      };
    });
    const config = simulatorConfig(sim, "openai");
    const gw = await startTestGateway({
      ...config,
      tools: { byChannel: { http: { deny: ["write_file"] } } },
    });
    try {
      const from = sim.requests.length;
      await gw.chat("deep", "spawn 1");
      await until(async () => {
        const all = await gw.running.store.subagents.listActive();
        return all.length === 0 && sim.requests.slice(from).filter(isHelper).length >= 4;
      }, "helpers at depth 1 and 2 ended");
      const helpers = sim.requests.slice(from).filter(isHelper);
      const depth1 = helpers.find((h) => lastUser(h).includes("Count to 1"));
      const depth2 = helpers.find((h) => lastUser(h).includes("Count to 2"));
      expect(toolNames(depth1 as SimulatedRequest)).toEqual(
        expect.arrayContaining(["read_file", "spawn_agent"]),
      );
      // maxDepth 2: the grandchild is not offered spawn_agent, and its call anyway is refused.
      expect(toolNames(depth2 as SimulatedRequest)).toEqual(["read_file"]);
      const refusals = helpers.map((h) => JSON.stringify(bodyOf(h).messages)).join("\n");
      expect(refusals).toContain(
        "error (denied): spawn_agent is not available here: not given to this helper by its parent",
      );
      expect(refusals).toContain(
        "error (denied): write_file is not available here: not given to this helper by its parent",
      );
      const rows = await gw.running.store.subagents.listForParent("agent:main:http:dm:deep");
      expect(rows[0]?.tools).toEqual(["read_file", "spawn_agent", "wait_agents"]);
    } finally {
      await gw.stop();
    }
  });

  it("answers a person during a 20-helper fan-out before the helpers are through", async () => {
    const g = gate();
    sim.setDefault(spawner(gated(g, "one result")));
    const gw = await startTestGateway({
      ...simulatorConfig(sim, "openai"),
      lanes: { maxConcurrent: 2, reservedForHuman: 1 },
      subagents: { maxChildrenPerAgent: 20 },
    });
    try {
      const from = sim.requests.length;
      await gw.chat("fan", "spawn 20");
      // While 20 helpers wait for model slots, another person asks something.
      const bob = await gw.chat("bob", "what time is it?");
      expect(bob.body.replies?.[0]?.text).toBe("tea time");
      const helpersSoFar = sim.requests.slice(from).filter(isHelper).length;
      expect(helpersSoFar).toBeLessThanOrEqual(2);
      g.open();
    } finally {
      g.open();
      await gw.stop();
    }
  });

  it("after a restart mid-run, the helpers run again and the parent gets every result once", async () => {
    const g = gate();
    sim.setDefault(spawner(gated(g, "too late")));
    const home = mkdtempSync(join(tmpdir(), "sy-sub-restart-"));
    const config = { ...simulatorConfig(sim, "openai"), gateway: { drainTimeoutMs: 100 } };
    try {
      const first = await startTestGateway(config, { home });
      expect((await first.chat("re", "spawn 3")).body.replies?.[0]?.text).toBe("spawned");
      await until(() => sim.requests.filter(isHelper).length >= 3, "3 helpers mid-call");
      // Shutdown interrupts the three helpers mid-call: their runs stay unfinished.
      await first.stop();
      g.open();
      const key = "agent:main:http:dm:re";
      const from = sim.requests.length;
      sim.setDefault(
        spawner((r) => ({
          text: `counted ${/Count to (\d)/.exec(lastUser(r))?.[1] ?? "?"} after the restart`,
        })),
      );
      const second = await startTestGateway(config, { home });
      try {
        await until(async () => {
          const rows = await second.running.store.subagents.listForParent(key);
          return rows.length === 3 && rows.every((c) => c.state === "done" && c.deliveredRunId !== null);
        }, "3 results delivered after the restart");
        await until(
          async () => (await second.running.store.subagents.parentsWithResults()).length === 0,
          "the wake committed",
        );
        const wakes = sim.requests.slice(from).filter((q) => !isHelper(q));
        expect(wakes).toHaveLength(1);
        const seen = JSON.stringify(bodyOf(wakes[0] as SimulatedRequest).messages);
        for (const n of [1, 2, 3]) expect(seen.split(`counted ${n} after the restart`)).toHaveLength(2);
        // Each helper's redo ran from its transcript: its task once, not twice.
        for (const h of sim.requests.slice(from).filter(isHelper))
          expect(JSON.stringify(bodyOf(h).messages).split("Your task").length).toBe(2);
      } finally {
        await second.stop();
      }
    } finally {
      g.open();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
