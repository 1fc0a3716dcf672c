/**
 * The callers waiting in `LaneQueue.drain`: each wait ends true when the queue settles them
 * (nothing runs or waits any more), or false at its own limit. Timers are cleared either way.
 */
import type { Clock, TimerHandle } from "../../util/clock.js";

/** Pending drain waits of one lane queue. */
export class DrainWaiters {
  readonly #clock: Clock;
  readonly #waiters = new Set<() => void>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Whether anyone is waiting. */
  get waiting(): boolean {
    return this.#waiters.size > 0;
  }

  /** Resolves true at the next {@link settle}, or false after `timeoutMs`. */
  async wait(timeoutMs: number): Promise<boolean> {
    let timer: TimerHandle | undefined;
    let waiter: (() => void) | undefined;
    try {
      return await new Promise<boolean>((resolve) => {
        waiter = () => resolve(true);
        this.#waiters.add(waiter);
        timer = this.#clock.setTimeout(() => resolve(false), timeoutMs);
      });
    } finally {
      this.#clock.clearTimeout(timer);
      if (waiter) this.#waiters.delete(waiter);
    }
  }

  /** Ends every wait with true: the queue has drained. */
  settle(): void {
    for (const waiter of this.#waiters) waiter();
  }
}
