/**
 * The one timer of each running lane task: first the no-progress watchdog, then, once the run
 * is aborted, the grace period after which the lane stops waiting for it. A run that keeps
 * reporting progress (or waits for a model slot) is never stopped by a wall clock.
 */
import type { Clock } from "../../util/clock.js";
import type { LaneEntry } from "./session-lane.js";

/** What {@link RunWatchdog} needs; the durations are LaneQueueOptions' (checked there). */
export interface RunWatchdogOptions {
  clock: Clock;
  /** A run that reports no progress for this long (ms) has stalled. */
  progressTimeoutMs: number;
  /** An aborted run that has not settled after this long (ms) is abandoned. */
  abortGraceMs: number;
  /** The run stalled: abort it (the abort calls {@link RunWatchdog.startGrace}). */
  onStall(entry: LaneEntry): void;
  /** The aborted run did not settle within the grace period: give up on it. */
  onAbandon(entry: LaneEntry): void;
}

/**
 * Times running tasks through `LaneEntry.timer`. Progress costs no timer work: `progress()`
 * only stamps `lastProgressAtMs`, and a watchdog that fires early re-arms for the rest.
 */
export class RunWatchdog {
  readonly #o: RunWatchdogOptions;

  constructor(options: RunWatchdogOptions) {
    this.#o = options;
  }

  /** Starts watching a run that just started (its `lastProgressAtMs` is its start). */
  watch(entry: LaneEntry): void {
    this.#arm(entry, this.#o.progressTimeoutMs);
  }

  /** The run was aborted: it has `abortGraceMs` to settle. */
  startGrace(entry: LaneEntry): void {
    this.#arm(entry, this.#o.abortGraceMs);
  }

  /** The run settled (or was abandoned): its timer stops. */
  stop(entry: LaneEntry): void {
    this.#o.clock.clearTimeout(entry.timer);
    entry.timer = undefined;
  }

  readonly #onTimer = (entry: LaneEntry): void => {
    entry.timer = undefined;
    if (entry.finished) return;
    if (entry.abortReason !== null) {
      this.#o.onAbandon(entry);
      return;
    }
    const { clock, progressTimeoutMs } = this.#o;
    const now = clock.now();
    if (entry.slotWaits > 0) entry.lastProgressAtMs = now; // waiting for the pool is not a stall
    const quietMs = Math.max(0, now - entry.lastProgressAtMs);
    if (quietMs >= progressTimeoutMs) this.#o.onStall(entry);
    else this.#arm(entry, progressTimeoutMs - quietMs);
  };

  /** (Re-)arms the entry's one timer. */
  #arm(entry: LaneEntry, delayMs: number): void {
    const { clock } = this.#o;
    clock.clearTimeout(entry.timer);
    entry.timer = clock.setTimeout(() => this.#onTimer(entry), delayMs);
  }
}
