/**
 * What a message does while its session is busy (session.queueMode), and the no-progress
 * watchdog, end to end through the real gateway, SDK and simulator.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

let sim: ModelSimulator | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await sim?.close();
  gw = undefined;
  sim = undefined;
});

async function setup(extra: Record<string, unknown>) {
  sim = new ModelSimulator();
  await sim.start();
  const base = simulatorConfig(sim, "anthropic");
  gw = await startTestGateway({
    ...base,
    ...extra,
    agent: { ...base.agent, ...((extra.agent as object) ?? {}) },
  });
  return { sim, gw };
}

const bodyOf = (s: ModelSimulator, i: number) => JSON.stringify(s.requests[i]?.body);

describe("queue modes", () => {
  it("followup: each message waits for its own turn and sees the earlier answer", async () => {
    const { sim, gw } = await setup({ session: { queueMode: "followup" } });
    sim.script({ text: "first answer, slowly streamed", chunkDelayMs: 20 }, { text: "second answer" });
    const first = gw.chat("ann", "message one");
    await sim.waitForRequests(1, 5_000);
    const second = gw.chat("ann", "message two");
    expect((await first).body.replies?.[0]?.text).toBe("first answer, slowly streamed");
    expect((await second).body.replies?.[0]?.text).toBe("second answer");
    expect(sim.requests).toHaveLength(2);
    expect(bodyOf(sim, 1)).toContain("first answer, slowly streamed");
    expect(bodyOf(sim, 1)).toContain("message two");
    expect(bodyOf(sim, 0)).not.toContain("message two");
  });

  it("followup: a message that arrives during a tool turn is not injected into it", async () => {
    const { sim, gw } = await setup({ session: { queueMode: "followup" } });
    sim.script(
      { toolCalls: [{ name: "list_files", args: {} }], chunkDelayMs: 80 },
      { text: "listed" },
      { text: "second answer" },
    );
    const first = gw.chat("ann", "list my files");
    await sim.waitForRequests(1, 5_000);
    const second = gw.chat("ann", "message two");
    expect((await first).body.replies?.[0]?.text).toBe("listed");
    expect((await second).body.replies?.[0]?.text).toBe("second answer");
    expect(bodyOf(sim, 1)).not.toContain("message two");
    expect(bodyOf(sim, 2)).toContain("message two");
  });

  it("collect: messages that arrive while busy become one turn", async () => {
    const { sim, gw } = await setup({ session: { queueMode: "collect" } });
    sim.script({ text: "answer to one", chunkDelayMs: 30 }, { text: "answer to two and three" });
    const one = gw.chat("bob", "message one");
    await sim.waitForRequests(1, 5_000);
    const two = gw.chat("bob", "message two");
    const three = gw.chat("bob", "message three");
    expect((await one).body.replies?.[0]?.text).toBe("answer to one");
    expect((await two).body.replies?.[0]?.text).toBe("answer to two and three");
    expect((await three).body.replies?.[0]?.text).toBe("answer to two and three");
    expect(sim.requests).toHaveLength(2);
    expect(bodyOf(sim, 1)).toContain("message two");
    expect(bodyOf(sim, 1)).toContain("message three");
  });

  it("steer: a message that arrives mid-run is injected at the next tool boundary", async () => {
    const { sim, gw } = await setup({ session: { queueMode: "steer" } });
    sim.script(
      { toolCalls: [{ name: "list_files", args: {} }], chunkDelayMs: 80 },
      { text: "done, and I saw your correction" },
    );
    const one = gw.chat("cy", "list my files");
    await sim.waitForRequests(1, 5_000);
    const two = gw.chat("cy", "actually, only markdown files");
    expect((await one).body.replies?.[0]?.text).toBe("done, and I saw your correction");
    expect((await two).body.replies?.[0]?.text).toBe("done, and I saw your correction");
    expect(sim.requests).toHaveLength(2);
    const second = bodyOf(sim, 1);
    // The correction follows the tool result in the same turn.
    expect(second.indexOf("tool_result")).toBeLessThan(second.indexOf("only markdown files"));
  });
});

describe("no-progress watchdog", () => {
  it("aborts a run that makes no progress and tells the user", async () => {
    const { sim, gw } = await setup({ agent: { progressTimeoutMs: 1_000, toolTimeoutMs: 500 } });
    sim.script({ hang: true });
    const r = await gw.chat("dee", "are you there?");
    expect(r.body.state).toBe("failed");
    expect(r.body.replies?.[0]?.text).toBe(
      "⚠️ Sorry, I couldn't answer: the turn made no progress for 1 s and was stopped.",
    );
    expect((await gw.running.store.runs.recent(1))[0]?.outcome).toBe("timeout");
  });

  it("never kills a run that keeps streaming, however long it takes", async () => {
    const { sim, gw } = await setup({ agent: { progressTimeoutMs: 300, toolTimeoutMs: 200 } });
    // 40 chunks (16 characters each) 60 ms apart: 2.4 s in all, 8× the timeout, but never 300 ms without a token.
    sim.script({ text: "x".repeat(640), chunkDelayMs: 60 });
    const r = await gw.chat("eli", "take your time");
    expect(r.body.state).toBe("answered");
    expect(r.body.replies?.[0]?.text).toBe("x".repeat(640));
  });
});
