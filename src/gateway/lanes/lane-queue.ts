/**
 * The two-level lane queue: one SessionLane per session key (one task running at a time) glued
 * to a ModelSlotPool. A waiting or running task holds no pool slot; only a model call does, from
 * `ctx.acquireModelSlot()` to `lease.release()`. Lanes exist only while they have work.
 */
import type { Clock } from "../../util/clock.js";
import { DrainWaiters } from "./drain-waiters.js";
import { checkDrainTimeoutMs, type LaneQueueOptions, laneQueueSettings } from "./lane-queue-options.js";
import { LaneTable } from "./lane-table.js";
import { RunWatchdog } from "./run-watchdog.js";
import { LaneEntry, type SessionLane } from "./session-lane.js";
import type {
  AbortReason,
  LaneEventSubject,
  LaneHandle,
  LaneOutcome,
  LanePriority,
  LaneQueueEvent,
  LaneQueueStats,
  LaneTask,
  LaneTaskContext,
  ModelSlotPool,
  SlotLease,
} from "./types.js";
import { LaneAbortedError } from "./errors.js";

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
 *
 * Options and their checks are in `lane-queue-options.ts`, the per-run timer in
 * `run-watchdog.ts`, the live lanes in `lane-table.ts`, each session's wait lists in
 * `session-lane.ts`.
 */
export class LaneQueue {
  readonly #pool: ModelSlotPool;
  readonly #onEvent: ((event: LaneQueueEvent) => void) | undefined;
  readonly #clock: Clock;
  readonly #watchdog: RunWatchdog;
  readonly #drains: DrainWaiters;
  readonly #lanes: LaneTable;
  readonly #pending: Record<LanePriority, number> = { human: 0, normal: 0, background: 0 };
  #pendingTotal = 0;
  #running = 0;
  #nextId = 0;
  #closed = false;

  /** @throws TypeError or RangeError naming the option, the value and what was expected. */
  constructor(options: LaneQueueOptions) {
    const o = laneQueueSettings(options);
    this.#pool = o.pool;
    this.#onEvent = o.onEvent;
    this.#clock = o.clock;
    this.#watchdog = new RunWatchdog({
      clock: o.clock,
      progressTimeoutMs: o.progressTimeoutMs,
      abortGraceMs: o.abortGraceMs,
      onStall: (entry) => this.#abort(entry, "progress_timeout"),
      onAbandon: (entry) => this.#finish(entry, "abandoned", undefined),
    });
    this.#drains = new DrainWaiters(o.clock);
    this.#lanes = new LaneTable(o.clock, o.idleEvictMs);
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

  /** One session's lane: the running task's priority (null: none) and how many wait; undefined when idle. */
  session(sessionKey: string): { running: LanePriority | null; queued: number } | undefined {
    const lane = this.#lanes.get(sessionKey);
    if (!lane || lane.idle) return undefined;
    return { running: lane.running?.priority ?? null, queued: lane.pendingCount };
  }

  /** Each busy session: whether a task runs (and at what priority) and how many wait. */
  sessions(): Array<{ sessionKey: string; running: LanePriority | null; queued: number }> {
    const out: Array<{ sessionKey: string; running: LanePriority | null; queued: number }> = [];
    for (const lane of this.#lanes.snapshot()) {
      if (lane.idle) continue;
      out.push({ sessionKey: lane.key, running: lane.running?.priority ?? null, queued: lane.pendingCount });
    }
    return out;
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
      this.#lanes.keep(lane);
    } else {
      lane = this.#lanes.create(key);
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
    for (const lane of this.#lanes.snapshot()) {
      for (const entry of lane.takeAll()) {
        this.#pending[entry.priority]--;
        this.#pendingTotal--;
        if (this.#onEvent) this.#emit({ type: "aborted", ...subject(entry), reason, running: false });
        entry.reject(new LaneAbortedError(reason));
        count++;
      }
      if (lane.running) {
        if (this.#abort(lane.running, reason)) count++;
      } else this.#lanes.evictIfIdle(lane);
    }
    this.#checkDrained();
    return count;
  }

  /**
   * Stops accepting tasks for good and waits up to `timeoutMs` for running and waiting tasks to
   * finish. Resolves true if they all did, false on timeout (nothing is aborted; call `abortAll`).
   */
  async drain(timeoutMs: number): Promise<boolean> {
    checkDrainTimeoutMs(timeoutMs);
    this.#closed = true;
    if (this.#running === 0 && this.#pendingTotal === 0) return true;
    return this.#drains.wait(timeoutMs);
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
      this.#lanes.evictIfIdle(lane);
      return;
    }
    this.#pending[entry.priority]--;
    this.#pendingTotal--;
    this.#running++;
    lane.running = entry;
    const now = this.#clock.now();
    entry.startedAtMs = now;
    entry.lastProgressAtMs = now;
    this.#watchdog.watch(entry);
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

  #abort(entry: LaneEntry, reason: AbortReason): boolean {
    if (entry.finished || entry.abortReason !== null) return false;
    this.#watchdog.startGrace(entry);
    if (this.#onEvent) this.#emit({ type: "aborted", ...subject(entry), reason, running: true });
    entry.abort(new LaneAbortedError(reason));
    return true;
  }

  #finish(entry: LaneEntry, how: "ok" | "error" | "abandoned", value: unknown): void {
    if (entry.finished) return; // an abandoned run settling late
    entry.finished = true;
    this.#watchdog.stop(entry);
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

  #checkDrained(): void {
    if (!this.#drains.waiting || this.#running > 0 || this.#pendingTotal > 0) return;
    this.#drains.settle();
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

function noop(): void {}
