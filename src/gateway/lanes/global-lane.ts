/**
 * Level 2 of the lane queue: the in-process pool of model-call slots shared by every session.
 * A task holds a slot only for the length of one model call, never while it waits in its
 * session lane or while its tools run. Admission is by priority with slots kept for humans.
 */
import { type Clock, systemClock } from "../../util/clock.js";
import type { LanePriority, ModelSlotPool, SlotLease } from "./types.js";

/** Options for {@link GlobalLane}. */
export interface GlobalLaneOptions {
  /** Slots in the pool: an integer ≥ 1. Default 4. */
  maxConcurrent?: number;
  /**
   * Slots that only `human` work may take: an integer from 0 to `maxConcurrent - 1`. Default 1
   * (0 when `maxConcurrent` is 1, so a one-slot pool needs no second option).
   * `normal` and `background` work both respect the reservation.
   */
  reservedForHuman?: number;
  /**
   * Called synchronously at every grant with the priority and how long the acquire waited
   * (0 when it was granted at once). Exceptions it throws are ignored.
   */
  onWait?: (priority: LanePriority, waitedMs: number) => void;
  /** Time source for `waitedMs`. Default: the wall clock. */
  clock?: Clock;
}

const WAITING = 0;
const HELD = 1;
const DONE = 2;

/** Friend access for {@link SlotNode}; assigned once in GlobalLane's static block. */
let releaseSlot: (pool: GlobalLane, node: SlotNode) => void;
let cancelWaiter: (pool: GlobalLane, node: SlotNode) => void;

/**
 * One acquire: first a waiter in a wait list, then the lease handed back, so the hot path
 * allocates nothing else. It is its own abort listener (`handleEvent`) to avoid a closure.
 */
class SlotNode implements SlotLease {
  prev: SlotNode | null = null;
  next: SlotNode | null = null;
  state = WAITING;
  enqueuedAtMs = 0;
  signal: AbortSignal | null = null;
  resolve: (lease: SlotLease) => void = noop;
  reject: (reason: unknown) => void = noop;
  readonly pool: GlobalLane;
  readonly priority: LanePriority;

  constructor(pool: GlobalLane, priority: LanePriority) {
    this.pool = pool;
    this.priority = priority;
  }

  release(): void {
    if (this.state === HELD) releaseSlot(this.pool, this);
  }

  handleEvent(): void {
    if (this.state === WAITING) cancelWaiter(this.pool, this);
  }
}

/** A FIFO of waiters, doubly linked so an aborted waiter leaves in O(1). */
class WaitList {
  head: SlotNode | null = null;
  tail: SlotNode | null = null;
  size = 0;

  push(node: SlotNode): void {
    node.prev = this.tail;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.size++;
  }

  shift(): SlotNode | null {
    const node = this.head;
    if (node) this.remove(node);
    return node;
  }

  remove(node: SlotNode): void {
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = null;
    this.size--;
  }
}

/**
 * The in-memory {@link ModelSlotPool}: `maxConcurrent` slots, three FIFO wait lists (human,
 * normal, background) and `reservedForHuman` slots that non-human work never takes.
 *
 * Admission runs on every acquire and release, in O(1): the oldest waiting human first, then
 * the oldest normal, then the oldest background. Normal and background work take a slot only
 * while `inUse < maxConcurrent - reservedForHuman`, so a human's acquire succeeds at once while
 * a reserved slot is free, and is first in line on the next release otherwise.
 *
 * Invariant after every public call: no waiter could be admitted. Hence a non-human grant never
 * happens while a human waits (a waiting human means every slot is in use).
 */
export class GlobalLane implements ModelSlotPool {
  static {
    releaseSlot = (pool, node) => pool.#release(node);
    cancelWaiter = (pool, node) => pool.#cancel(node);
  }

