/**
 * Tool-loop detection, on by default: a run that cannot be watched (a heartbeat, a scheduled job,
 * a long assignment) must not spend its budget going round in circles. Per run it watches the
 * calls and their results, and is progress-aware: a call repeated while its result changes is
 * not a loop.
 *
 * - The same call (tool and arguments) with the same result `warnAt` times: a warning is
 *   appended to the result; `stopAt` times: the run ends, stalled.
 * - Two calls taking turns (A, B, A, B…) with unchanged results: warned at 4 calls, ended at
 *   `pingPongStopAt`.
 * - A tool that does not exist, called twice: the run ends.
 * (The total calls of a run are bounded separately, by `maxToolCallsPerRun`.)
 */
import { createHash } from "node:crypto";
import type { ToolOutcome, TurnHooks } from "./hooks.js";
import type { ToolCall } from "./providers/types.js";

/** The run went round in circles; it ended as stalled. */
export class ToolLoopError extends Error {
  readonly kind = "tool_loop" as const;
  constructor(message: string) {
    super(message);
    this.name = "ToolLoopError";
  }
}

/** Thresholds (config `agent.toolLoop`). */
export interface ToolLoopSettings {
  enabled: boolean;
  /** Identical call and result this many times: a warning in the result. */
  warnAt: number;
  /** …this many times: the run ends. */
  stopAt: number;
  /** Calls of an unchanged A, B, A, B… alternation that end the run (warned at 4). */
  pingPongStopAt: number;
}

export const DEFAULT_TOOL_LOOP: ToolLoopSettings = {
  enabled: true,
  warnAt: 5,
  stopAt: 10,
  pingPongStopAt: 10,
};

interface RunState {
  /** Every call so far: `<tool> <arguments>` and a digest of its result. */
  calls: Array<{ call: string; result: string }>;
  unknown: Map<string, number>;
}

/** Watches the tool calls of every run (see the file header); `hooks()` plugs it into turns. */
export class ToolLoopDetector {
  readonly #s: ToolLoopSettings;
  /** Runs being watched, oldest first; the oldest are forgotten past 200. */
  readonly #runs = new Map<string, RunState>();

  constructor(settings: ToolLoopSettings = DEFAULT_TOOL_LOOP) {
    this.#s = settings;
  }

  hooks(): TurnHooks {
    if (!this.#s.enabled) return {};
    return { afterToolCall: async (call, outcome, turn) => this.observe(turn.runId, call, outcome) };
  }

  /** Records one call of run `runId`; returns its outcome, warned or ending the run. */
  observe(runId: string, call: ToolCall, outcome: ToolOutcome): ToolOutcome {
    const state = this.#state(runId);
    if (outcome.isError && outcome.content.startsWith("error (unknown_tool)")) {
      const n = (state.unknown.get(call.name) ?? 0) + 1;
      state.unknown.set(call.name, n);
      if (n >= 2)
        return {
          ...outcome,
          endRun: new ToolLoopError(`called the tool "${call.name}", which does not exist, ${n} times`),
        };
      return outcome;
    }
    const entry = { call: `${call.name} ${canonical(call.argumentsJson)}`, result: digest(outcome.content) };
    state.calls.push(entry);
    const same = state.calls.filter((c) => c.call === entry.call && c.result === entry.result).length;
    if (same >= this.#s.stopAt)
      return {
        ...outcome,
        endRun: new ToolLoopError(
          `called ${call.name} ${same} times with the same arguments and the same result`,
        ),
      };
    const alternating = alternation(state.calls);
    if (alternating >= this.#s.pingPongStopAt)
      return {
        ...outcome,
        endRun: new ToolLoopError(
          `alternated between the same two tool calls ${alternating} times without progress`,
        ),
      };
    if (same >= this.#s.warnAt)
      return warn(
        outcome,
        `you called ${call.name} with these arguments ${same} times and got the same result each time. Do something different, or answer with what you have; at ${this.#s.stopAt} the run is stopped.`,
      );
    if (alternating >= 4)
      return warn(
        outcome,
        `you are alternating between the same two tool calls without progress. Change approach, or answer with what you have.`,
      );
    return outcome;
  }

  #state(runId: string): RunState {
    let state = this.#runs.get(runId);
    if (!state) {
      state = { calls: [], unknown: new Map() };
      this.#runs.set(runId, state);
      if (this.#runs.size > 200) this.#runs.delete(this.#runs.keys().next().value as string);
    }
    return state;
  }
}

function warn(outcome: ToolOutcome, text: string): ToolOutcome {
  return { ...outcome, content: `${outcome.content}\n\n[loop warning: ${text}]` };
}

/** How many of the last calls alternate between two different, unchanged calls (A, B, A, B…). */
function alternation(calls: ReadonlyArray<{ call: string; result: string }>): number {
  const key = (i: number) => {
    const c = calls[i];
    return c ? `${c.call}\u0000${c.result}` : undefined;
  };
  const n = calls.length;
  if (n < 4 || key(n - 1) === key(n - 2)) return 0;
  let length = 2;
  while (n - length - 1 >= 0 && key(n - length - 1) === key(n - length + 1)) length++;
  return length >= 4 ? length : 0;
}

/** The arguments with keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are one call. */
function canonical(json: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(json)));
  } catch {
    return json.trim();
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  return value;
}

function digest(text: string): string {
  return text.length <= 64 ? text : createHash("sha1").update(text).digest("base64");
}
