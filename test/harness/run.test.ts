/**
 * runAgent inside a real LaneQueue + GlobalLane, through the real Anthropic SDK against the
 * model simulator: slots are held only while a model call is in flight (not while a provider
 * waits to retry, not while tools run), the tool-call budget bounds the model calls, and tool
 * work counts as progress.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { GlobalLane } from "../../src/gateway/lanes/global-lane.js";
import { LaneQueue } from "../../src/gateway/lanes/lane-queue.js";
import { AnthropicProvider } from "../../src/harness/providers/anthropic.js";
import { ModelRouter } from "../../src/harness/models/model-router.js";
import type { ModelProvider } from "../../src/harness/providers/types.js";
import type { ProviderError } from "../../src/harness/providers/provider-error.js";
import {
  type AgentRunOptions,
  type AgentRunResult,
  ToolLimitError,
  runAgent,
} from "../../src/harness/run.js";
import { ToolRegistry } from "../../src/harness/tools/registry.js";
import type { TranscriptPayload } from "../../src/store/repos/transcript-repo.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { ModelSimulator, defaultResponder } from "../fakes/model-simulator.js";
import { until } from "../helpers/until.js";

let sim: ModelSimulator;
beforeAll(async () => {
  sim = new ModelSimulator();
  await sim.start();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.clearScript();
  sim.requests.length = 0;
});

function anthropic(): AnthropicProvider {
  return new AnthropicProvider({ apiKey: "sk-ant-test", baseUrl: sim.url });
}

interface Harness {
  pool: GlobalLane;
  lanes: LaneQueue;
  appended: TranscriptPayload[];
  providerErrors: ProviderError[];
  run(
    options: Partial<AgentRunOptions> & { provider: ModelProvider; clock?: ManualClock },
  ): Promise<AgentRunResult>;
}

function harness(tools = new ToolRegistry()): Harness {
  const pool = new GlobalLane({ maxConcurrent: 1, reservedForHuman: 0 });
  const lanes = new LaneQueue({ pool });
  const appended: TranscriptPayload[] = [];
  const providerErrors: ProviderError[] = [];
  return {
    pool,
    lanes,
    appended,
    providerErrors,
    run: ({ provider, clock, ...options }) =>
      lanes.enqueue({
        sessionKey: "s1",
        priority: "human",
        origin: "user",
        run: (lane) =>
          runAgent({
            runId: "run-1",
            sessionKey: "s1",
            router: ModelRouter.single(provider, "claude-test", clock ? { clock } : {}),
            turn: { sessionKey: "s1", sessionId: "ses-1", runId: "run-1", trigger: "message" },
            system: "You are a test.",
            messages: [{ role: "user", content: "hello" }],
            tools,
            workspaceDir: "/nonexistent",
            maxTokens: 256,
            maxToolCallsPerRun: 50,
            lane,
            logger: silentLogger(),
            append: async (payloads) => void appended.push(...payloads),
            onProviderError: (error) => void providerErrors.push(error),
            ...options,
          }),
      }).done,
  };
}

describe("runAgent", () => {
  it("gives its model slot back while the router waits for the cooling profile, and takes one before the retry", async () => {
    const h = harness();
    const clock = new ManualClock();
    sim.script({ error: { status: 429, retryAfterSeconds: 30 } }, { text: "after the wait" });
    const running = h.run({ provider: anthropic(), clock });
    await until(() => clock.pendingTimers === 1, "the router waiting for the profile to cool down");
    expect(h.pool.inUse).toBe(0);
    clock.advance(30_000);
    const result = await running;
    expect(result.outcome).toBe("answered");
    expect(result.final?.text).toBe("after the wait");
    expect(h.pool.inUse).toBe(0);
    expect(result.modelCalls).toBe(2);
    // The absorbed 429 is still reported (metrics count it).
    expect(h.providerErrors.map((e) => e.kind)).toEqual(["rate_limit"]);
  });

  it("tells the person once, in one line, when it must wait more than 10 s for a cooling key", async () => {
    const h = harness();
    const clock = new ManualClock();
    const notices: string[] = [];
    sim.script({ error: { status: 429, retryAfterSeconds: 30 } }, { text: "after the wait" });
    const running = h.run({ provider: anthropic(), clock, onNotice: (text) => void notices.push(text) });
    await until(() => clock.pendingTimers === 1, "the router waiting for the profile to cool down");
    expect(notices).toEqual([
      "⏳ Every model key is busy or cooling down (rate limit); I'll answer in about 30 s.",
    ]);
    clock.advance(30_000);
    expect((await running).final?.text).toBe("after the wait");
    expect(notices).toHaveLength(1);
  });

  it("lets another session's call through while a retry waits", async () => {
    const h = harness();
    const clock = new ManualClock();
    sim.script({ error: { status: 529 } }, { text: "first" }, { text: "second" });
    const first = h.run({ provider: anthropic(), clock });
    await until(() => clock.pendingTimers === 1, "the router waiting for the profile to cool down");
    // With one slot in total, a second session can only call if the first gave its slot back.
    const other = h.lanes.enqueue({
      sessionKey: "s2",
      priority: "human",
      origin: "user",
      run: async (lane) => {
        const lease = await lane.acquireModelSlot();
        lease.release();
        return "got a slot";
      },
    }).done;
    await expect(other).resolves.toBe("got a slot");
    expect(sim.requests).toHaveLength(1); // the retry still waits
    clock.advance(30_000); // an overloaded profile rests 30 s
    expect((await first).outcome).toBe("answered");
  });

  it("bounds model calls when the model keeps calling tools after the budget is spent", async () => {
    const tools = new ToolRegistry();
    let toolRuns = 0;
    tools.register({
      name: "ping",
      description: "ping",
      groups: [],
      parameters: z.strictObject({}),
      run: async () => {
        toolRuns++;
        return { content: "pong" };
      },
    });
    const h = harness(tools);
    sim.setDefault(() => ({ toolCalls: [{ name: "ping", args: {} }] }));
    try {
      const result = await h.run({ provider: anthropic(), maxToolCallsPerRun: 2 });
      expect(toolRuns).toBe(2);
      // Two calls within the budget, then one without tools; it called tools anyway: the end.
      expect(result.modelCalls).toBe(3);
      expect(result.outcome).toBe("failed");
      expect(result.error).toBeInstanceOf(ToolLimitError);
      const last = sim.requests.at(-1)?.body as { tools?: unknown[] };
      expect(last.tools ?? []).toEqual([]);
    } finally {
      sim.setDefault(defaultResponder);
    }
  });

  it("answers with the text the model gave alongside tool calls it made after the budget", async () => {
    const tools = new ToolRegistry();
    tools.register({
      name: "ping",
      description: "ping",
      groups: [],
      parameters: z.strictObject({}),
      run: async () => ({ content: "pong" }),
    });
    const h = harness(tools);
    sim.script(
      { toolCalls: [{ name: "ping", args: {} }] },
      { text: "Here is what I found.", toolCalls: [{ name: "ping", args: {} }] },
    );
    const result = await h.run({ provider: anthropic(), maxToolCallsPerRun: 1 });
    expect(result.outcome).toBe("answered");
    expect(result.final).toEqual({ type: "assistant", text: "Here is what I found.", toolCalls: [] });
    expect(result.modelCalls).toBe(2);
  });

  it("/stop reaches a running tool through its signal, and the run ends aborted", async () => {
    const tools = new ToolRegistry();
    const h = harness(tools);
    let toolSawAbort = false;
    let started: () => void = () => {};
    const toolStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    tools.register({
      name: "slow",
      description: "waits until aborted",
      groups: [],
      parameters: z.strictObject({}),
      run: (_args, ctx) =>
        new Promise((resolve) => {
          started();
          ctx.signal.addEventListener("abort", () => {
            toolSawAbort = true;
            resolve({ content: "stopped", isError: true });
          });
        }),
    });
    sim.script({ toolCalls: [{ name: "slow", args: {} }] });
    const run = h.run({ provider: anthropic() });
    await toolStarted;
    expect(h.lanes.abortRunning("s1", "user_stop")).toBe(true);
    const result = await run;
    expect(result.outcome).toBe("aborted");
    expect(result.error).toMatchObject({ reason: "user_stop" });
    expect(toolSawAbort).toBe(true);
    expect(sim.requests).toHaveLength(1); // no model call after the stop
  });

  it("holds no slot while its tools run", async () => {
    const tools = new ToolRegistry();
    const h = harness(tools);
    const slotsDuringTool: number[] = [];
    tools.register({
      name: "look",
      description: "look",
      groups: [],
      parameters: z.strictObject({}),
      run: async () => {
        slotsDuringTool.push(h.pool.inUse);
        return { content: "seen" };
      },
    });
    sim.script({ toolCalls: [{ name: "look", args: {} }] }, { text: "done" });
    const result = await h.run({ provider: anthropic() });
    expect(result.outcome).toBe("answered");
    expect(slotsDuringTool).toEqual([0]);
    expect(h.appended.map((p) => p.type)).toEqual(["assistant", "tool_result"]);
  });

  it("answerBefore answers without a model call (afterAnswer runs first) or goes on with its context", async () => {
    const h = harness();
    const answered: string[] = [];
    const early = await h.run({
      provider: anthropic(),
      hooks: {
        answerBefore: async () => ({ answer: "closed today" }),
        afterAnswer: async (answer) => void answered.push(answer),
      },
    });
    expect(early.outcome).toBe("answered");
    expect(early.final?.text).toBe("closed today");
    expect(early.modelCalls).toBe(0);
    expect(sim.requests).toHaveLength(0);
    expect(answered).toEqual(["closed today"]);

    sim.script({ text: "noted" });
    const noted = await h.run({
      provider: anthropic(),
      hooks: {
        answerBefore: async (ctx) => ({
          context: { ...ctx, messages: [{ role: "user", content: "hello\n\n[hook] a note" }] },
        }),
        afterAnswer: async (answer) => void answered.push(answer),
      },
    });
    expect(noted.final?.text).toBe("noted");
    expect(JSON.stringify(sim.requests[0]?.body)).toContain("[hook] a note");
    expect(answered).toEqual(["closed today", "noted"]);
  });
});
