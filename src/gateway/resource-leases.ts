/**
 * Duties only one gateway process of a cluster may run at a time: a Telegram bot's long polling
 * (Telegram answers a second poller with 409), a Discord bot's gateway connection, the heartbeat.
 * Each is a resource lease in the store (`resource:<name>`, see RESOURCE_LEASE_PREFIX): this
 * process starts the duty once it holds the lease and stops it as soon as it learns the lease
 * is gone (renewed with the session leases on their timer, every third of the TTL). A process
 * that wants a duty it does not hold asks again on every renewal, so when the holder dies (or
 * stalls past the TTL) another process takes the duty over within `leaseTtlMs` plus one renewal
 * period; a holder that stops cleanly releases it, and a dead holder on this host is retired at
 * the next start, both at once. One process alone holds every duty from its first attempt.
 */
import { resourceLeaseKey } from "../store/leases.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** What runs while the lease is held. */
export interface Duty {
  /** The lease was granted: start the duty. A rejection is logged; the lease stays held. */
  start(): Promise<void> | void;
  /** The lease is gone (lost, or released at stop): stop the duty. Must not throw for long. */
  stop(): Promise<void> | void;
}

export interface ResourceLeasesOptions {
  store: Store;
  /** This process's owner id (`gw_…`). */
  owner: string;
  ttlMs: number;
  clock: Clock;
  logger: Logger;
}

interface Wanted {
  duty: Duty;
  /** Fence of the lease while held. */
  fence: number | undefined;
  /** Until when the lease runs as last granted or renewed (epoch ms on this process's clock). */
  until: number;
  /** The duty's start or stop in progress: transitions of one duty never overlap. */
  change: Promise<void>;
}

/** Owns the resource leases this process wants and holds, and starts and stops their duties. */
export class ResourceLeases {
  readonly #o: ResourceLeasesOptions;
  readonly #wanted = new Map<string, Wanted>();
  #stopped = false;

  constructor(options: ResourceLeasesOptions) {
    this.#o = options;
  }

  /**
   * Wants the resource `name` for `duty`: takes the lease now if it is free (and starts the
   * duty, awaited: a duty that fails to start at start-up is the caller's error), else on a
   * later renewal. Resolves true when this process holds it now.
   */
  async want(name: string, duty: Duty): Promise<boolean> {
    if (this.#wanted.has(name)) throw new Error(`resource ${name} is wanted twice`);
    const wanted: Wanted = { duty, fence: undefined, until: 0, change: Promise.resolve() };
    this.#wanted.set(name, wanted);
    if (!(await this.#take(name, wanted))) {
      this.#o.logger.info({ resource: name }, "another node holds this duty; standing by to take it over");
      return false;
    }
    await duty.start();
    return true;
  }

  /**
   * How long this process still holds `name` for sure, in ms: held as of its last renewal, until
   * that grant or renewal runs out on this process's clock; 0 when not held. It reaches 0 the
   * moment a stall outlasts the lease, before the next renewal says whether another node took
   * it; a connection opened now must not outlive it (a long poll past it would overlap the
   * next holder's).
   */
  remainingMs(name: string): number {
    const wanted = this.#wanted.get(name);
    return wanted?.fence === undefined ? 0 : Math.max(0, wanted.until - this.#o.clock.now());
  }

  /**
   * After a renewal of this owner's leases (`stillHeld`: every lease key it renewed, now held
   * `until`): keeps the duties still held, settles the ones whose lease is missing, and asks for
   * the ones not held. Duties start and stop in the background (each logged if it fails).
   */
  async renewed(stillHeld: ReadonlySet<string>, until: number): Promise<void> {
    if (this.#stopped) return;
    for (const [name, wanted] of this.#wanted) {
      if (wanted.fence === undefined) {
        if ((await this.#take(name, wanted)) && !this.#stopped) {
          this.#o.logger.warn({ resource: name, fence: wanted.fence }, "took over a duty another node held");
          this.#change(name, wanted, () => wanted.duty.start());
        }
      } else if (stillHeld.has(resourceLeaseKey(name))) wanted.until = until;
      else await this.#missing(name, wanted, wanted.fence);
    }
  }

  /** A held lease the renewal did not extend: still ours, lapsed and taken again, or lost. */
  async #missing(name: string, wanted: Wanted, fence: number): Promise<void> {
    const { store, owner, clock, logger } = this.#o;
    // Granted while the renewal was on its way (the store's calls run concurrently on
    // PostgreSQL), the renewal cannot have seen it: the store itself says.
    const lease = await store.leases.getSession(resourceLeaseKey(name), clock.now());
    if ((lease?.owner === owner && lease.fence === fence) || wanted.fence !== fence) return;
    // It lapsed (this process stalled, or its clock jumped). Taken again at once, its fence
    // moves by exactly one when nobody held it meanwhile: the duty then goes on as it was.
    if (await this.#take(name, wanted)) {
      if (wanted.fence === fence + 1) {
        logger.warn({ resource: name }, "a resource lease lapsed and nobody took it; holding it again");
        return;
      }
      logger.error({ resource: name }, "another node held this duty meanwhile; restarting it here");
      this.#change(name, wanted, async () => {
        await wanted.duty.stop();
        await wanted.duty.start();
      });
      return;
    }
    wanted.fence = undefined;
    logger.error({ resource: name }, "lost a resource lease (stalled past its TTL?); stopping its duty");
    this.#change(name, wanted, () => wanted.duty.stop());
  }

  /** Asks for the lease of `name`; when granted, records its fence and end. True when held. */
  async #take(name: string, wanted: Wanted): Promise<boolean> {
    const { store, owner, clock, ttlMs } = this.#o;
    const got = await store.leases.acquireSession(resourceLeaseKey(name), owner, clock.now(), ttlMs);
    if (!got) return false;
    wanted.fence = got.fence;
    wanted.until = got.leaseUntil;
    return true;
  }

  /**
   * Stops every duty this process holds and gives its lease back, so another node takes it over
   * at once (a clean stop). Idempotent; wants nothing afterwards.
   */
  async releaseAll(): Promise<void> {
    this.#stopped = true;
    const { store, owner, clock, logger } = this.#o;
    for (const [name, wanted] of this.#wanted) {
      const fence = wanted.fence;
      if (fence === undefined) continue;
      // Stopped while still held: a duty's last words (Telegram's offset confirmation) are its own.
      this.#change(name, wanted, () => wanted.duty.stop());
      await wanted.change;
      wanted.fence = undefined;
      await store.leases
        .releaseSession(resourceLeaseKey(name), owner, fence, clock.now())
        .catch((err: unknown) =>
          logger.warn({ err, resource: name }, "could not give a resource lease back"),
        );
    }
  }

  /** Chains a start or stop after the duty's previous one; a failure is logged, never thrown. */
  #change(name: string, wanted: Wanted, step: () => Promise<void> | void): void {
    wanted.change = wanted.change
      .then(step)
      .catch((err: unknown) =>
        this.#o.logger.error({ err, resource: name }, "a duty failed to start or stop"),
      );
  }
}
