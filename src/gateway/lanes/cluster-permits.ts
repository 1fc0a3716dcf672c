/**
 * The cluster-wide cap on model calls (`lanes.clusterMaxConcurrent`): permits in the shared
 * store (PermitRepo), so every gateway process sharing it runs at most `limit` calls at once,
 * person first across processes. This process's calls wait here, polled and woken in-process.
 */
import type { PermitRepo } from "../../store/repos/permit-repo.js";
import { type Clock, type TimerHandle, systemClock } from "../../util/clock.js";
import { LaneAbortedError } from "./errors.js";
import type { LanePriority, SlotLease } from "./types.js";

/** Options for {@link ClusterPermits}. */
export interface ClusterPermitsOptions {
  /** The store's permits (`store.permits`). Required. */
  permits: PermitRepo;
  /** This process's instance id (`gw_…`): the owner of its permits. Required. */
  owner: string;
  /** Model calls the whole cluster runs at once: an integer ≥ 1. Required. */
  limit: number;
  /**
   * Permits only `human` calls take, cluster-wide: 0 to `limit - 1`. Default 1 (0 when `limit`
   * is 1). Larger values are clamped to `limit - 1` so background work can ever run.
   */
  reservedForHuman?: number;
  /**
   * How long a permit (and a waiting call's demand) lives without renewal: a process that dies
   * holding one leaks it for at most this long. Renewed every third of it. Default 30_000.
   */
  ttlMs?: number;
  /** How often a waiting call asks the store again when nothing in-process woke it. Default 100. */
  pollMs?: number;
  /** Time and timers (polls, renewals). Default: the wall clock. */
  clock?: Clock;
  /** Told of a store failure (the waiting call keeps waiting and asks again on the next poll). */
  onError?: (err: unknown, what: string) => void;
}

const RANKS: readonly LanePriority[] = ["human", "normal", "background"];

interface Waiter {
  callId: string;
  priority: LanePriority;
  signal: AbortSignal;
  done: boolean;
  resolve: (lease: SlotLease) => void;
  reject: (reason: unknown) => void;
  onAbort: () => void;
}

/**
 * Owns this process's cluster permits: the calls waiting for one (per priority, FIFO), the
 * permits it holds, and the two timers (poll, renewal) that run only while there are either.
 *
 * A pass asks the store for waiters in priority order. Every waiting person is asked each pass,
 * so each has a live demand row that keeps other processes' normal and background calls out.
 * Once one call is refused, only the first waiting call of each lower rank is asked: it would be
 * refused too, but its answer stores its demand, so helper work waiting behind this process's
 * person still goes before other processes' background work. A pass runs on each new call, on each release of one of our permits (the
 * in-process wake), and every `pollMs` while calls wait (a permit freed by another process).
 *
 * Renewal: permits are renewed on a timer of their own, by call id, not through the session
 * lease renewal (`LeaseRepo.renew`): that renews everything an owner holds for as long as the
 * process lives, so a permit whose release was lost (the store failing at that moment) would
 * stay taken until the process dies; renewed by call id, a lost release frees itself after
 * `ttlMs`, and a process that dies or pauses frees all of its permits after `ttlMs` too.
 */
export class ClusterPermits {
  readonly #repo: PermitRepo;
  readonly #owner: string;
  readonly #limit: number;
  readonly #reserved: number;
  readonly #ttlMs: number;
  readonly #pollMs: number;
  readonly #clock: Clock;
  readonly #onError: (err: unknown, what: string) => void;
  readonly #waiting: Record<LanePriority, Waiter[]> = { human: [], normal: [], background: [] };
  readonly #held = new Set<string>();
  #seq = 0;
  #pumping = false;
  #again = false;
  #pollTimer: TimerHandle | undefined;
  #renewTimer: TimerHandle | undefined;
  #closed = false;

