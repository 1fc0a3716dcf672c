/**
 * wait_agents and spawn_agent's refusals end to end (HTTP channel, model simulator, a ManualClock
 * for the wait's deadline): a parent that waits ends its turn without an answer and is woken with
 * the result when the helper ends, or at the timeout with what is still running; bad spawns are
 * refused with a reason and start nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator, type ScriptedTurn, type SimulatedRequest } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

type Message = { role: string; content?: unknown };
const messagesOf = (r: SimulatedRequest): Message[] => (r.body as { messages: Message[] }).messages;
const text = (r: SimulatedRequest): string => JSON.stringify(messagesOf(r));
const isHelper = (r: SimulatedRequest): boolean =>
  String(messagesOf(r)[0]?.content ?? "").startsWith("You are a helper agent");

describe("wait_agents and bad spawns", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  let clock: ManualClock;
  let release = () => {};
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    clock = new ManualClock(Date.now());
    gw = await startTestGateway(simulatorConfig(sim, "openai"), { clock });
  });
  afterAll(async () => {
    release();
    await gw.stop();
    await sim.close();
  });

  it("refuses an empty task, an oversized one, a model not in the chain and a tool not offered", async () => {
    sim.setDefault((r): ScriptedTurn => {
      if (messagesOf(r).at(-1)?.role === "tool") return { text: "refused" };
      return {
        toolCalls: [
          { name: "spawn_agent", args: { task: "   " } },
          { name: "spawn_agent", args: { task: "x".repeat(200_000) } },
          { name: "spawn_agent", args: { task: "ok", model: "openai/not-in-chain" } },
          { name: "spawn_agent", args: { task: "ok", tools: ["exec"] } },
        ],
      };
    });
    await gw.chat("bad", "spawn badly");
    const results = text(sim.requests.at(-1) as SimulatedRequest);
    expect(results).toContain("error (invalid_arguments): task is empty");
    expect(results).toContain(
      "error (invalid_arguments): task and context are 200000 characters; at most 20000",
    );
    expect(results).toContain(
      "error (invalid_arguments): model openai/not-in-chain is not in the chain (openai/gpt-test)",
    );
    expect(results).toContain("error (denied): not offered to you, so not to a helper: exec");
    expect(await gw.running.store.subagents.listForParent("agent:main:http:dm:bad")).toEqual([]);
  });

  it("waits: the turn ends without an answer, and the helper's end (or the timeout) wakes it", async () => {
    const gate = new Promise<void>((r) => {
      release = r;
    });
    sim.setDefault(async (r): Promise<ScriptedTurn> => {
      const t = text(r);
      if (isHelper(r)) {
        if (t.includes("slow")) await gate;
        return { text: t.includes("slow") ? "slow one done" : "quick one done" };
      }
      if (t.includes("[helper ") || t.includes("timed out"))
        return { text: `woken: ${t.includes("timed out") ? "timeout" : "results"}` };
      const last = messagesOf(r).at(-1);
      if (last?.role === "tool" && t.includes("Started helper") && !t.includes("Waiting for"))
        return { toolCalls: [{ name: "wait_agents", args: { timeoutSec: 30 } }] };
      return {
        toolCalls: [
          { name: "spawn_agent", args: { task: "The slow task.", label: "slow" } },
          { name: "spawn_agent", args: { task: "The quick task.", label: "quick" } },
        ],
      };
    });
    const r = await gw.chat("wai", "do two things");
    // The turn waited: no answer now.
    expect(r.body.replies ?? []).toEqual([]);
    const key = "agent:main:http:dm:wai";
    await until(
      async () => (await gw.running.store.subagents.listForParent(key)).some((c) => c.state === "done"),
      "quick done",
    );
    // The deadline passes with the slow helper still running: the parent is woken and told.
    const before = sim.requests.length;
    // advanceAsync: the lease renewals due meanwhile complete between the timers.
    await clock.advanceAsync(30_000);
    await until(
      () => sim.requests.slice(before).some((q) => !isHelper(q) && text(q).includes("timed out")),
      "timeout wake",
    );
    const wake = sim.requests.slice(before).find((q) => !isHelper(q)) as SimulatedRequest;
    expect(text(wake)).toMatch(/Still running: sub_\w+ \\"slow\\"/);
    expect(text(wake)).toContain("quick one done");
    // Then the slow one ends: its result comes as one more wake.
    release();
    await until(async () => {
      const rows = await gw.running.store.subagents.listForParent(key);
      return (
        rows.every((c) => c.deliveredRunId !== null) &&
        (await gw.running.store.subagents.parentsWithResults()).length === 0
      );
    }, "the slow result delivered");
    expect(sim.requests.some((q) => !isHelper(q) && text(q).includes("slow one done"))).toBe(true);
  });
});
