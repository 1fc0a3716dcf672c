/**
 * Sends committed replies: claims due outbox rows, hands each to its channel, and records the
 * outcome: `sent` with the platform's message id, a retry with backoff, or `dead`. Rows older
 * than `maxAgeMs` are expired with a log line instead of being sent late. Up to `concurrency`
 * sends run at once, each bounded by `sendTimeoutMs`; order within a chat comes from the store.
 */
import {
  type Channel,
  ChannelSendError,
  type ChatTarget,
  type OutboundMessage,
  type SendReceipt,
} from "../channels/types.js";
import type { OutboxRecord, Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { GatewayMetrics } from "./metrics.js";

/** Options of {@link OutboxDispatcher}. Defaults are applied once, in the constructor. */
export interface OutboxDispatcherOptions {
  store: Store;
  /** The channel that sends to `target`; undefined if it is not configured (the row goes dead). */
  channelFor(target: ChatTarget): Channel | undefined;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
  /** Replies older than this are expired, not sent (default 3_600_000: 1 h). */
  maxAgeMs?: number;
  /** Send attempts before a row is dead; every failed attempt counts (default 5). */
  maxAttempts?: number;
  /** Most sends in flight at once, across chats (default 32). */
  concurrency?: number;
  /**
   * First retry delay; doubles per attempt up to 60 s unless the platform says when (default
   * 1_000). Also paces re-attempts of an outcome the store failed to record.
   */
  retryBaseMs?: number;
  /**
   * Limit on one `channel.send` (default 30_000). Then its signal is aborted and the send counts
   * as a transient failure, retried with backoff, whether or not the channel honours the signal.
   */
  sendTimeoutMs?: number;
  /** How long stop() waits for aborted sends to settle and be recorded (default 5_000). */
  stopTimeoutMs?: number;
}

type Settings = Required<OutboxDispatcherOptions>;

/** An outcome the store failed to record, re-attempted on its own timer. */
interface UnrecordedWrite {
  readonly outcome: "sent" | "retry" | "dead";
  readonly log: Logger;
  readonly write: (now: number) => Promise<void>;
  /** Runs once the write lands: the outcome's log line and metric. */
  readonly onRecorded: () => void;
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

const MAX_BACKOFF_MS = 60_000;
/** The longest delay setTimeout honours; larger values fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Delivers outbox rows. Different chats go in parallel; one chat's rows go one at a time in
 * order, because claimDue never returns a row while an earlier row of its chat is pending or
 * sending. A pass claims rows while sends are in flight (up to `concurrency`), so one slow
 * chat holds back only itself.
 *
 * Delivery is at least once. While the process lives a delivered reply is never sent again: if
 * the store fails to record an outcome (markSent, markRetry, markDead), the write is logged and
 * re-attempted on its own timer with backoff (retryBaseMs doubling to 60 s) until it lands, and
 * once more at stop(); meanwhile the row stays `sending`, holding back only its chat, and takes
 * no send slot, so neither idle() nor stop() waits on a broken store. What is left `sending`
 * when the process stops or dies (a send interrupted by stop(), a receipt never recorded) goes
 * back to `pending` at the next start (Store.resetSending), so that one chunk can be sent twice;
 * so can a send that timed out but reached the platform. Channels with idempotent sends get a
 * stable `idempotencyKey` (`outbox-<id>`) to close that window.
 */
export class OutboxDispatcher {
  readonly #o: Settings;
  /** Sends in flight; each settles once its outcome is recorded, or given up at stop(). */
  readonly #inFlight = new Set<Promise<void>>();
  /** Outcomes whose store write failed, each waiting on its retry timer; their rows stay `sending`. */
  readonly #unrecorded = new Set<UnrecordedWrite>();
  #running = false;
  /** Set by every wake: something may have become claimable since the pass last looked. */
  #again = false;
  #wakeLoop: (() => void) | undefined;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #idle: Promise<void> = Promise.resolve();
  /** Aborted by stop(): every in-flight send's signal follows it. */
  readonly #stopping = new AbortController();
  /** Aborted once stop() has waited `stopTimeoutMs`: sends still running are left behind. */
  readonly #abandon = new AbortController();

  /** @throws RangeError naming the option, the value and what was expected. */
  constructor(options: OutboxDispatcherOptions) {
    this.#o = {
      ...options,
      maxAgeMs: checkInteger("maxAgeMs", options.maxAgeMs ?? 3_600_000, 1),
      maxAttempts: checkInteger("maxAttempts", options.maxAttempts ?? 5, 1),
      concurrency: checkInteger("concurrency", options.concurrency ?? 32, 1),
      retryBaseMs: checkInteger("retryBaseMs", options.retryBaseMs ?? 1_000, 1, MAX_BACKOFF_MS),
      sendTimeoutMs: checkInteger("sendTimeoutMs", options.sendTimeoutMs ?? 30_000, 1, MAX_TIMER_MS),
      stopTimeoutMs: checkInteger("stopTimeoutMs", options.stopTimeoutMs ?? 5_000, 0, MAX_TIMER_MS),
    };
  }

  /** Expires stale rows, each with a log line; call once at start-up before the first kick. */
  async expireStale(): Promise<number> {
    return this.#expire(this.#o.clock.now());
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
      clearTimeout(this.#timer);
      this.#stopping.abort(new Error("outbox dispatcher stopped"));
      this.#wake();
    }
    if (this.#running) await this.#settleSends();
    for (const unrecorded of [...this.#unrecorded]) {
      clearTimeout(unrecorded.timer);
      await this.#attempt(unrecorded);
    }
  }

  async #settleSends(): Promise<void> {
    let limit: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>((resolve) => {
      limit = setTimeout(() => resolve(true), this.#o.stopTimeoutMs);
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
      clearTimeout(limit);
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
      const due = await store.outbox.nextDueAt();
      if (due === undefined) return;
      if (due > now) {
        this.#schedule(due - now);
        return;
      }
      // Expire at the same `now` as the claim: no row older than maxAgeMs is ever claimed, and
      // a claimed row's send starts at once.
      const expired = await this.#expire(now);
      const rows = await store.outbox.claimDue(now, free);
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
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.kick(), Math.min(Math.max(0, delayMs), MAX_BACKOFF_MS));
    this.#timer.unref();
  }

  async #expire(now: number): Promise<number> {
    const { store, logger, metrics } = this.#o;
    const expired = await store.outbox.expireOlderThan(now - this.#o.maxAgeMs, now);
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
    const settled: Promise<void> = this.#sendOne(row)
      .catch((err: unknown) => {
        this.#o.logger.error({ err, outboxId: row.id }, "outbox send failed unexpectedly");
      })
      .finally(() => {
        this.#inFlight.delete(settled);
        this.#wake();
      });
    this.#inFlight.add(settled);
  }

  async #sendOne(row: OutboxRecord): Promise<void> {
    const { store, metrics } = this.#o;
    const log = this.#o.logger.child({
      outboxId: row.id,
      channel: row.target.channel,
      chatId: row.target.chatId,
    });
    const channel = this.#o.channelFor(row.target);
    if (!channel) {
      const reason = `channel ${row.target.channel}/${row.target.accountId} is not configured`;
      await this.#record(
        log,
        "dead",
        (now) => store.outbox.markDead(row.id, reason, now),
        () => {
          log.error("reply dead: its channel is not configured");
          metrics.outbound.inc({ channel: row.target.channel, result: "dead" });
        },
      );
      return;
    }
    let receipt: SendReceipt;
    try {
      receipt = await this.#send(channel, row, log);
    } catch (err) {
      if (this.#stopping.signal.aborted) {
        // Not the platform's verdict: the send was cut short. No attempt is used up.
        log.info("send interrupted by stop; the reply stays `sending` and is sent again after restart");
        return;
      }
      await this.#failed(row, toSendError(err), log);
      return;
    }
    const { platformMessageId } = receipt;
    await this.#record(
      log,
      "sent",
      (now) => store.outbox.markSent(row.id, platformMessageId, now),
      () => metrics.outbound.inc({ channel: row.target.channel, result: "sent" }),
    );
  }

  /**
   * Runs channel.send with its own signal, aborted after `sendTimeoutMs` or by stop(). Settles
   * when the send does, when the timeout fires (a transient ChannelSendError), or when stop()
   * stops waiting: a send that ignores its signal cannot hold the dispatcher.
   */
  async #send(channel: Channel, row: OutboxRecord, log: Logger): Promise<SendReceipt> {
    const message: OutboundMessage = {
      ...row.target,
      ...(row.replyTo ? { replyTo: row.replyTo } : {}),
      ...(row.recipientId ? { recipientId: row.recipientId } : {}),
      text: row.text,
      idempotencyKey: `outbox-${row.id}`,
    };
    const { sendTimeoutMs } = this.#o;
    const controller = new AbortController();
    let giveUp: (reason: unknown) => void = () => {};
    const gaveUp = new Promise<never>((_, reject) => {
      giveUp = reject;
    });
    let abandoned = false;
    const onStop = () => controller.abort(this.#stopping.signal.reason);
    const onAbandon = () => {
      abandoned = true;
      giveUp(new Error("outbox dispatcher stopped waiting for this send"));
    };
    const timer = setTimeout(() => {
      const timeout = new ChannelSendError(
        "transient",
        `send timed out after ${sendTimeoutMs} ms (sendTimeoutMs)`,
      );
      abandoned = true;
      controller.abort(timeout);
      giveUp(timeout);
    }, sendTimeoutMs);
    this.#stopping.signal.addEventListener("abort", onStop, { once: true });
    this.#abandon.signal.addEventListener("abort", onAbandon, { once: true });
    if (this.#stopping.signal.aborted) onStop();
    const sending = (async () => channel.send(message, controller.signal))();
    sending.then(
      (late) => {
        if (!abandoned) return;
        log.warn(
          { platformMessageId: late.platformMessageId },
          "a send given up on completed late; it is not recorded, so the reply may be sent twice",
        );
      },
      () => {}, // the outcome is taken from the race below, or no longer wanted
    );
    try {
      return await Promise.race([sending, gaveUp]);
    } finally {
      clearTimeout(timer);
      this.#stopping.signal.removeEventListener("abort", onStop);
      this.#abandon.signal.removeEventListener("abort", onAbandon);
    }
  }

  async #failed(row: OutboxRecord, sendError: ChannelSendError, log: Logger): Promise<void> {
    const { store, maxAttempts, metrics } = this.#o;
    const attempts = row.attempts + 1;
    const error = `${sendError.kind}: ${sendError.message}`;
    const detail = { attempts, kind: sendError.kind, err: sendError.message };
    if (!sendError.retryable || attempts >= maxAttempts) {
      // markDead counts this failed attempt, as markRetry does.
      await this.#record(
        log,
        "dead",
        (now) => store.outbox.markDead(row.id, error, now),
        () => {
          log.error(detail, "reply dead: not delivered");
          metrics.outbound.inc({ channel: row.target.channel, result: "dead" });
        },
      );
      return;
    }
    const retryInMs = sendError.retryAfterMs ?? this.#backoffMs(attempts);
    await this.#record(
      log,
      "retry",
      (now) => store.outbox.markRetry(row.id, error, now + retryInMs, now),
      () => {
        log.warn({ ...detail, retryInMs }, "send failed; will retry");
        metrics.outbound.inc({ channel: row.target.channel, result: "retry" });
      },
    );
  }

  /**
   * Writes one outcome, then runs `onRecorded`. If the store fails, the write is logged and
   * re-attempted on its own timer (see the class doc); the row stays `sending` meanwhile.
   */
  async #record(
    log: Logger,
    outcome: UnrecordedWrite["outcome"],
    write: (now: number) => Promise<void>,
    onRecorded: () => void,
  ): Promise<void> {
    await this.#attempt({ outcome, log, write, onRecorded, failures: 0, timer: undefined });
  }

  /** One attempt at a write; never throws. */
  async #attempt(pending: UnrecordedWrite): Promise<void> {
    const { outcome, log } = pending;
    try {
      await pending.write(this.#o.clock.now());
    } catch (err) {
      pending.failures++;
      if (this.#stopped) {
        this.#unrecorded.delete(pending);
        log.error(
          { err, outcome, failures: pending.failures },
          outcome === "sent"
            ? "reply delivered but its receipt was not recorded before stop; it stays `sending` and is sent again after restart"
            : `could not record the ${outcome} before stop; the reply stays \`sending\` and is tried again after restart`,
        );
        return;
      }
      const retryInMs = this.#backoffMs(pending.failures);
      log.error(
        { err, outcome, failures: pending.failures, retryInMs },
        outcome === "sent"
          ? "reply delivered but its receipt could not be recorded; re-recording it (it will not be sent again)"
          : `could not record the ${outcome}; re-recording it`,
      );
      this.#unrecorded.add(pending);
      pending.timer = setTimeout(() => void this.#attempt(pending), retryInMs);
      pending.timer.unref();
      return;
    }
    this.#unrecorded.delete(pending);
    pending.onRecorded();
    if (pending.failures > 0) {
      log.info({ outcome, failures: pending.failures }, "outbox outcome recorded after store failures");
      this.kick(); // its chat's next row may be due now
    }
  }

  /** retryBaseMs × 2^(n-1), at most 60 s. */
  #backoffMs(n: number): number {
    return Math.min(MAX_BACKOFF_MS, this.#o.retryBaseMs * 2 ** Math.min(n - 1, 16));
  }
}

/** Any failure of channel.send as a ChannelSendError; a failure of unknown shape is transient. */
function toSendError(err: unknown): ChannelSendError {
  if (err instanceof ChannelSendError) return err;
  return new ChannelSendError("transient", err instanceof Error ? err.message : String(err), { cause: err });
}

/** @throws RangeError naming the option, the value and the range expected. */
function checkInteger(
  field: keyof OutboxDispatcherOptions,
  value: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    const expected = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new RangeError(
      `OutboxDispatcherOptions.${field}: got ${String(value)}, expected an integer ${expected}`,
    );
  }
  return value;
}