  readonly #max: number;
  readonly #reserved: number;
  /** Normal and background work is admitted only while `inUse` is below this. */
  readonly #nonHumanLimit: number;
  readonly #onWait: ((priority: LanePriority, waitedMs: number) => void) | undefined;
  readonly #clock: Clock;
  readonly #lists: Record<LanePriority, WaitList> = {
    human: new WaitList(),
    normal: new WaitList(),
    background: new WaitList(),
  };
  readonly #held: Record<LanePriority, number> = { human: 0, normal: 0, background: 0 };
  #inUse = 0;

  /** @throws RangeError naming the option, the value and what was expected. */
  constructor(options: GlobalLaneOptions = {}) {
    const max = options.maxConcurrent ?? 4;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`GlobalLane: maxConcurrent must be an integer ≥ 1, got ${show(max)}`);
    }
    const reserved = options.reservedForHuman ?? Math.min(1, max - 1);
    if (!Number.isInteger(reserved) || reserved < 0 || reserved > max - 1) {
      throw new RangeError(
        `GlobalLane: reservedForHuman must be an integer from 0 to ${max - 1} (maxConcurrent - 1), got ${show(reserved)}`,
      );
    }
    this.#max = max;
    this.#reserved = reserved;
    this.#nonHumanLimit = max - reserved;
    this.#onWait = options.onWait;
    this.#clock = options.clock ?? systemClock;
  }

  /** Slots in the pool. */
  get maxConcurrent(): number {
    return this.#max;
  }

  /** Slots only human work may take. */
  get reservedForHuman(): number {
    return this.#reserved;
  }

  /** Slots in use right now. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Waiters per priority. */
  waiting(): Record<LanePriority, number> {
    const l = this.#lists;
    return { human: l.human.size, normal: l.normal.size, background: l.background.size };
  }

  /** Slots in use per priority of the work holding them. */
  held(): Record<LanePriority, number> {
    return { ...this.#held };
  }

  /**
   * Takes a slot for one model call. Resolves with a lease whose `release()` is idempotent;
   * rejects with `signal.reason` if the signal is aborted before the slot is granted, and the
   * waiter leaves its list at once. A lease granted before the abort must still be released.
   */
  acquire(priority: LanePriority, signal: AbortSignal): Promise<SlotLease> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const node = new SlotNode(this, priority);
    // By the invariant, an admissible priority has nobody of its own or a higher rank waiting.
    if (this.#inUse < (priority === "human" ? this.#max : this.#nonHumanLimit)) {
      this.#grant(node, 0);
      return Promise.resolve(node);
    }
    return new Promise<SlotLease>((resolve, reject) => {
      node.resolve = resolve;
      node.reject = reject;
      node.signal = signal;
      node.enqueuedAtMs = this.#clock.now();
      this.#lists[priority].push(node);
      signal.addEventListener("abort", node, { once: true });
    });
  }

  #grant(node: SlotNode, waitedMs: number): void {
    node.state = HELD;
    this.#inUse++;
    this.#held[node.priority]++;
    if (this.#onWait) {
      try {
        this.#onWait(node.priority, waitedMs);
      } catch {
        // An observer must not be able to break admission.
      }
    }
  }

  #release(node: SlotNode): void {
    node.state = DONE;
    this.#inUse--;
    this.#held[node.priority]--;
    this.#admit();
  }

  #cancel(node: SlotNode): void {
    const signal = node.signal as AbortSignal;
    node.state = DONE;
    node.signal = null;
    this.#lists[node.priority].remove(node);
    node.reject(signal.reason);
  }

  /** Grants free slots to waiters in priority order; restores the invariant. */
  #admit(): void {
    const lists = this.#lists;
    while (this.#inUse < this.#max) {
      let node = lists.human.shift();
      if (!node) {
        if (this.#inUse >= this.#nonHumanLimit) return;
        node = lists.normal.shift() ?? lists.background.shift();
        if (!node) return;
      }
      (node.signal as AbortSignal).removeEventListener("abort", node);
      node.signal = null;
      this.#grant(node, this.#clock.now() - node.enqueuedAtMs);
      node.resolve(node);
    }
  }
}

function noop(): void {}

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
