/**
 * The two-level lane queue: one SessionLane per session key (one task running at a time) glued
 * to a ModelSlotPool. A waiting or running task holds no pool slot; only a model call does, from
 * `ctx.acquireModelSlot()` to `lease.release()`. Lanes exist only while they have work.
 */
import { type Clock, MAX_TIMER_MS, systemClock, type TimerHandle } from "../../util/clock.js";
import { LaneEntry, SessionLane } from "./session-lane.js";
import type {
  AbortReason,
  LaneHandle,
  LaneOrigin,
  LanePriority,
  LaneTask,
  LaneTaskContext,
  ModelSlotPool,
  SlotLease,
} from "./types.js";
import { LaneAbortedError } from "./errors.js";

/** Options for {@link LaneQueue}. */
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

/** What the queue reports, tagged by `type`. */
export type LaneQueueEvent =
  /** Queued; `pending` counts the session's waiting tasks including this one. */
  | (LaneEventSubject & { type: "enqueued"; pending: number })
  /** Merged into waiting task `id`; priority and origin are the newcomer's. */
  | (LaneEventSubject & { type: "coalesced"; coalesceKey: string })
  | (LaneEventSubject & { type: "started"; waitedMs: number })
  | (LaneEventSubject & { type: "finished"; durationMs: number; outcome: LaneOutcome })
  /** A running task's signal was aborted (`running: true`) or a task was dropped before it ran. */
  | (LaneEventSubject & { type: "aborted"; reason: AbortReason; running: boolean });

/** A snapshot of the queue. */
export interface LaneQueueStats {
  /** Waiting (not started) tasks per priority. */
  pending: Record<LanePriority, number>;
  running: number;
  /** Live session lanes. */
  lanes: number;
}

/**
 * Runs {@link LaneTask}s: per session at most one at a time, waiting human tasks before waiting
 * normal/background ones, each class in arrival order; across sessions, as many as want to run
 * (only model calls are limited, by the pool).
 *
 * - A non-human task whose coalesce key matches a waiting task of its session is not queued:
 *   it gets that task's handle with `coalesced: true` (and raises it to `normal` if needed).
 * - `done` never causes an unhandled rejection: it is pre-marked handled (a no-op `catch` on a
 *   side branch), so awaiting it still throws. A failing run rejects `done` and nothing else.
 * - A run aborted (stop, watchdog, abortAll) rejects `done` with the `LaneAbortedError` that is
 *   its signal's reason, unless the run resolves anyway. Slots a run forgot are released when it
 *   settles.
 * - `run()` is called synchronously from `enqueue` when the session is idle.
 */
export class LaneQueue {
  readonly #pool: ModelSlotPool;
  readonly #progressTimeoutMs: number;
  readonly #abortGraceMs: number;
  readonly #idleEvictMs: number;
  readonly #onEvent: ((event: LaneQueueEvent) => void) | undefined;
  readonly #clock: Clock;
  readonly #lanes = new Map<string, SessionLane>();
  readonly #pending: Record<LanePriority, number> = { human: 0, normal: 0, background: 0 };
  readonly #drainWaiters = new Set<() => void>();
  #pendingTotal = 0;
  #running = 0;
  #nextId = 0;
  #closed = false;

  /** @throws TypeError or RangeError naming the option, the value and what was expected. */
  constructor(options: LaneQueueOptions) {
    const pool: unknown = options?.pool;
    if (typeof pool !== "object" || pool === null || typeof Reflect.get(pool, "acquire") !== "function") {
      throw new TypeError(
        `LaneQueue: pool must be a ModelSlotPool (an object with acquire()), got ${show(pool)}`,
      );
    }
    this.#pool = options.pool;
    this.#progressTimeoutMs = checkMs("progressTimeoutMs", options.progressTimeoutMs, 120_000, 1);
    this.#abortGraceMs = checkMs("abortGraceMs", options.abortGraceMs, 10_000, 0);
    this.#idleEvictMs = checkMs("idleEvictMs", options.idleEvictMs, 0, 0);
    this.#onEvent = options.onEvent;
    this.#clock = options.clock ?? systemClock;
  }

  /** Tasks running now. */
  get runningCount(): number {
    return this.#running;
  }

  /** Live session lanes; 0 when everything is idle (and `idleEvictMs` has passed). */
  get laneCount(): number {
    return this.#lanes.size;
  }

  /** Whether a task of the session is running or waiting. */
  isBusy(sessionKey: string): boolean {
    const lane = this.#lanes.get(sessionKey);
    return lane !== undefined && !lane.idle;
  }

  /** Waiting (not started) tasks of one session, or of all sessions. */
  pendingCount(sessionKey?: string): number {
    if (sessionKey === undefined) return this.#pendingTotal;
    return this.#lanes.get(sessionKey)?.pendingCount ?? 0;
  }

