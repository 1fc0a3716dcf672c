/**
 * This process's ownership of sessions, for gateways that share one database: a turn runs only
 * under its session's lease (a fence number the store checks on every claim, append and commit),
 * the leases are renewed on the clock well inside their TTL, and a session whose lease was lost
 * (a long stall, a takeover) has its running turn aborted. A lease is kept between turns while
 * its session is busy and reused without a store round trip while it has more than half its
 * TTL left; it is given back once the session was idle for a renewal period (or at shutdown),
 * so a session that moves between processes changes hands within about a third of the TTL. Every few seconds the keeper also
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
  /**
   * Every lease key the renewal extended, sessions' and resources' alike (this owner renews all
   * its leases in one step), and until when: the resource leases' holder learns from it what it
   * still holds.
   */
  onRenewed?(stillHeld: ReadonlySet<string>, until: number): Promise<void>;
}

/** A lease this process holds, and what it is used for now. */
interface HeldLease {
  fence: number;
  /** When the lease expires as last granted or renewed. */
  until: number;
  /** Turns running under it now. */
  active: number;
  lastUsed: number;
  /** Kept until restart: a turn under it could not be saved, its messages stay `running`. */
  pinned: boolean;
}

/** Owns the session leases this process holds (see the file header). */
export class SessionLeases {
  readonly #o: SessionLeasesOptions;
  readonly #held = new Map<string, HeldLease>();
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
    const now = clock.now();
    const held = this.#held.get(sessionKey);
    if (held && held.until - now > ttlMs / 2) {
      held.active++;
      held.lastUsed = now;
      return { owner, fence: held.fence };
    }
    const got = await store.leases.acquireSession(sessionKey, owner, now, ttlMs);
    if (!got) return undefined;
    if (got.requeued > 0)
      this.#o.logger.warn(
        { sessionKey, requeued: got.requeued },
        "took over a session whose previous owner stopped",
      );
    const current = this.#held.get(sessionKey);
    this.#held.set(sessionKey, {
      fence: got.fence,
      until: got.leaseUntil,
      active: (current?.fence === got.fence ? current.active : 0) + 1,
      lastUsed: now,
      pinned: current?.fence === got.fence ? current.pinned : false,
    });
    return { owner, fence: got.fence };
  }

  /**
   * A turn under `lease` ended. The lease stays held (reused by the session's next turn) until
   * the session has been idle for a renewal period; `keep` pins it until restart (the turn could
   * not be saved: its messages stay `running`, to be redone after a restart).
   */
  release(sessionKey: string, lease: SessionFence, options: { keep?: boolean } = {}): void {
    const held = this.#held.get(sessionKey);
    if (!held || held.fence !== lease.fence) return;
    held.active = Math.max(0, held.active - 1);
    held.lastUsed = this.#o.clock.now();
    if (options.keep) held.pinned = true;
  }

  /** Gives back every lease no turn uses (at shutdown): their queued work may move on at once. */
  async releaseIdle(minIdleMs = 0): Promise<void> {
    const { store, owner, clock } = this.#o;
    const now = clock.now();
    for (const [sessionKey, held] of [...this.#held]) {
      if (held.active > 0 || held.pinned || now - held.lastUsed < minIdleMs) continue;
      this.#held.delete(sessionKey);
      const released = await store.leases.releaseSession(sessionKey, owner, held.fence, now);
      if (released && released.requeued > 0)
        this.#o.logger.info(
          { sessionKey, requeued: released.requeued },
          "gave a session back with unfinished messages",
        );
    }
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
    const now = clock.now();
    const renewal = await store.leases.renew(owner, now, ttlMs);
    const still = new Set(renewal.sessions);
    for (const [sessionKey, held] of [...this.#held]) {
      if (still.has(sessionKey)) {
        held.until = now + ttlMs;
        continue;
      }
      // Taken (or extended) while the renewal was on its way — the store's calls are truly
      // concurrent on PostgreSQL — the renewal cannot have seen it: ask the store itself.
      if (await this.#stillOurs(sessionKey, held.fence)) continue;
      if (this.#held.get(sessionKey) !== held) continue;
      this.#held.delete(sessionKey);
      logger.error({ sessionKey }, "lost the session's lease (stalled past its TTL?); aborting its turn");
      this.#o.onLost(sessionKey);
    }
    await this.#o.onRenewed?.(still, now + ttlMs);
    await this.releaseIdle(Math.floor(ttlMs / 3));
    await this.#o.onSweep();
  }

  /** Whether the store says this process holds `sessionKey` under `fence` now, unexpired. */
  async #stillOurs(sessionKey: string, fence: number): Promise<boolean> {
    const lease = await this.#o.store.leases.getSession(sessionKey, this.#o.clock.now());
    return lease?.owner === this.#o.owner && lease.fence === fence;
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
