/**
 * Which tool calls of one model turn may run at the same time, as a pure plan. A call is
 * parallel-safe when its tool only looks (READ_ONLY_TOOL_NAMES) or is `spawn_agent` (it only
 * starts a child session); every other call — a write, exec, an MCP tool, an unknown name — is a
 * barrier. The calls are cut into batches in the model's order: each maximal run of consecutive
 * parallel-safe calls is one batch, and each barrier is a batch of its own. So a barrier starts
 * only after every call before it has finished, and every call after it starts only after it
 * finished: calls with side effects keep the model's order among themselves and relative to the
 * reads around them. Within a batch at most `maxParallelTools` calls run at once; with 1 every
 * call is its own batch (one after another, as before parallel calls existed).
 */
import { READ_ONLY_TOOL_NAMES } from "./read-only-tools.js";

/** `agent.maxParallelTools` when not configured. */
export const DEFAULT_MAX_PARALLEL_TOOLS = 4;

/** The most calls one batch may run at once (`agent.maxParallelTools` is at most this). */
export const MAX_PARALLEL_TOOLS = 16;

/** Tools that are parallel-safe besides the read-only ones: they start work elsewhere and return. */
const STARTS_ONLY: ReadonlySet<string> = new Set(["spawn_agent"]);

/** Whether a call of `name` may overlap other parallel-safe calls of its turn. */
export function parallelSafe(name: string): boolean {
  return READ_ONLY_TOOL_NAMES.has(name) || STARTS_ONLY.has(name);
}

/** `value` when it is an integer of at least 1; otherwise a RangeError naming maxParallelTools. */
export function checkMaxParallelTools(value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`maxParallelTools must be an integer of at least 1, got ${value}`);
  return value;
}

/**
 * The calls cut into batches, in order (see the file header); concatenated they are `calls`
 * unchanged. `maxParallelTools` must be an integer of at least 1 (a RangeError names it
 * otherwise); with 1 every call is a batch of its own.
 */
export function planToolBatches<T extends { name: string }>(
  calls: readonly T[],
  maxParallelTools: number,
): T[][] {
  checkMaxParallelTools(maxParallelTools);
  const batches: T[][] = [];
  let open: T[] | undefined;
  for (const call of calls) {
    if (maxParallelTools > 1 && parallelSafe(call.name)) {
      if (!open) {
        open = [];
        batches.push(open);
      }
      open.push(call);
    } else {
      open = undefined;
      batches.push([call]);
    }
  }
  return batches;
}
