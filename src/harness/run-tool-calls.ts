/**
 * The tool calls of one model turn, run in the batches tools/parallel-plan.ts cuts them into:
 * the calls of a batch run at the same time (at most `maxParallelTools` at once, started in the
 * model's order), a batch starts when the one before it is recorded. Per call, as when calls ran
 * one by one: the tool-call limit (calls past it are refused, in order, without hooks), the
 * beforeToolCall hook (it may refuse), the tool, the afterToolCall hook, `progress()`. The
 * beforeToolCall hooks of one batch may interleave; the afterToolCall hooks run one at a time,
 * in the model's order, once the batch's tools have finished, so a hook that keeps per-run state
 * (loop detection, an assignment's pause) sees the calls in order. Each batch's results are then
 * recorded in the model's order, never in the order they finished.
 */
import type { HookTurn, ToolOutcome, TurnHooks } from "./hooks.js";
import type { ToolCall } from "./providers/types.js";
import { planToolBatches } from "./tools/parallel-plan.js";
import type { ToolRegistry } from "./tools/registry.js";
import type { ToolContext } from "./tools/types.js";

/** One recorded call: what the transcript and the next request get. */
export interface RecordedToolResult {
  call: ToolCall;
  content: string;
  isError: boolean;
}

/** What running a turn's calls needs. */
export interface ToolCallsOptions {
  /** The model's calls, in its order. */
  calls: readonly ToolCall[];
  /** Tool calls the run made before these (they count against the limit). */
  made: number;
  maxToolCallsPerRun: number;
  /** Calls of one batch running at once; at least 1 (1: one after another). */
  maxParallelTools: number;
  tools: Pick<ToolRegistry, "execute">;
  hooks: Pick<TurnHooks, "beforeToolCall" | "afterToolCall">;
  turn: HookTurn;
  lane: { signal: AbortSignal; progress(): void };
  /** What every call runs with; `toolCallId` is each call's own. */
  context: Omit<ToolContext, "toolCallId">;
  /** Records one batch's results, in the model's order, once the whole batch has finished. */
  record(results: readonly RecordedToolResult[]): Promise<void>;
}

/** How the calls went. */
export interface ToolCallsOutcome {
  /** Tool calls the run has made, these included (calls refused for the limit are not counted). */
  made: number;
  /** A call was refused because the limit was reached. */
  limitReached: boolean;
  /**
   * Set when not every call ran: the signal aborted (the calls that started were recorded), or a
   * hook ended the run (`endRun` of the first such call in the model's order; its batch was
   * recorded, later batches did not run).
   */
  stopped?: { reason: "aborted" } | { reason: "end_run"; error: Error; tool: string };
}

/** A call that finished its tool (or was refused) and waits for its afterToolCall hook. */
interface Ran {
  call: ToolCall;
  outcome: ToolOutcome;
  /** False when the limit refused it: no hook sees it. */
  hooked: boolean;
}

/**
 * Runs `o.calls` (see the file header). Throws only what a hook throws, once every call that
 * started has finished; tool failures are results.
 */
export async function runToolCalls(o: ToolCallsOptions): Promise<ToolCallsOutcome> {
  const { hooks, turn, lane } = o;
  let made = o.made;
  let limitReached = false;

  /** Starts one call; the synchronous part (the limit count) runs in the model's order. */
  const start = async (call: ToolCall): Promise<Ran> => {
    if (made >= o.maxToolCallsPerRun) {
      limitReached = true;
      const content = `error: not run — the limit of ${o.maxToolCallsPerRun} tool calls per turn is reached.`;
      return { call, outcome: { content, isError: true }, hooked: false };
    }
    made++;
    // A tool's own timeout bounds it; starting one is progress, so the watchdog (which must be
    // longer than the tool timeout) does not kill a run for a long but bounded tool.
    lane.progress();
    const blocked = await hooks.beforeToolCall?.(call, turn);
    const outcome: ToolOutcome = blocked
      ? { content: `error: not run — ${blocked.block}`, isError: true }
      : await o.tools.execute(call.name, call.argumentsJson, { ...o.context, toolCallId: call.id });
    lane.progress();
    return { call, outcome, hooked: true };
  };

  for (const batch of planToolBatches(o.calls, o.maxParallelTools)) {
    if (lane.signal.aborted) return { made, limitReached, stopped: { reason: "aborted" } };
    const ran = await runBatch(batch, o.maxParallelTools, start, () => !lane.signal.aborted);
    const results: RecordedToolResult[] = [];
    let ended: { error: Error; tool: string } | undefined;
    for (const r of ran) {
      const out =
        r.hooked && hooks.afterToolCall ? await hooks.afterToolCall(r.call, r.outcome, turn) : r.outcome;
      lane.progress();
      results.push({ call: r.call, content: out.content, isError: out.isError });
      if (out.endRun && !ended) ended = { error: out.endRun, tool: r.call.name };
    }
    await o.record(results);
    if (ended) return { made, limitReached, stopped: { reason: "end_run", ...ended } };
    // Only an abort stops a batch from starting all its calls.
    if (ran.length < batch.length) return { made, limitReached, stopped: { reason: "aborted" } };
  }
  return { made, limitReached };
}

/**
 * Runs `start` for the calls of one batch, at most `limit` at once, starting them in order
 * while `canStart()` holds; resolves with what each started call returned, in order (a prefix
 * of `batch`), once all have finished. When a start throws, no further call starts, and the
 * first error is thrown after the others finished (nothing is left running or unobserved).
 */
async function runBatch<T>(
  batch: readonly ToolCall[],
  limit: number,
  start: (call: ToolCall) => Promise<T>,
  canStart: () => boolean,
): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < batch.length && !failure && canStart()) {
      const i = next++;
      try {
        out[i] = await start(batch[i] as ToolCall);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, batch.length) }, worker));
  if (failure) throw failure.error;
  return out;
}
