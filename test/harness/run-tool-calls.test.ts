/**
 * Parallel tool calls through runAgent (harness/run-tool-calls.ts): a scripted provider (no
 * SDK) asks for several calls in one turn; the tools are gated by latches the test opens, so
 * overlap and order are shown by state, never by timing.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { TurnHooks } from "../../src/harness/hooks.js";
import { ModelRouter } from "../../src/harness/models/model-router.js";
import type {
  ModelProvider,
  ModelRequest,
  ProviderEvent,
  ToolCall,
} from "../../src/harness/providers/types.js";
import { type AgentRunOptions, type AgentRunResult, runAgent } from "../../src/harness/run.js";
import { ToolRegistry } from "../../src/harness/tools/registry.js";
import type { TranscriptPayload } from "../../src/store/repos/transcript-repo.js";
import { silentLogger } from "../../src/util/logger.js";
import { until } from "../helpers/until.js";

/** Answers each model call with the next scripted turn; "done" once the script is spent. */
class ScriptedProvider implements ModelProvider {
  readonly id = "scripted";
  readonly simulated = false;
  readonly requests: ModelRequest[] = [];
  constructor(readonly script: Array<ProviderEvent[]>) {}
  async *stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    yield* this.script.shift() ?? [
      { type: "text_delta", text: "done" },
      { type: "stop", reason: "end_turn" },
    ];
  }
}

/** One model turn calling `calls` ([tool, id] pairs), in that order. */
function turn(...calls: Array<[name: string, id: string]>): ProviderEvent[] {
  return [
    ...calls.map(
      ([name, id]): ProviderEvent => ({
        type: "tool_call",
        call: { id, name, argumentsJson: JSON.stringify({ id }) },
      }),
    ),
    { type: "stop", reason: "tool_use" },
  ];
}

