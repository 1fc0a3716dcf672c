/**
 * What a message does while its session is busy (session.queueMode), and the no-progress
 * watchdog, end to end through the real gateway, SDK and simulator.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

let sim: ModelSimulator | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await sim?.close();
  gw = undefined;
  sim = undefined;
});

/** `clock`: the gateway's clock (the watchdog runs on it); default the system clock. */
async function setup(extra: Record<string, unknown>, clock?: ManualClock) {
  sim = new ModelSimulator();
  await sim.start();
  const base = simulatorConfig(sim, "anthropic");
  gw = await startTestGateway(
    {
      ...base,
      ...extra,
      agent: { ...base.agent, ...((extra.agent as object) ?? {}) },
    },
    clock ? { clock } : {},
  );
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

describe("no-progress watchdog (on the gateway's ManualClock)", () => {
  it("aborts a run that makes no progress and tells the user", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, gw } = await setup({ agent: { progressTimeoutMs: 1_000, toolTimeoutMs: 500 } }, clock);
    sim.script({ hang: true });
    const reply = gw.chat("dee", "are you there?");
    await until(() => sim.requests.length === 1, "the model call");
    clock.advance(999);
    expect(await gw.running.store.inbox.countByState()).toMatchObject({ running: 1, failed: 0 });
    clock.advance(1);
    const r = await reply;
    expect(r.body.state).toBe("failed");
    expect(r.body.replies?.[0]?.text).toBe(
      "⚠️ Sorry, I couldn't answer: the turn made no progress for 1 s and was stopped.",
    );
    expect((await gw.running.store.runs.recent(1))[0]?.outcome).toBe("timeout");
  });

  it("never kills a run that keeps streaming, however long it takes", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, gw } = await setup({ agent: { progressTimeoutMs: 300, toolTimeoutMs: 200 } }, clock);
    // 40 chunks of 16 characters. Each time the client sees text arrive (the run called
    // progress() before passing it on) 250 ms pass: the run lasts many timeouts, but is never
    // 300 ms without a token. Real time between chunks only keeps the client's reads apart.
    sim.script({ text: "x".repeat(640), chunkDelayMs: 10 });
    const startedAt = clock.now();
    const res = await fetch(`${gw.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ sender: "eli", text: "take your time" }),
    });
    let body = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body ?? []) {
      const text = decoder.decode(chunk, { stream: true });
      body += text;
      if (text.includes("event: delta")) clock.advance(250);
    }
    expect(body).toMatch(/event: done\ndata: .*"state":"answered"/);
    const deltas = [...body.matchAll(/event: delta\ndata: (.*)\n/g)].map(
      (m) => (JSON.parse(m[1] ?? "{}") as { text: string }).text,
    );
    expect(deltas.join("")).toBe("x".repeat(640));
    expect(clock.now() - startedAt).toBeGreaterThan(3 * 300);
  });
});
