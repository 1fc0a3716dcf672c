/**
 * Time as an injected seam: anything that decides due-ness or ownership reads a Clock, and
 * anything that waits schedules through one, so tests drive every timer with one ManualClock
 * and a cross-process store can share one notion of "now".
 */

declare const timerHandleBrand: unique symbol;

/** An opaque handle of a timer scheduled by {@link Clock.setTimeout}; pass it to `clearTimeout`. */
export interface TimerHandle {
  readonly [timerHandleBrand]: true;
}

/** Options of {@link Clock.setTimeout}. */
export interface TimerOptions {
  /**
   * Do not keep the process alive for this timer alone (Node's `unref`); default false.
   * Meaningless for {@link ManualClock}.
   */
  unref?: boolean;
}

/** Longest delay a timer honours (2^31-1 ms, about 24.8 days); longer delays are clamped to it. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * The time source and timer service every component takes as its `clock` option.
 *
 * Contract, shared by {@link systemClock} and {@link ManualClock}:
 * - `now()` is epoch milliseconds; timers fire once `now()` has reached their due time.
 * - `setTimeout(fn, ms)` runs `fn` once, `ms` after now; `ms` is clamped to `0..MAX_TIMER_MS`
 *   (NaN counts as 0). Timers due at the same time fire in the order they were scheduled.
 * - `clearTimeout(handle)` cancels a pending timer; clearing a fired, cleared or undefined
 *   handle does nothing.
 * - `sleep(ms, signal)` resolves after `ms`; when `signal` aborts (or already has) it rejects
 *   with `signal.reason` at once. Its timer and abort listener are always removed.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds; returns a handle for {@link Clock.clearTimeout}. */
  setTimeout(fn: () => void, ms: number, options?: TimerOptions): TimerHandle;
  /** Cancels a timer; a no-op for a fired, already cleared or undefined handle. */
  clearTimeout(handle: TimerHandle | undefined): void;
  /** Resolves after `ms`; rejects with `signal.reason` as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function clampDelayMs(ms: number): number {
  return Number.isNaN(ms) ? 0 : Math.min(Math.max(0, ms), MAX_TIMER_MS);
}

/** The abortable sleep both clocks share, built on the clock's own timers. */
function sleepOn(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The wall clock and Node's timers (`unref`'ed when asked). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms, options) {
    const timer = setTimeout(fn, clampDelayMs(ms));
    if (options?.unref) timer.unref();
    // The handle is Node's Timeout, branded so that only a Clock can take it back.
    return timer as unknown as TimerHandle;
  },
  clearTimeout(handle) {
    if (handle !== undefined) clearTimeout(handle as unknown as NodeJS.Timeout);
  },
  sleep(ms, signal) {
    return sleepOn(systemClock, ms, signal);
  },
};

interface ManualTimer {
  readonly seq: number;
  readonly dueMs: number;
  readonly fn: () => void;
}

/**
 * A clock tests move by hand; it drives its own timers and nothing else.
 *
 * - `advance(ms)` moves time to `now + ms`, firing every timer due by then in due order (ties in
 *   scheduling order), with `now()` set to each timer's due time while it runs. A timer that a
 *   callback schedules for a time still ≤ the target fires in the same advance. Promise
 *   continuations run only after `advance` returns.
 * - `advanceAsync(ms)` does the same but lets pending promise continuations (microtasks) run
 *   before the first timer, between timers and at the end, so `await clock.sleep()` chains and
 *   other async code react to each timer before the next one fires.
 * - A callback that throws does not stop the advance; the first error is rethrown at its end.
 * - Advances may overlap (a continuation may start one); `now()` never moves backwards except
 *   by `set`, which steps the wall clock without time passing for timers.
 */
export class ManualClock implements Clock {
  #nowMs: number;
  #seq = 0;
  readonly #timers = new Map<TimerHandle, ManualTimer>();

  /** Starts at `startMs`; default 1_700_000_000_000 (Nov 2023). */
  constructor(startMs = 1_700_000_000_000) {
    this.#nowMs = startMs;
  }

  now(): number {
    return this.#nowMs;
  }

  setTimeout(fn: () => void, ms: number, _options?: TimerOptions): TimerHandle {
    const seq = ++this.#seq;
    const handle = { seq } as unknown as TimerHandle;
    this.#timers.set(handle, { seq, dueMs: this.#nowMs + clampDelayMs(ms), fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle !== undefined) this.#timers.delete(handle);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers scheduled and neither fired nor cleared. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Due time of the next pending timer, or undefined when none is pending. */
  nextDueMs(): number | undefined {
    return this.#next(Number.POSITIVE_INFINITY)?.[1].dueMs;
  }

  /** Moves time forward by `ms` (>= 0), firing due timers synchronously; see the class doc. */
  advance(ms: number): void {
    const targetMs = this.#target(ms);
    const errors: unknown[] = [];
    for (let due = this.#next(targetMs); due; due = this.#next(targetMs)) this.#fire(due, errors);
    this.#nowMs = Math.max(this.#nowMs, targetMs);
    if (errors.length > 0) throw errors[0];
  }

  /** Moves time forward by `ms` (>= 0), letting promise continuations run around each timer. */
  async advanceAsync(ms: number): Promise<void> {
    const targetMs = this.#target(ms);
    const errors: unknown[] = [];
    await flushMicrotasks();
    for (let due = this.#next(targetMs); due; due = this.#next(targetMs)) {
      this.#fire(due, errors);
      await flushMicrotasks();
    }
    // Another advance may have run meanwhile (a continuation started one): never move back.
    this.#nowMs = Math.max(this.#nowMs, targetMs);
    await flushMicrotasks();
    if (errors.length > 0) throw errors[0];
  }

  /**
   * Steps the wall clock to `ms` without time passing for timers, as a suspended machine or
   * an NTP step does to Node's monotonic timers: nothing fires, and each pending timer keeps
   * the delay it had left (its due time moves by the same step).
   */
  set(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError(`ManualClock.set: got ${ms}, expected a finite ms`);
    const stepMs = ms - this.#nowMs;
    for (const [handle, timer] of this.#timers)
      this.#timers.set(handle, { ...timer, dueMs: timer.dueMs + stepMs });
    this.#nowMs = ms;
  }

  #target(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`ManualClock.advance: got ${ms}, expected a finite ms >= 0`);
    return this.#nowMs + ms;
  }

  #next(targetMs: number): [TimerHandle, ManualTimer] | undefined {
    let best: [TimerHandle, ManualTimer] | undefined;
    for (const entry of this.#timers) {
      const t = entry[1];
      if (t.dueMs > targetMs) continue;
      if (!best || t.dueMs < best[1].dueMs || (t.dueMs === best[1].dueMs && t.seq < best[1].seq))
        best = entry;
    }
    return best;
  }

  #fire([handle, timer]: [TimerHandle, ManualTimer], errors: unknown[]): void {
    this.#timers.delete(handle);
    // Time never runs backwards: a timer already due when an advance began fires at the present.
    this.#nowMs = Math.max(this.#nowMs, timer.dueMs);
    try {
      timer.fn();
    } catch (err) {
      errors.push(err);
    }
  }
}

/** Lets every queued promise continuation run: Node drains microtasks before an immediate. */
function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
