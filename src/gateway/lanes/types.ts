/**
 * The two-level lane queue's contracts.
 *
 * Level 1: one FIFO lane per session key; at most one task of a key runs at a time.
 * Level 2: a pool of model-call slots shared by all sessions. A running task takes a slot
 * for each model call and gives it back while its tools run.
 */

/** Admission priority: human > normal (subagent, announce) > background (cron, heartbeat, wake). */
export type LanePriority = "human" | "normal" | "background";

/** What caused the task. */
export type LaneOrigin = "user" | "cron" | "heartbeat" | "wake" | "subagent" | "recovery";

/** Why a task's signal was aborted. */
export type AbortReason = "user_stop" | "progress_timeout" | "shutdown" | "evicted";

/** A held model-call slot. Release exactly once (extra calls are ignored). */
export interface SlotLease {
  release(): void;
}

/**
 * The level-2 pool: async and cancellable so a cross-process implementation can replace the
 * in-memory one. `acquire` rejects with the signal's reason if aborted while waiting.
 */
export interface ModelSlotPool {
  acquire(priority: LanePriority, signal: AbortSignal): Promise<SlotLease>;
  /** Slots in use right now. */
  readonly inUse: number;
  /** Waiters per priority. */
  waiting(): Record<LanePriority, number>;
}

/** What a running task is given. */
export interface LaneTaskContext {
  signal: AbortSignal;
  /** Report progress (a token, a tool event); resets the no-progress watchdog. */
  progress(): void;
  /** Take a model-call slot at the task's priority; release it when the call ends. */
  acquireModelSlot(): Promise<SlotLease>;
}

/** A unit of work for one session. */
export interface LaneTask<T = void> {
  sessionKey: string;
  priority: LanePriority;
  origin: LaneOrigin;
  /**
   * Background tasks with the same coalesce key that are still waiting (not started) are
   * merged: enqueueing a second returns the first's handle. Defaults to `${sessionKey}:${origin}`
   * for background tasks; human tasks never coalesce.
   */
  coalesceKey?: string;
  run(ctx: LaneTaskContext): Promise<T>;
}

/** Handle to an enqueued task. */
export interface LaneHandle<T = void> {
  readonly id: number;
  /** Settles with the task's result or error; rejects with LaneAbortedError if dropped. */
  readonly done: Promise<T>;
  /** True when this enqueue was merged into an already-waiting task. */
  readonly coalesced: boolean;
}

/** How a started task ended. `abandoned`: aborted, then it ignored its signal for `abortGraceMs`. */
export type LaneOutcome = "ok" | "error" | "aborted" | "abandoned";

/** Fields every {@link LaneQueueEvent} carries. */
export interface LaneEventSubject {
  /** The task's id (for `coalesced`: the waiting task it merged into). */
  id: number;
  sessionKey: string;
  priority: LanePriority;
  origin: LaneOrigin;
}

/** What the lane queue reports, tagged by `type`. */
export type LaneQueueEvent =
  /** Queued; `pending` counts the session's waiting tasks including this one. */
  | (LaneEventSubject & { type: "enqueued"; pending: number })
  /** Merged into waiting task `id`; priority and origin are the newcomer's. */
  | (LaneEventSubject & { type: "coalesced"; coalesceKey: string })
  | (LaneEventSubject & { type: "started"; waitedMs: number })
  | (LaneEventSubject & { type: "finished"; durationMs: number; outcome: LaneOutcome })
  /** A running task's signal was aborted (`running: true`) or a task was dropped before it ran. */
  | (LaneEventSubject & { type: "aborted"; reason: AbortReason; running: boolean });

/** A snapshot of the lane queue. */
export interface LaneQueueStats {
  /** Waiting (not started) tasks per priority. */
  pending: Record<LanePriority, number>;
  running: number;
  /** Live session lanes. */
  lanes: number;
}
