/**
 * Nested helpers end to end: a helper that starts helpers of its own and answers without
 * waiting for them is not done. Their results come to it as its next turn, and only the answer
 * after the last of them ends goes to its parent, once. A helper that fails takes its own
 * helpers with it. A helper's spawns count across its runs (subagents.maxPerRun), so a helper
 * that spawns again on every wake cannot go on for ever.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator, type ScriptedTurn, type SimulatedRequest } from "../fakes/model-simulator.js";
import { simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

type Message = { role: string; content?: unknown };
const messagesOf = (r: SimulatedRequest) => (r.body as { messages: Message[] }).messages;
const systemOf = (r: SimulatedRequest): string => String(messagesOf(r)[0]?.content ?? "");
const isHelper = (r: SimulatedRequest): boolean => systemOf(r).startsWith("You are a helper agent");
const lastUser = (r: SimulatedRequest): string =>
  JSON.stringify([...messagesOf(r)].reverse().find((m) => m.role === "user")?.content ?? "");
const firstUser = (r: SimulatedRequest): string =>
  JSON.stringify(messagesOf(r).find((m) => m.role === "user")?.content ?? "");
const lastRole = (r: SimulatedRequest): string | undefined => messagesOf(r).at(-1)?.role;

const PARENT = "agent:main:http:dm:ann";

/**
 * The person's agent asks one "lead" helper to count the fruit; the lead splits the work over
 * two helpers and answers at once ("asked 2"); each fruit helper counts; the lead, woken with
 * both counts, adds them up; the parent, woken with the lead's result, reports it.
 */
function responder(r: SimulatedRequest): ScriptedTurn {
  if (!isHelper(r)) {
    if (lastUser(r).includes("count the fruit") && lastRole(r) === "user")
      return {
        toolCalls: [{ name: "spawn_agent", args: { task: "Lead: count all fruit.", label: "lead" } }],
      };
    if (lastRole(r) === "tool") return { text: "On it." };
    const result = /total \d+ fruit from \d+ counts|asked \d+ helpers/.exec(lastUser(r))?.[0] ?? "nothing";
    return { text: `The lead says: ${result}` };
  }
  const task = firstUser(r);
  if (task.includes("Lead:")) {
    if (lastRole(r) === "user" && !lastUser(r).includes("[helper "))
      return {
        toolCalls: ["apples", "pears"].map((f) => ({
          name: "spawn_agent",
          args: { task: `Count the ${f}.`, label: f },
        })),
      };
    if (lastRole(r) === "tool") return { text: "asked 2 helpers" };
    const counts = [...JSON.stringify(messagesOf(r)).matchAll(/(\d+) (apples|pears)/g)].map((m) =>
      Number(m[1]),
    );
    return { text: `total ${counts.reduce((a, b) => a + b, 0)} fruit from ${counts.length} counts` };
  }
  if (task.includes("apples")) return { text: "3 apples" };
  return { text: "4 pears" };
}

