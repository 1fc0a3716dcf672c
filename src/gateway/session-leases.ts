/**
 * This process's ownership of sessions, for gateways that share one database: a turn runs only
 * under its session's lease (a fence number the store checks on every claim, append and commit),
 * the leases are renewed on the clock well inside their TTL, and a session whose lease was lost
 * (a long stall, a takeover) has its running turn aborted. Every few seconds the keeper also
 * takes over work whose owner died (expired leases) and schedules queued sessions this process
 * may claim but has no turn for (messages another process accepted, or left behind).
 */
import type { SessionFence } from "../store/repos/lease-repo.js";
import type { Store } from "../store/types.js";
import type { Clock, TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

export interface SessionLeasesOptions {
  store: Store;
  /** This process's instance id (`gw_…`), the owner of its leases and rows. */
  owner: string;
  /** Lease lifetime; renewed every third of it. */
  ttlMs: number;
  clock: Clock;
  logger: Logger;
  /** A held session's lease was lost: abort its running turn (it commits nothing). */
  onLost(sessionKey: string): void;
  /** Periodic work after each renewal: takeovers and the queued-session sweep. */
  onSweep(): Promise<void>;
}

/** Owns the session leases this process holds (see the file header). */
export class SessionLeases {
  readonly #o: SessionLeasesOptions;
  readonly #held = new Map<string, number>();
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(options: SessionLeasesOptions) {
    if (!Number.isInteger(options.ttlMs) || options.ttlMs < 300)
      throw new RangeError(`SessionLeases.ttlMs: got ${options.ttlMs}, expected a whole number of ms ≥ 300`);
    this.#o = options;
  }

  get owner(): string {
    return this.#o.owner;
  }

  /** Takes the session's lease for a turn; undefined while another live process holds it. */
  async acquire(sessionKey: string): Promise<SessionFence | undefined> {
    const { store, owner, ttlMs, clock } = this.#o;
    const got = await store.leases.acquireSession(sessionKey, owner, clock.now(), ttlMs);
    if (!got) return undefined;
    if (got.requeued > 0)
      this.#o.logger.warn(
        { sessionKey, requeued: got.requeued },
        "took over a session whose previous owner stopped",
      );
    this.#held.set(sessionKey, got.fence);
    return { owner, fence: got.fence };
  }

  /** Gives the lease back after the turn; returns how many of its messages went back to the queue. */
  async release(sessionKey: string, lease: SessionFence): Promise<number> {
    if (this.#held.get(sessionKey) === lease.fence) this.#held.delete(sessionKey);
    const released = await this.#o.store.leases.releaseSession(
      sessionKey,
      lease.owner,
      lease.fence,
      this.#o.clock.now(),
    );
    return released?.requeued ?? 0;
  }

  /** Starts renewing (and sweeping) every third of the TTL. */
  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    this.#o.clock.clearTimeout(this.#timer);
  }

  /** One renewal and sweep now (tests, and the timer). */
  async tick(): Promise<void> {
    const { store, owner, ttlMs, clock, logger } = this.#o;
    const renewal = await store.leases.renew(owner, clock.now(), ttlMs);
    const still = new Set(renewal.sessions);
    for (const sessionKey of [...this.#held.keys()]) {
      if (still.has(sessionKey)) continue;
      this.#held.delete(sessionKey);
      logger.error({ sessionKey }, "lost the session's lease (stalled past its TTL?); aborting its turn");
      this.#o.onLost(sessionKey);
    }
    await this.#o.onSweep();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(
      () => {
        this.tick()
          .catch((err: unknown) => this.#o.logger.error({ err }, "lease renewal or sweep failed; retrying"))
          .finally(() => this.#schedule());
      },
      Math.max(100, Math.floor(this.#o.ttlMs / 3)),
      { unref: true },
    );
  }
}
