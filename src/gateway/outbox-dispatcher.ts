import { setMaxListeners } from "node:events";
import type { OutboxRecord } from "../store/repos/outbox-repo.js";
import { backoffDelayMs } from "../util/backoff.js";
import type { TimerHandle } from "../util/clock.js";
import {
  MAX_BACKOFF_MS,
  type OutboxDispatcherOptions,
  type Settings,
  outboxSettings,
} from "./outbox-options.js";
import { OutcomeRecorder } from "./outbox-outcomes.js";
import { OutboxSender } from "./outbox-send.js";

/** Options of {@link OutboxDispatcher}. Defaults are applied once, in the constructor. */

/**
 * Delivers outbox rows. Different chats go in parallel; one chat's rows go one at a time in
 * order, because claimDue never returns a row while an earlier row of its chat is pending or
 * sending. A pass claims rows while sends are in flight (up to `concurrency`), so one slow
 * chat holds back only itself.
 *
 * Delivery is at least once. While the process lives a delivered reply is never sent again: if
 * the store fails to record an outcome (markSent, markRetry, markDead), the write is logged and
 * re-attempted on its own timer with backoff (ceiling retryBaseMs doubling to 60 s) until it lands, and
 * once more at stop(); meanwhile the row stays `sending`, holding back only its chat, and takes
 * no send slot, so neither idle() nor stop() waits on a broken store. What is left `sending`
 * when the process stops or dies (a send interrupted by stop(), a receipt never recorded) goes
 * back to `pending` once its claim's lease has run out (OutboxRepo.resetExpired, at the next
 * start or a live gateway's takeover sweep), in doubt, so that one chunk can be sent twice;
 * so can a send that timed out but reached the platform. Channels close that window where their
 * platform allows: every send carries a stable `idempotencyKey` (`outbox-<id>-<created>`, for a
 * Discord nonce), and a row in doubt is first looked up by it (`Channel.findSent`, Slack).
 */
export class OutboxDispatcher {
  readonly #o: Settings;
  /** Sends in flight; each settles once its outcome is recorded, or given up at stop(). */
  readonly #inFlight = new Set<Promise<void>>();
  /** Writes outcomes, re-attempting those the store failed to record (their rows stay `sending`). */
  readonly #outcomes: OutcomeRecorder;
  /** One send each: its channel, its limits, its outcome. */
  readonly #sender: OutboxSender;
  #running = false;
  /** Set by every wake: something may have become claimable since the pass last looked. */
  #again = false;
  #wakeLoop: (() => void) | undefined;
  #stopped = false;
  #timer: TimerHandle | undefined;
  #idle: Promise<void> = Promise.resolve();
  /** While other processes may commit rows this one sends: look for them at least this often. */
  #pollMs: number | undefined;
  /** Aborted by stop(): every in-flight send's signal follows it. */
  readonly #stopping = new AbortController();
  /** Aborted once stop() has waited `stopTimeoutMs`: sends still running are left behind. */
  readonly #abandon = new AbortController();