  /** Counts per priority, running tasks and live lanes. */
  stats(): LaneQueueStats {
    return { pending: { ...this.#pending }, running: this.#running, lanes: this.#lanes.size };
  }

  /**
   * Queues a task on its session's lane and starts it if the session is idle. After `drain()`
   * the task is refused: `done` rejects with `LaneAbortedError("shutdown")`.
   */
  enqueue<T>(task: LaneTask<T>): LaneHandle<T> {
    if (this.#closed) return this.#refuse(task);
    const key = task.sessionKey;
    const coalesceKey = task.priority === "human" ? null : (task.coalesceKey ?? `${key}:${task.origin}`);
    let lane = this.#lanes.get(key);
    if (lane) {
      const waiting = coalesceKey === null ? undefined : lane.waitingWith(coalesceKey);
      if (waiting) return this.#coalesce(waiting, task, coalesceKey as string);
      if (lane.idleTimer !== undefined) {
        this.#clock.clearTimeout(lane.idleTimer);
        lane.idleTimer = undefined;
      }
    } else {
      lane = new SessionLane(key);
      this.#lanes.set(key, lane);
    }
    const entry = new LaneEntry(++this.#nextId, task, lane, coalesceKey, this.#clock.now());
    lane.push(entry);
    this.#pending[entry.priority]++;
    this.#pendingTotal++;
    if (this.#onEvent) this.#emit({ type: "enqueued", ...subject(entry), pending: lane.pendingCount });
    if (lane.running === null) this.#startNext(lane);
    return entry.handle as LaneHandle<T>;
  }

  /**
   * Aborts the session's running task; its signal's reason is `new LaneAbortedError(reason)`.
   * Returns false if nothing runs or it was already aborted. Waiting tasks are not touched.
   */
  abortRunning(sessionKey: string, reason: AbortReason): boolean {
    const running = this.#lanes.get(sessionKey)?.running;
    return running ? this.#abort(running, reason) : false;
  }

  /**
   * Aborts every running task and rejects every waiting one with `LaneAbortedError(reason)`.
   * Returns how many tasks it hit. The queue keeps accepting work (use `drain` to stop that).
   */
  abortAll(reason: AbortReason): number {
    let count = 0;
    for (const lane of [...this.#lanes.values()]) {
      for (const entry of lane.takeAll()) {
        this.#pending[entry.priority]--;
        this.#pendingTotal--;
        if (this.#onEvent) this.#emit({ type: "aborted", ...subject(entry), reason, running: false });
        entry.reject(new LaneAbortedError(reason));
        count++;
      }
      if (lane.running) {
        if (this.#abort(lane.running, reason)) count++;
      } else this.#evictIfIdle(lane);
    }
    this.#checkDrained();
    return count;
  }

  /**
   * Stops accepting tasks for good and waits up to `timeoutMs` for running and waiting tasks to
   * finish. Resolves true if they all did, false on timeout (nothing is aborted; call `abortAll`).
   */
  async drain(timeoutMs: number): Promise<boolean> {
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) {
      throw new RangeError(`LaneQueue.drain: timeoutMs must be a number ≥ 0, got ${show(timeoutMs)}`);
    }
    this.#closed = true;
    if (this.#running === 0 && this.#pendingTotal === 0) return true;
    let timer: TimerHandle | undefined;
    let waiter: (() => void) | undefined;
    try {
      return await new Promise<boolean>((resolve) => {
        waiter = () => resolve(true);
        this.#drainWaiters.add(waiter);
        timer = this.#clock.setTimeout(() => resolve(false), timeoutMs);
      });
    } finally {
      this.#clock.clearTimeout(timer);
      if (waiter) this.#drainWaiters.delete(waiter);
    }
  }

  #coalesce<T>(waiting: LaneEntry, task: LaneTask<T>, coalesceKey: string): LaneHandle<T> {
    if (task.priority === "normal" && waiting.priority === "background") {
      this.#pending.background--;
      this.#pending.normal++;
      waiting.priority = "normal";
    }
    if (this.#onEvent) {
      const { sessionKey, priority, origin } = task;
      this.#emit({ type: "coalesced", id: waiting.id, sessionKey, priority, origin, coalesceKey });
    }
    // The contract merges tasks by key, so the caller gets the waiting task's result type.
    return { id: waiting.id, done: waiting.handle.done as Promise<T>, coalesced: true };
  }

  #refuse<T>(task: LaneTask<T>): LaneHandle<T> {
    const id = ++this.#nextId;
    const done = Promise.reject(new LaneAbortedError("shutdown", "lane queue is draining; task refused"));
    done.catch(noop); // see the class comment on unhandled rejections
    if (this.#onEvent) {
      const { sessionKey, priority, origin } = task;
      this.#emit({ type: "aborted", id, sessionKey, priority, origin, reason: "shutdown", running: false });
    }
    return { id, done, coalesced: false };
  }

  #startNext(lane: SessionLane): void {
    const entry = lane.shift();
    if (!entry) {
      this.#evictIfIdle(lane);
      return;
    }
    this.#pending[entry.priority]--;
    this.#pendingTotal--;
    this.#running++;
    lane.running = entry;
    const now = this.#clock.now();
    entry.startedAtMs = now;
    entry.lastProgressAtMs = now;
    this.#arm(entry, this.#progressTimeoutMs);
    if (this.#onEvent) this.#emit({ type: "started", ...subject(entry), waitedMs: now - entry.enqueuedAtMs });
    const ctx: LaneTaskContext = {
      get signal() {
        return entry.signal;
      },
      progress: () => {
        // Per token: one clock read, no timer work (the watchdog re-arms itself lazily).
        entry.lastProgressAtMs = this.#clock.now();
      },
      acquireModelSlot: () => this.#acquireSlot(entry),
    };
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(entry.task.run(ctx));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => this.#finish(entry, "ok", value),
      (error: unknown) => this.#finish(entry, "error", error),
    );
  }

  #acquireSlot(entry: LaneEntry): Promise<SlotLease> {
    if (entry.finished) return Promise.reject(finishedError(entry));
    let granted: Promise<SlotLease>;
    try {
      granted = this.#pool.acquire(entry.priority, entry.signal);
    } catch (error) {
      return Promise.reject(error);
    }
    entry.slotWaits++;
    return granted.then(
      (lease) => {
        entry.slotWaits--;
        if (entry.finished) {
          lease.release();
          throw finishedError(entry);
        }
        entry.lastProgressAtMs = this.#clock.now();
        return entry.hold(lease);
      },
      (error: unknown) => {
        entry.slotWaits--;
        throw error;
      },
    );
  }

  /** The one timer of a running task: the progress watchdog, then (once aborted) the grace timer. */
  readonly #onTimer = (entry: LaneEntry): void => {
    entry.timer = undefined;
    if (entry.finished) return;
    if (entry.abortReason !== null) {
      this.#finish(entry, "abandoned", undefined);
      return;
    }
    const now = this.#clock.now();
    if (entry.slotWaits > 0) entry.lastProgressAtMs = now; // waiting for the pool is not a stall
    const quietMs = Math.max(0, now - entry.lastProgressAtMs);
    if (quietMs >= this.#progressTimeoutMs) this.#abort(entry, "progress_timeout");
    else this.#arm(entry, this.#progressTimeoutMs - quietMs);
  };

  /** (Re-)arms the entry's one timer. */
  #arm(entry: LaneEntry, delayMs: number): void {
    this.#clock.clearTimeout(entry.timer);
    entry.timer = this.#clock.setTimeout(() => this.#onTimer(entry), delayMs);
  }

  #abort(entry: LaneEntry, reason: AbortReason): boolean {
    if (entry.finished || entry.abortReason !== null) return false;
    this.#arm(entry, this.#abortGraceMs);
    if (this.#onEvent) this.#emit({ type: "aborted", ...subject(entry), reason, running: true });
    entry.abort(new LaneAbortedError(reason));
    return true;
  }

  #finish(entry: LaneEntry, how: "ok" | "error" | "abandoned", value: unknown): void {
    if (entry.finished) return; // an abandoned run settling late
    entry.finished = true;
    this.#clock.clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.releaseHeld();
    let outcome: LaneOutcome;
    if (how === "ok") {
      outcome = "ok";
      entry.resolve(value);
    } else {
      outcome = how === "abandoned" ? "abandoned" : entry.abortReason !== null ? "aborted" : "error";
      entry.reject(outcome === "error" ? value : entry.abortReason);
    }
    this.#running--;
    entry.lane.running = null;
    if (this.#onEvent) {
      const durationMs = this.#clock.now() - entry.startedAtMs;
      this.#emit({ type: "finished", ...subject(entry), durationMs, outcome });
    }
    this.#startNext(entry.lane);
    this.#checkDrained();
  }

  #evictIfIdle(lane: SessionLane): void {
    if (!lane.idle || this.#lanes.get(lane.key) !== lane) return;
    if (this.#idleEvictMs === 0) this.#lanes.delete(lane.key);
    else if (lane.idleTimer === undefined) {
      lane.idleTimer = this.#clock.setTimeout(() => this.#onIdle(lane), this.#idleEvictMs, { unref: true });
    }
  }

  readonly #onIdle = (lane: SessionLane): void => {
    lane.idleTimer = undefined;
    if (lane.idle && this.#lanes.get(lane.key) === lane) this.#lanes.delete(lane.key);
  };

  #checkDrained(): void {
    if (this.#drainWaiters.size === 0 || this.#running > 0 || this.#pendingTotal > 0) return;
    for (const waiter of this.#drainWaiters) waiter();
  }

  #emit(event: LaneQueueEvent): void {
    try {
      this.#onEvent?.(event);
    } catch {
      // An observer must not be able to corrupt the queue.
    }
  }
}

function subject(entry: LaneEntry): LaneEventSubject {
  return { id: entry.id, sessionKey: entry.lane.key, priority: entry.priority, origin: entry.task.origin };
}

function finishedError(entry: LaneEntry): unknown {
  return entry.abortReason ?? new Error(`lane task ${entry.id} has finished; it cannot take a slot`);
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

function noop(): void {}
