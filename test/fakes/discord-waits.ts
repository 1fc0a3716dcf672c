/**
 * Event-driven waits for the fake Discord: a condition is re-checked whenever the fake reports a
 * change (a REST answer, a gateway frame, a dispatch, a socket opening or closing), never by
 * polling. Waits fail after their timeout or when the fake closes.
 */

interface Waiter {
  check: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Pending condition waits, re-checked on every change. */
export class Waits {
  readonly #waiters = new Set<Waiter>();
  #closed = false;

  /** Resolves once `check()` holds (checked now and after every change); rejects after `timeoutMs`. */
  waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (check()) return Promise.resolve();
    if (this.#closed) return Promise.reject(new Error(`FakeDiscord is closed (waiting for ${what})`));
    const promise = new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        check,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(new Error(`FakeDiscord: timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs),
      };
      waiter.timer.unref();
      this.#waiters.add(waiter);
    });
    promise.catch(() => {});
    return promise;
  }

  /** Re-checks every pending wait. */
  notify(): void {
    for (const waiter of [...this.#waiters]) {
      let done: boolean;
      try {
        done = waiter.check();
      } catch (error) {
        this.#settle(waiter);
        waiter.reject(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (done) {
        this.#settle(waiter);
        waiter.resolve();
      }
    }
  }

  /** Rejects every pending wait. */
  close(): void {
    this.#closed = true;
    for (const waiter of [...this.#waiters]) {
      this.#settle(waiter);
      waiter.reject(new Error("FakeDiscord closed"));
    }
  }

  #settle(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    this.#waiters.delete(waiter);
  }
}