  /** @throws RangeError naming the option, the value and what was expected. */
  constructor(options: OutboxDispatcherOptions) {
    this.#o = outboxSettings(options);
    // Every send in flight (up to maxInFlight) listens on both; each removes its listener when done.
    setMaxListeners(0, this.#stopping.signal, this.#abandon.signal);
    this.#outcomes = new OutcomeRecorder({
      clock: this.#o.clock,
      backoffMs: (n) => this.#backoffMs(n),
      isStopped: () => this.#stopped,
      onLateRecord: () => this.kick(), // its chat's next row may be due now
    });
    this.#sender = new OutboxSender({
      ...this.#o,
      outcomes: this.#outcomes,
      backoffMs: (n, retryAfterMs) => this.#backoffMs(n, retryAfterMs),
      stopping: this.#stopping.signal,
      abandon: this.#abandon.signal,
    });
  }

  /** Expires stale rows, each with a log line; call once at start-up before the first kick. */
  async expireStale(): Promise<number> {
    return this.#expire(this.#o.clock.now());
  }

  /**
   * Whether other gateway processes run on the store (`pollMs`: how often to look for rows they
   * commit for channels this one hosts, e.g. the replies of turns run elsewhere to the Telegram
   * bot this node polls) or not (undefined: only this process's commits and due times wake it).
   */
  pollOthers(pollMs: number | undefined): void {
    const was = this.#pollMs;
    this.#pollMs = pollMs;
    if (pollMs !== undefined && was === undefined) this.kick();
  }

  /** Asks for a pass soon; joins the one already running. No-op after stop(). */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#wake();
      return;
    }
    this.#running = true;
    this.#idle = this.#loop().finally(() => {
      this.#running = false;
    });
  }

  /**
   * Stops for good: no more claims, every in-flight send's signal aborted. Waits up to
   * `stopTimeoutMs` for those sends to settle (a send that still succeeds is recorded as sent);
   * sends still running then are left `sending`, to go back to `pending` at the next start.
   * Outcomes the store failed to record get one last attempt, then are logged as left `sending`.
   */
  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#o.clock.clearTimeout(this.#timer);
      this.#stopping.abort(new Error("outbox dispatcher stopped"));
      this.#wake();
    }
    if (this.#running) await this.#settleSends();
    await this.#outcomes.flush();
  }

  async #settleSends(): Promise<void> {
    const { clock } = this.#o;
    let limit: TimerHandle | undefined;
    const timedOut = new Promise<true>((resolve) => {
      limit = clock.setTimeout(() => resolve(true), this.#o.stopTimeoutMs);
    });
    try {
      if (await Promise.race([this.#idle.then(() => false), timedOut])) {
        this.#o.logger.warn(
          { inFlight: this.#inFlight.size, stopTimeoutMs: this.#o.stopTimeoutMs },
          "outbox stop: sends still running after stopTimeoutMs; they stay `sending` and are sent again after restart",
        );
        this.#abandon.abort();
      }
    } finally {
      clock.clearTimeout(limit);
    }
    // Once abandoned, every send settles at once; what remains is at most a store write.
    await this.#idle;
  }

  /** Resolves when no pass is running and no send is in flight (tests, drain). */
  async idle(): Promise<void> {
    while (this.#running) await this.#idle;
  }

  /**
   * One pass: claims due rows into free slots and starts their sends, and looks again whenever
   * a send settles (its chat's next row may now be due) or kick() is called. Ends when nothing
   * is in flight and nothing is due, with a timer armed for the next due row.
   */
  async #loop(): Promise<void> {
    for (;;) {
      this.#again = false;
      if (!this.#stopped) {
        try {
          await this.#fill();
        } catch (err) {
          this.#o.logger.error({ err }, "outbox pass failed; retrying in 1 s");
          this.#schedule(1_000);
        }
      }
      if (this.#again) continue;
      if (this.#inFlight.size === 0) return;
      // No await between the check of #again and this: a wake cannot be missed.
      await new Promise<void>((resolve) => {
        this.#wakeLoop = resolve;
      });
    }
  }

  #wake(): void {
    this.#again = true;
    const wake = this.#wakeLoop;
    this.#wakeLoop = undefined;
    wake?.();
  }

  /** Claims due rows while slots are free and starts a send for each. */
  async #fill(): Promise<void> {
    const { store, clock } = this.#o;
    for (;;) {
      if (this.#stopped) return;
      const free = this.#o.concurrency - this.#inFlight.size;
      if (free <= 0) return; // a settling send wakes the loop
      const now = clock.now();
      // A cheap read first: most passes find nothing due, and a claim is a write transaction.
      const hosted = this.#o.ownership?.hosted();
      const due = await store.outbox.nextDueAt(hosted ? { hosted } : undefined);
      if (due === undefined) {
        if (this.#pollMs !== undefined) this.#schedule(this.#pollMs);
        return;
      }
      if (due > now) {
        this.#schedule(Math.min(due - now, this.#pollMs ?? Number.POSITIVE_INFINITY));
        return;
      }
      // Expire at the same `now` as the claim: no row older than maxAgeMs is ever claimed, and
      // a claimed row's send starts at once.
      const expired = await this.#expire(now);
      const own = this.#o.ownership;
      const rows = await store.outbox.claimDue(
        now,
        free,
        own && hosted ? { owner: own.owner, ttlMs: own.ttlMs, hosted } : undefined,
      );
      // Claimed as stop() came: left `sending`, like an interrupted send, for the next start.
      if (this.#stopped) return;
      for (const row of rows) this.#start(row);
      if (rows.length === 0 && expired === 0) {
        // nextDueAt said due, claimDue found nothing: the store changed under us. Look again soon.
        this.#schedule(1_000);
        return;
      }
    }
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    const { clock } = this.#o;
    clock.clearTimeout(this.#timer);
    this.#timer = clock.setTimeout(() => this.kick(), Math.min(Math.max(0, delayMs), MAX_BACKOFF_MS), {
      unref: true,
    });
  }

  async #expire(now: number): Promise<number> {
    const { store, logger, metrics } = this.#o;
    const hosted = this.#o.ownership?.hosted();
    const expired = await store.outbox.expireOlderThan(
      now - this.#o.maxAgeMs,
      now,
      hosted ? { hosted } : undefined,
    );
    for (const row of expired) {
      logger.warn(
        {
          outboxId: row.id,
          channel: row.target.channel,
          chatId: row.target.chatId,
          ageMs: now - row.createdAt,
        },
        "reply expired unsent: older than outbox.maxAgeMs",
      );
      metrics.outbound.inc({ channel: row.target.channel, result: "expired" });
    }
    return expired.length;
  }

  #start(row: OutboxRecord): void {
    const settled: Promise<void> = this.#sender
      .sendOne(row)
      .catch((err: unknown) => {
        this.#o.logger.error({ err, outboxId: row.id }, "outbox send failed unexpectedly");
      })
      .finally(() => {
        this.#inFlight.delete(settled);
        this.#wake();
      });
    this.#inFlight.add(settled);
  }

  /** The platform's retry-after if given, else full jitter below min(60 s, retryBaseMs × 2^(n-1)). */
  #backoffMs(n: number, retryAfterMs?: number): number {
    return backoffDelayMs(n, {
      baseMs: this.#o.retryBaseMs,
      maxMs: MAX_BACKOFF_MS,
      random: this.#o.random,
      retryAfterMs,
    });
  }
}