describe("sub-agents: nested helpers", () => {
  let sim: ModelSimulator;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
  });
  afterAll(async () => {
    await sim.close();
  });

  it("a helper that answered before its own helpers ended gets their results, and only its last answer reaches its parent", async () => {
    sim.setDefault(responder);
    const gw = await startTestGateway({
      ...simulatorConfig(sim, "openai"),
      tools: { byChannel: { http: { allow: ["read_file", "spawn_agent", "wait_agents"] } } },
    });
    try {
      const from = sim.requests.length;
      expect((await gw.chat("ann", "count the fruit")).body.replies?.[0]?.text).toBe("On it.");
      await until(async () => {
        const rows = await gw.running.store.outbox.listMailbox("http", "ann", 0, 50);
        return JSON.stringify(rows).includes("The lead says:");
      }, "the parent's report");
      const [lead] = await gw.running.store.subagents.listForParent(PARENT);
      expect(lead).toMatchObject({ label: "lead", state: "done", result: "total 7 fruit from 2 counts" });
      const fruit = await gw.running.store.subagents.listForParent(lead?.childSessionKey ?? "");
      expect(fruit.map((c) => [c.label, c.state, c.result])).toEqual([
        ["apples", "done", "3 apples"],
        ["pears", "done", "4 pears"],
      ]);
      expect(fruit.every((c) => c.deliveredRunId !== null)).toBe(true);
      expect(await gw.running.store.subagents.parentsWithResults()).toEqual([]);
      // The parent was woken once, with the lead's final answer, never its "asked 2 helpers".
      const wakes = sim.requests.slice(from).filter((q) => !isHelper(q) && lastUser(q).includes("[helper "));
      expect(wakes).toHaveLength(1);
      expect(JSON.stringify(messagesOf(wakes[0] as SimulatedRequest))).not.toContain("asked 2 helpers");
      const rows = await gw.running.store.outbox.listMailbox("http", "ann", 0, 50);
      expect(JSON.stringify(rows)).toContain("The lead says: total 7 fruit from 2 counts");
      // The lead ran twice: its task, then the wake with both counts (one turn for both).
      const leadCalls = sim.requests.slice(from).filter((q) => isHelper(q) && firstUser(q).includes("Lead:"));
      expect(leadCalls.map(lastRole)).toEqual(["user", "tool", "user"]);
    } finally {
      await gw.stop();
    }
  });

  it("a helper that fails stops its own helpers; a helper's spawns count across its runs", async () => {
    let leadRuns = 0;
    sim.setDefault((r) => {
      if (!isHelper(r)) return responder(r);
      const task = firstUser(r);
      if (task.includes("Lead:")) {
        if (lastRole(r) === "tool") return { text: "asked one more" };
        leadRuns++;
        // Spawns on every run, woken or not: maxPerRun 3 ends it.
        return { toolCalls: [{ name: "spawn_agent", args: { task: `Count the apples (${leadRuns}).` } }] };
      }
      return { text: "3 apples" };
    });
    const gw = await startTestGateway({
      ...simulatorConfig(sim, "openai"),
      tools: { byChannel: { http: { allow: ["read_file", "spawn_agent", "wait_agents"] } } },
      subagents: { maxPerRun: 3 },
    });
    try {
      await gw.chat("ann", "count the fruit");
      await until(async () => {
        const [lead] = await gw.running.store.subagents.listForParent(PARENT);
        return lead?.state === "done";
      }, "the lead done");
      const [lead] = await gw.running.store.subagents.listForParent(PARENT);
      const own = await gw.running.store.subagents.listForParent(lead?.childSessionKey ?? "");
      expect(own).toHaveLength(3);
      const leadCalls = sim.requests.filter((q) => isHelper(q) && firstUser(q).includes("Lead:"));
      const refusals = leadCalls.map((q) => JSON.stringify(messagesOf(q))).join("\n");
      expect(refusals).toContain(
        "error (limit): this helper started 3 helpers already (at most 3, subagents.maxPerRun)",
      );
    } finally {
      await gw.stop();
    }

    // Failure: the lead's second model call fails for good; its waiting helper is cancelled.
    let open = () => {};
    const gateOpen = new Promise<void>((r) => {
      open = r;
    });
    sim.setDefault(async (r) => {
      if (!isHelper(r)) return responder(r);
      if (firstUser(r).includes("Lead:")) {
        if (lastRole(r) === "tool") return { error: { status: 400, message: "bad request" } };
        return { toolCalls: [{ name: "spawn_agent", args: { task: "Count the apples.", label: "apples" } }] };
      }
      await gateOpen;
      return { text: "3 apples" };
    });
    const gw2 = await startTestGateway({
      ...simulatorConfig(sim, "openai"),
      tools: { byChannel: { http: { allow: ["read_file", "spawn_agent", "wait_agents"] } } },
    });
    try {
      await gw2.chat("bob", "count the fruit");
      const parent = "agent:main:http:dm:bob";
      await until(async () => {
        const [lead] = await gw2.running.store.subagents.listForParent(parent);
        if (lead?.state !== "failed") return false;
        const [apples] = await gw2.running.store.subagents.listForParent(lead.childSessionKey);
        return apples?.state === "cancelled";
      }, "the lead failed and its helper cancelled");
      const [lead] = await gw2.running.store.subagents.listForParent(parent);
      const [apples] = await gw2.running.store.subagents.listForParent(lead?.childSessionKey ?? "");
      expect(apples?.error).toBe("the helper that started it ended");
      open();
    } finally {
      open();
      await gw2.stop();
    }
  });
});