/** A promise the test resolves. */
function latch(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * Tools named `names` (any name, e.g. read_file) whose call with `{ id }` logs `start <id>`,
 * waits for the test to open its gate (gated ids only), then logs `end <id>` and returns
 * `result of <id>`. `inFlight` and `maxInFlight` count calls between start and end.
 */
function gatedTools(names: string[], gated: ReadonlySet<string>) {
  const log: string[] = [];
  const gates = new Map<string, ReturnType<typeof latch>>();
  const state = { inFlight: 0, maxInFlight: 0 };
  const tools = new ToolRegistry();
  for (const name of names) {
    tools.register({
      name,
      description: name,
      groups: [],
      parameters: z.strictObject({ id: z.string() }),
      run: async (args) => {
        const id = String(args.id);
        log.push(`start ${id}`);
        state.inFlight++;
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
        if (gated.has(id)) {
          const gate = gates.get(id) ?? latch();
          gates.set(id, gate);
          await gate.promise;
        }
        state.inFlight--;
        log.push(`end ${id}`);
        return { content: `result of ${id}` };
      },
    });
  }
  const open = (id: string) => {
    const gate = gates.get(id) ?? latch();
    gates.set(id, gate);
    gate.open();
  };
  return { tools, log, state, open, started: (id: string) => log.includes(`start ${id}`) };
}

interface Ran {
  result: Promise<AgentRunResult>;
  appended: TranscriptPayload[];
}

function run(
  provider: ScriptedProvider,
  tools: ToolRegistry,
  options: Partial<AgentRunOptions> & { signal?: AbortSignal } = {},
): Ran {
  const appended: TranscriptPayload[] = [];
  const { signal, ...rest } = options;
  const result = runAgent({
    runId: "run-1",
    sessionKey: "s1",
    router: ModelRouter.single(provider, "model-a", {}),
    turn: { sessionKey: "s1", sessionId: "ses-1", runId: "run-1", trigger: "message" },
    system: "You are a test.",
    messages: [{ role: "user", content: "hello" }],
    tools,
    workspaceDir: "/nonexistent",
    maxTokens: 100,
    maxToolCallsPerRun: 50,
    lane: {
      signal: signal ?? new AbortController().signal,
      progress: () => {},
      acquireModelSlot: async () => ({ release: () => {} }),
    },
    logger: silentLogger(),
    append: async (payloads) => void appended.push(...payloads),
    ...rest,
  });
  return { result, appended };
}

/** The tool results as the transcript holds them: `<id>: <content>`. */
function recorded(appended: TranscriptPayload[]): string[] {
  return appended.flatMap((p) => (p.type === "tool_result" ? [`${p.toolCallId}: ${p.content}`] : []));
}

/** The tool results the model was sent in request `n`, in order. */
function sent(provider: ScriptedProvider, n: number): string[] {
  return (provider.requests[n]?.messages ?? []).flatMap((m) =>
    m.role === "tool" ? [`${m.toolCallId}: ${m.content}`] : [],
  );
}

describe("parallel tool calls", () => {
  it("runs three reads at once; finishing in reverse, their results still go in call order", async () => {
    const t = gatedTools(["read_file"], new Set(["r1", "r2", "r3"]));
    const provider = new ScriptedProvider([
      turn(["read_file", "r1"], ["read_file", "r2"], ["read_file", "r3"]),
    ]);
    const { result, appended } = run(provider, t.tools);
    // All three started while none could finish: they overlap.
    await until(() => t.started("r1") && t.started("r2") && t.started("r3"), "three reads in flight");
    t.open("r3");
    await until(() => t.log.includes("end r3"), "r3 finished");
    t.open("r2");
    await until(() => t.log.includes("end r2"), "r2 finished");
    t.open("r1");
    expect((await result).outcome).toBe("answered");
    expect(t.log.filter((l) => l.startsWith("end"))).toEqual(["end r3", "end r2", "end r1"]);
    const inOrder = ["r1: result of r1", "r2: result of r2", "r3: result of r3"];
    expect(sent(provider, 1)).toEqual(inOrder);
    expect(recorded(appended)).toEqual(inOrder);
    expect(appended.map((p) => p.type)).toEqual(["assistant", "tool_result", "tool_result", "tool_result"]);
  });

  it("a write is a barrier: it starts after the reads before it, and the read after it waits for it", async () => {
    const t = gatedTools(["read_file", "write_file"], new Set(["r1", "r2", "w"]));
    const provider = new ScriptedProvider([
      turn(["read_file", "r1"], ["read_file", "r2"], ["write_file", "w"], ["read_file", "r3"]),
    ]);
    const { result, appended } = run(provider, t.tools);
    await until(() => t.started("r1") && t.started("r2"), "the reads before the write in flight");
    expect(t.started("w")).toBe(false);
    t.open("r2");
    await until(() => t.log.includes("end r2"), "r2 finished");
    expect(t.started("w")).toBe(false); // r1 still runs
    t.open("r1");
    await until(() => t.started("w"), "the write started");
    expect(t.started("r3")).toBe(false);
    t.open("w");
    expect((await result).outcome).toBe("answered");
    expect(t.log).toEqual([
      "start r1",
      "start r2",
      "end r2",
      "end r1",
      "start w",
      "end w",
      "start r3",
      "end r3",
    ]);
    expect(recorded(appended)).toEqual([
      "r1: result of r1",
      "r2: result of r2",
      "w: result of w",
      "r3: result of r3",
    ]);
  });

  it("maxParallelTools 1 runs the reads one after another", async () => {
    const t = gatedTools(["read_file"], new Set(["r1", "r2", "r3"]));
    const provider = new ScriptedProvider([
      turn(["read_file", "r1"], ["read_file", "r2"], ["read_file", "r3"]),
    ]);
    const { result } = run(provider, t.tools, { maxParallelTools: 1 });
    for (const id of ["r1", "r2", "r3"]) {
      await until(() => t.started(id), `${id} started`);
      expect(t.state.inFlight).toBe(1);
      t.open(id);
    }
    expect((await result).outcome).toBe("answered");
    expect(t.state.maxInFlight).toBe(1);
    expect(t.log).toEqual(["start r1", "end r1", "start r2", "end r2", "start r3", "end r3"]);
  });

  it("never runs more than maxParallelTools at once, and starts the next as one finishes", async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `r${i + 1}`);
    const t = gatedTools(["read_file"], new Set(ids));
    const provider = new ScriptedProvider([turn(...ids.map((id): [string, string] => ["read_file", id]))]);
    const { result, appended } = run(provider, t.tools, { maxParallelTools: 3 });
    for (const [k, id] of ids.entries()) {
      const due = Math.min(ids.length, k + 3);
      await until(() => t.log.filter((l) => l.startsWith("start")).length === due, `${due} started`);
      expect(t.state.inFlight).toBe(due - k);
      t.open(id);
    }
    expect((await result).outcome).toBe("answered");
    expect(t.state.maxInFlight).toBe(3);
    expect(recorded(appended)).toEqual(ids.map((id) => `${id}: result of ${id}`));
  });

  it("the tool-call limit refuses the calls past it, in order, while the ones within it overlap", async () => {
    const t = gatedTools(["read_file"], new Set(["r1", "r2"]));
    const provider = new ScriptedProvider([
      turn(["read_file", "r1"], ["read_file", "r2"], ["read_file", "r3"], ["read_file", "r4"]),
    ]);
    const { result, appended } = run(provider, t.tools, { maxToolCallsPerRun: 2 });
    await until(() => t.started("r1") && t.started("r2"), "both calls within the limit in flight");
    t.open("r2");
    t.open("r1");
    const done = await result;
    expect(done.outcome).toBe("answered");
    expect(done.toolCalls).toBe(2);
    expect(t.started("r3") || t.started("r4")).toBe(false);
    const refused = "error: not run — the limit of 2 tool calls per turn is reached.";
    expect(recorded(appended)).toEqual([
      "r1: result of r1",
      "r2: result of r2",
      `r3: ${refused}`,
      `r4: ${refused}`,
    ]);
    // The next call is told to answer, and offered no tools.
    expect(provider.requests[1]?.tools).toEqual([]);
  });

  it("an abort during a batch records the calls that ran and starts no further batch", async () => {
    const t = gatedTools(["read_file", "write_file"], new Set(["r1", "r2"]));
    const provider = new ScriptedProvider([
      turn(["read_file", "r1"], ["read_file", "r2"], ["write_file", "w"], ["read_file", "r3"]),
    ]);
    const stop = new AbortController();
    const { result, appended } = run(provider, t.tools, { signal: stop.signal });
    await until(() => t.started("r1") && t.started("r2"), "the first batch in flight");
    stop.abort(new Error("user_stop"));
    t.open("r1");
    t.open("r2");
    const done = await result;
    expect(done.outcome).toBe("aborted");
    expect(t.started("w") || t.started("r3")).toBe(false);
    expect(recorded(appended).map((r) => r.split(":")[0])).toEqual(["r1", "r2"]);
    expect(provider.requests).toHaveLength(1);
  });

  it("afterToolCall hooks see the calls in the model's order; endRun ends the run after its batch", async () => {
    const t = gatedTools(["read_file", "write_file"], new Set(["r1"]));
    const provider = new ScriptedProvider([
      turn(["read_file", "r1"], ["read_file", "r2"], ["write_file", "w"]),
    ]);
    const before: string[] = [];
    const after: string[] = [];
    const hooks: TurnHooks = {
      beforeToolCall: async (call: ToolCall) => {
        before.push(call.id);
        return call.id === "r2" ? { block: "not this one" } : undefined;
      },
      afterToolCall: async (call, outcome) => {
        after.push(call.id);
        return call.id === "r1" ? { ...outcome, endRun: new Error("stalled") } : outcome;
      },
    };
    const { result, appended } = run(provider, t.tools, { hooks });
    await until(() => t.started("r1"), "r1 in flight");
    await until(() => before.length === 2, "r2's beforeToolCall ran");
    t.open("r1");
    const done = await result;
    expect(done.outcome).toBe("failed");
    expect(done.error?.message).toBe("stalled");
    expect(before).toEqual(["r1", "r2"]);
    expect(after).toEqual(["r1", "r2"]); // r2 (refused by its hook, so done first) waited for r1
    expect(t.started("w")).toBe(false);
    expect(recorded(appended)).toEqual(["r1: result of r1", "r2: error: not run — not this one"]);
  });

  it("a hook that throws fails the run only once the batch's other calls have finished", async () => {
    const t = gatedTools(["read_file"], new Set(["r1"]));
    const provider = new ScriptedProvider([
      turn(["read_file", "r1"], ["read_file", "r2"], ["read_file", "r3"]),
    ]);
    const hooks: TurnHooks = {
      beforeToolCall: async (call: ToolCall) => {
        if (call.id === "r2") throw new Error("hook broke");
        return undefined;
      },
    };
    let settled = false;
    const { result } = run(provider, t.tools, { hooks });
    const settle = () => {
      settled = true;
    };
    const watched = result.then(settle, settle);
    await until(() => t.started("r1") && t.started("r3"), "r1 and r3 in flight");
    expect(settled).toBe(false); // r1 still runs: nothing is left behind unobserved
    t.open("r1");
    await expect(result).rejects.toThrow("hook broke");
    await watched;
  });

  it("runs spawn_agent calls together, and an exec or MCP call alone", async () => {
    const t = gatedTools(["spawn_agent", "exec", "docs__search"], new Set(["s1", "s2", "e", "m"]));
    const provider = new ScriptedProvider([
      turn(["spawn_agent", "s1"], ["spawn_agent", "s2"], ["exec", "e"], ["docs__search", "m"]),
    ]);
    const { result } = run(provider, t.tools);
    await until(() => t.started("s1") && t.started("s2"), "both spawns in flight");
    t.open("s1");
    t.open("s2");
    await until(() => t.started("e"), "exec started");
    expect(t.started("m")).toBe(false);
    t.open("e");
    await until(() => t.started("m"), "the MCP call started");
    t.open("m");
    expect((await result).outcome).toBe("answered");
  });

  it("refuses a maxParallelTools that is not an integer of at least 1, naming it", async () => {
    const provider = new ScriptedProvider([]);
    await expect(run(provider, new ToolRegistry(), { maxParallelTools: 0 }).result).rejects.toThrow(
      "maxParallelTools must be an integer of at least 1, got 0",
    );
  });
});
