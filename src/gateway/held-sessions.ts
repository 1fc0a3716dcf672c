/**
 * A message for a session another process holds waits for that process. If that process died
 * (a node SIGKILLed on another host, where its death cannot be seen), its work is taken over
 * once its lease runs out — by the next sweep, up to a renewal period later. This watch arms one
 * timer for the moment the earliest such lease ends and runs the sweep then, so a takeover
 * follows the lease's expiry by milliseconds. A holder that is alive renews its lease; the sweep
 * then finds nothing and the holder runs the session as before.
 */
import type { Store } from "../store/types.js";
import type { Clock, TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

export interface HeldSessionWatchOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The takeover sweep (requeue expired work, schedule claimable sessions). */
  sweep(): Promise<void>;
}

/** After a lease runs out, how long to wait before sweeping (clocks and commits settle). */
const AFTER_EXPIRY_MS = 25;

/** Owns the one timer that sweeps when a session held elsewhere would be free (see the file header). */
export class HeldSessionWatch {
  readonly #o: HeldSessionWatchOptions;
  #timer: TimerHandle | undefined;
  #dueAt = Number.POSITIVE_INFINITY;
  #stopped = false;

  constructor(options: HeldSessionWatchOptions) {
    this.#o = options;
  }

  /** A turn of `sessionKey` found it held by another process: sweep when that lease ends. */
  held(sessionKey: string): void {
    if (this.#stopped) return;
    const { store, clock, logger } = this.#o;
    store.leases
      .getSession(sessionKey, clock.now())
      .then((lease) => {
        if (lease) this.#arm(lease.leaseUntil + AFTER_EXPIRY_MS);
      })
      .catch((err: unknown) => logger.warn({ err, sessionKey }, "could not read a held session's lease"));
  }

  stop(): void {
    this.#stopped = true;
    this.#o.clock.clearTimeout(this.#timer);
  }

  #arm(dueAt: number): void {
    if (this.#stopped || dueAt >= this.#dueAt) return;
    const { clock, logger } = this.#o;
    clock.clearTimeout(this.#timer);
    this.#dueAt = dueAt;
    this.#timer = clock.setTimeout(
      () => {
        this.#dueAt = Number.POSITIVE_INFINITY;
        if (this.#stopped) return;
        this.#o
          .sweep()
          .catch((err: unknown) => logger.warn({ err }, "takeover sweep failed; the next one retries"));
      },
      Math.max(0, dueAt - clock.now()),
      { unref: true },
    );
  }
}