  /** @throws RangeError naming the option, the value and what was expected. */
  constructor(options: ClusterPermitsOptions) {
    const limit = options.limit;
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`ClusterPermits: limit must be an integer ≥ 1, got ${String(limit)}`);
    const reserved = options.reservedForHuman ?? 1;
    if (!Number.isInteger(reserved) || reserved < 0)
      throw new RangeError(
        `ClusterPermits: reservedForHuman must be an integer ≥ 0, got ${String(reserved)}`,
      );
    const ttlMs = options.ttlMs ?? 30_000;
    if (!Number.isInteger(ttlMs) || ttlMs < 3)
      throw new RangeError(`ClusterPermits: ttlMs must be an integer ≥ 3, got ${String(ttlMs)}`);
    const pollMs = options.pollMs ?? 100;
    if (!Number.isInteger(pollMs) || pollMs < 1)
      throw new RangeError(`ClusterPermits: pollMs must be an integer ≥ 1, got ${String(pollMs)}`);
    this.#repo = options.permits;
    this.#owner = options.owner;
    this.#limit = limit;
    this.#reserved = Math.min(reserved, limit - 1);
    this.#ttlMs = ttlMs;
    this.#pollMs = pollMs;
    this.#clock = options.clock ?? systemClock;
    this.#onError = options.onError ?? (() => {});
  }

  /** Permits this process holds now. */
  get held(): number {
    return this.#held.size;
  }

  /** This process's calls waiting for a permit, per priority. */
  waiting(): Record<LanePriority, number> {
    const w = this.#waiting;
    return { human: w.human.length, normal: w.normal.length, background: w.background.length };
  }

  /**
   * Waits for a cluster permit for one model call. Resolves with a lease whose `release()` is
   * idempotent; rejects with `signal.reason` if the signal aborts first (the call's demand is
   * withdrawn from the store), or with LaneAbortedError("shutdown") once closed.
   */
  acquire(priority: LanePriority, signal: AbortSignal): Promise<SlotLease> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#closed) return Promise.reject(new LaneAbortedError("shutdown", "cluster permits are closed"));
    return new Promise<SlotLease>((resolve, reject) => {
      const waiter: Waiter = {
        callId: `${++this.#seq}`,
        priority,
        signal,
        done: false,
        resolve,
        reject,
        onAbort: () => this.#cancel(waiter, signal.reason),
      };
      this.#waiting[priority].push(waiter);
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.#armRenewal();
      this.#kick();
    });
  }

  /**
   * Stops the timers, fails every waiting call with LaneAbortedError("shutdown") and removes
   * all of this process's permits and demands from the store. Call it once nothing of this
   * process calls a model any more.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#clock.clearTimeout(this.#pollTimer);
    this.#clock.clearTimeout(this.#renewTimer);
    this.#pollTimer = this.#renewTimer = undefined;
    // No withdrawals: releaseOwner below removes every demand in one step.
    for (const p of RANKS)
      for (const w of [...this.#waiting[p]]) this.#cancel(w, new LaneAbortedError("shutdown"), false);
    this.#held.clear();
    await this.#repo.releaseOwner(this.#owner);
  }

  #cancel(waiter: Waiter, reason: unknown, withdraw = true): void {
    if (waiter.done) return;
    this.#settle(waiter);
    waiter.reject(reason);
    if (!withdraw) return;
    this.#repo
      .withdraw(this.#owner, waiter.callId)
      .catch((err: unknown) => this.#onError(err, "withdraw a demand"));
  }

  /** Takes a waiter out of its list and its abort listener off. */
  #settle(waiter: Waiter): void {
    waiter.done = true;
    waiter.signal.removeEventListener("abort", waiter.onAbort);
    const list = this.#waiting[waiter.priority];
    const at = list.indexOf(waiter);
    if (at >= 0) list.splice(at, 1);
  }

  /** Runs a pass now, or right after the one under way. */
  #kick(): void {
    if (this.#closed) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    this.#pump()
      .catch((err: unknown) => this.#onError(err, "ask for permits"))
      .finally(() => {
        this.#pumping = false;
        this.#armPoll();
      });
  }

  async #pump(): Promise<void> {
    do {
      this.#again = false;
      await this.#pass();
    } while (this.#again && !this.#closed);
  }

  async #pass(): Promise<void> {
    let refused = false;
    for (const priority of RANKS) {
      // After a refusal only each lower rank's first call is asked: it is refused as well, and
      // that answer stores its demand, which keeps other processes' lower-ranked calls out.
      let asked = false;
      for (const waiter of [...this.#waiting[priority]]) {
        if (waiter.done) continue;
        if (refused && priority !== "human" && asked) break;
        asked = true;
        const answer = await this.#repo.tryAcquire({
          owner: this.#owner,
          callId: waiter.callId,
          priority,
          now: this.#clock.now(),
          ttlMs: this.#ttlMs,
          limit: this.#limit,
          reservedForHuman: this.#reserved,
        });
        if (this.#closed || waiter.done) {
          // Aborted (or closed) while the store answered: give back what that answer wrote.
          this.#giveBack(waiter.callId, answer.granted);
          if (this.#closed) return;
          continue;
        }
        if (!answer.granted) {
          refused = true;
          continue;
        }
        this.#settle(waiter);
        this.#held.add(waiter.callId);
        waiter.resolve(this.#lease(waiter.callId));
      }
    }
  }

  #lease(callId: string): SlotLease {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        if (!this.#held.delete(callId)) return; // closed meanwhile: releaseOwner took it
        this.#repo
          .release(this.#owner, callId)
          .catch((err: unknown) => this.#onError(err, "release a permit"))
          .finally(() => {
            if (this.#hasWaiters()) this.#kick(); // the in-process wake
          });
      },
    };
  }

  #giveBack(callId: string, granted: boolean): void {
    const step = granted ? this.#repo.release(this.#owner, callId) : this.#repo.withdraw(this.#owner, callId);
    step.catch((err: unknown) => this.#onError(err, "give back an aborted call's permit"));
  }

  #hasWaiters(): boolean {
    const w = this.#waiting;
    return w.human.length + w.normal.length + w.background.length > 0;
  }

  #armPoll(): void {
    if (this.#closed || this.#pollTimer !== undefined || !this.#hasWaiters()) return;
    this.#pollTimer = this.#clock.setTimeout(
      () => {
        this.#pollTimer = undefined;
        this.#kick();
      },
      this.#pollMs,
      { unref: true },
    );
  }

  #armRenewal(): void {
    if (this.#closed || this.#renewTimer !== undefined) return;
    this.#renewTimer = this.#clock.setTimeout(
      () => {
        this.#renewTimer = undefined;
        const ids = [...this.#held];
        for (const p of RANKS) for (const w of this.#waiting[p]) ids.push(w.callId);
        if (ids.length === 0) return;
        this.#armRenewal();
        this.#repo
          .renew(this.#owner, ids, this.#clock.now(), this.#ttlMs)
          .catch((err: unknown) => this.#onError(err, "renew permits"));
      },
      Math.floor(this.#ttlMs / 3),
      { unref: true },
    );
  }
}
