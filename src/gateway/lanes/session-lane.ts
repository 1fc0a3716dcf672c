/**
 * Level 1 of the lane queue: `SessionLane` (one session's wait lists and the task it runs) and
 * `LaneEntry` (one task's record: its `done`, its lazily created signal, the slots it holds).
 * Bookkeeping only: no timers, no scheduling; `LaneQueue` in `lane-queue.ts` drives both (with
 * `RunWatchdog` timing runs and `LaneTable` evicting idle lanes).
 */
import type { TimerHandle } from "../../util/clock.js";
import type { LaneHandle, LanePriority, LaneTask, SlotLease } from "./types.js";
import type { LaneAbortedError } from "./errors.js";

/** Internal record of one enqueued task, shared by {@link SessionLane} and `LaneQueue`. */
export class LaneEntry {
  readonly id: number;
  readonly task: LaneTask<unknown>;
  readonly lane: SessionLane;
  /** Null for tasks that never coalesce (human ones). */
  readonly coalesceKey: string | null;
  /** Starts as `task.priority`; raised when a higher-priority enqueue coalesces into this one. */
  priority: LanePriority;
  readonly enqueuedAtMs: number;
  readonly handle: LaneHandle<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  /** Next entry in the same wait list. */
  next: LaneEntry | null = null;

  // Set once the task runs.
  /** The reason the run was aborted (its signal's reason), or null. */
  abortReason: LaneAbortedError | null = null;
  #controller: AbortController | null = null;
  startedAtMs = 0;
  lastProgressAtMs = 0;
  /** acquireModelSlot() calls in flight: waiting in the pool is not a stall. */
  slotWaits = 0;
  /** The watchdog, or after an abort the grace timer. */
  timer: TimerHandle | undefined = undefined;
  /** Leases taken through the context and not yet released. */
  #held: TaskLease[] | null = null;
  finished = false;

  constructor(
    id: number,
    task: LaneTask<unknown>,
    lane: SessionLane,
    coalesceKey: string | null,
    enqueuedAtMs: number,
  ) {
    this.id = id;
    this.task = task;
    this.lane = lane;
    this.coalesceKey = coalesceKey;
    this.priority = task.priority;
    this.enqueuedAtMs = enqueuedAtMs;
    let resolve: (value: unknown) => void = noop;
    let reject: (reason: unknown) => void = noop;
    const done = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Marks `done` handled so an un-awaited rejection never raises unhandledRejection; whoever
    // awaits `done` still sees the rejection, because this handler is on a separate branch.
    done.catch(noop);
    this.resolve = resolve;
    this.reject = reject;
    this.handle = { id, done, coalesced: false };
  }

  /**
   * The run's signal, created on first use: creating an AbortSignal costs a few µs in Node 20,
   * more than the rest of enqueue→start, and a run that never looks at it need not pay that.
   */
  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.abortReason !== null) this.#controller.abort(this.abortReason);
    }
    return this.#controller.signal;
  }

  /** Aborts the run with `reason` (and its signal, if it was ever handed out). */
  abort(reason: LaneAbortedError): void {
    this.abortReason = reason;
    this.#controller?.abort(reason);
  }

  /** Wraps a lease granted to the run so that {@link releaseHeld} can free it if the run forgets. */
  hold(lease: SlotLease): SlotLease {
    const tracked = new TaskLease(lease, this);
    this.#held ??= [];
    this.#held.push(tracked);
    return tracked;
  }

  /** Called by a {@link TaskLease} released by the run itself. */
  forget(lease: TaskLease): void {
    const at = this.#held ? this.#held.indexOf(lease) : -1;
    if (at >= 0) this.#held?.splice(at, 1);
  }

  /** Releases every lease the run still holds; used when it settles or is abandoned. */
  releaseHeld(): void {
    const held = this.#held;
    this.#held = null;
    if (held) for (const lease of held) lease.release();
  }
}

/** A lease handed to a run (usually 0 or 1 held at a time, so a small array is enough). */
class TaskLease implements SlotLease {
  #inner: SlotLease | null;
  readonly #entry: LaneEntry;

  constructor(inner: SlotLease, entry: LaneEntry) {
    this.#inner = inner;
    this.#entry = entry;
  }

  release(): void {
    const inner = this.#inner;
    if (inner === null) return;
    this.#inner = null;
    this.#entry.forget(this);
    inner.release();
  }
}

/**
 * One session's lane: at most one running task, and two FIFO wait lists so that waiting human
 * tasks go before waiting normal/background tasks of the same session (humans are never kept
 * behind cron), while each list keeps arrival order. Also indexes waiting tasks by coalesce key.
 */
export class SessionLane {
  readonly key: string;
  running: LaneEntry | null = null;
  /** Pending eviction when `idleEvictMs > 0`. */
  idleTimer: TimerHandle | undefined = undefined;
  #humanHead: LaneEntry | null = null;
  #humanTail: LaneEntry | null = null;
  #otherHead: LaneEntry | null = null;
  #otherTail: LaneEntry | null = null;
  #pending = 0;
  #byCoalesceKey: Map<string, LaneEntry> | null = null;

  constructor(key: string) {
    this.key = key;
  }

  /** Tasks waiting (not started). */
  get pendingCount(): number {
    return this.#pending;
  }

  /** Nothing running and nothing waiting: the lane may be evicted. */
  get idle(): boolean {
    return this.running === null && this.#pending === 0;
  }

  /** The waiting task with this coalesce key, if any. */
  waitingWith(coalesceKey: string): LaneEntry | undefined {
    return this.#byCoalesceKey?.get(coalesceKey);
  }

  /** Appends a task to its wait list (human or other). */
  push(entry: LaneEntry): void {
    if (entry.priority === "human") {
      if (this.#humanTail) this.#humanTail.next = entry;
      else this.#humanHead = entry;
      this.#humanTail = entry;
    } else {
      if (this.#otherTail) this.#otherTail.next = entry;
      else this.#otherHead = entry;
      this.#otherTail = entry;
    }
    if (entry.coalesceKey !== null) {
      this.#byCoalesceKey ??= new Map();
      this.#byCoalesceKey.set(entry.coalesceKey, entry);
    }
    this.#pending++;
  }

  /** Removes and returns the task to run next: the oldest human, else the oldest other. */
  shift(): LaneEntry | undefined {
    let entry = this.#humanHead;
    if (entry) {
      this.#humanHead = entry.next;
      if (!this.#humanHead) this.#humanTail = null;
    } else {
      entry = this.#otherHead;
      if (!entry) return undefined;
      this.#otherHead = entry.next;
      if (!this.#otherHead) this.#otherTail = null;
    }
    entry.next = null;
    this.#pending--;
    if (entry.coalesceKey !== null) this.#byCoalesceKey?.delete(entry.coalesceKey);
    return entry;
  }

  /** Removes and returns every waiting task, humans first. */
  takeAll(): LaneEntry[] {
    const all: LaneEntry[] = [];
    for (let e = this.shift(); e; e = this.shift()) all.push(e);
    return all;
  }
}

function noop(): void {}
