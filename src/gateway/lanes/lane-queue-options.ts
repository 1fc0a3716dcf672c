/** LaneQueue's options, their defaults, and the checks of everything a caller passes it. */
import { type Clock, MAX_TIMER_MS, systemClock } from "../../util/clock.js";
import type { LaneQueueEvent, ModelSlotPool } from "./types.js";

/** Options for `LaneQueue`. */
export interface LaneQueueOptions {
  /** The level-2 pool every model call goes through (usually a `GlobalLane`). Required. */
  pool: ModelSlotPool;
  /**
   * A running task that calls neither `progress()` nor waits for a slot for this long is aborted
   * with `LaneAbortedError("progress_timeout")`. There is no wall-clock limit. Default 120_000.
   */
  progressTimeoutMs?: number;
  /**
   * After an abort, how long a run may take to settle before the lane abandons it: `done`
   * rejects, its slots are released and the session's next task starts. An abandoned run can
   * take no new slot (its signal is aborted). Default 10_000; 0 abandons on the next timer tick.
   */
  abortGraceMs?: number;
  /** How long an idle, empty lane is kept before it is dropped. Default 0 (dropped at once). */
  idleEvictMs?: number;
  /** Observer of every {@link LaneQueueEvent}, called synchronously; exceptions are ignored. */
  onEvent?: (event: LaneQueueEvent) => void;
  /**
   * Time source and timers: progress, durations, the watchdog, the abort grace, idle eviction
   * and `drain`'s limit all use it. Default: `systemClock`.
   */
  clock?: Clock;
}

/** LaneQueueOptions with every default applied. */
export interface LaneQueueSettings {
  pool: ModelSlotPool;
  progressTimeoutMs: number;
  abortGraceMs: number;
  idleEvictMs: number;
  onEvent: ((event: LaneQueueEvent) => void) | undefined;
  clock: Clock;
}

/**
 * The options with their defaults applied.
 * @throws TypeError or RangeError naming the option, the value and what was expected.
 */
export function laneQueueSettings(options: LaneQueueOptions): LaneQueueSettings {
  const pool: unknown = options?.pool;
  if (typeof pool !== "object" || pool === null || typeof Reflect.get(pool, "acquire") !== "function") {
    throw new TypeError(
      `LaneQueue: pool must be a ModelSlotPool (an object with acquire()), got ${show(pool)}`,
    );
  }
  return {
    pool: options.pool,
    progressTimeoutMs: checkMs("progressTimeoutMs", options.progressTimeoutMs, 120_000, 1),
    abortGraceMs: checkMs("abortGraceMs", options.abortGraceMs, 10_000, 0),
    idleEvictMs: checkMs("idleEvictMs", options.idleEvictMs, 0, 0),
    onEvent: options.onEvent,
    clock: options.clock ?? systemClock,
  };
}

/**
 * `LaneQueue.drain`'s limit, checked.
 * @throws RangeError unless it is a number ≥ 0.
 */
export function checkDrainTimeoutMs(timeoutMs: number): number {
  if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) {
    throw new RangeError(`LaneQueue.drain: timeoutMs must be a number ≥ 0, got ${show(timeoutMs)}`);
  }
  return timeoutMs;
}

function checkMs(name: string, value: number | undefined, fallback: number, min: number): number {
  const ms = value ?? fallback;
  if (!Number.isInteger(ms) || ms < min || ms > MAX_TIMER_MS) {
    throw new RangeError(
      `LaneQueue: ${name} must be an integer from ${min} to ${MAX_TIMER_MS} (ms), got ${show(ms)}`,
    );
  }
  return ms;
}

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
