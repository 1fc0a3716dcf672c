/**
 * Sends committed replies: claims due outbox rows, hands each to its channel, and records the
 * receipt (`sent` with the platform's message id), a retry with backoff, or `dead`. Rows older
 * than `maxAgeMs` are expired with a log line instead of being sent hours late.
 */
import { type Channel, ChannelSendError, type ChatTarget } from "../channels/types.js";
import type { OutboxRecord, Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { GatewayMetrics } from "./metrics.js";

export interface OutboxDispatcherOptions {
  store: Store;
  channelFor(target: ChatTarget): Channel | undefined;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
  /** Replies older than this are expired, not sent (default 1 h). */
  maxAgeMs?: number;
  /** Send attempts before a row is dead (default 5). */
  maxAttempts?: number;
  /** Rows claimed per pass (default 32). */
  batchSize?: number;
  /** First retry delay; doubles per attempt up to 60 s (default 1 s). */
  retryBaseMs?: number;
}

export class OutboxDispatcher {
  readonly #o: Required<
    Omit<OutboxDispatcherOptions, "store" | "channelFor" | "clock" | "logger" | "metrics">
  > &
    OutboxDispatcherOptions;
  #running = false;
  #again = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #idle: Promise<void> = Promise.resolve();
  readonly #abort = new AbortController();

  constructor(options: OutboxDispatcherOptions) {
    this.#o = { maxAgeMs: 3_600_000, maxAttempts: 5, batchSize: 32, retryBaseMs: 1_000, ...options };
  }

  /** Expires stale rows; call once at start-up before the first kick. */
  async expireStale(): Promise<number> {
    const { store, clock, logger } = this.#o;
    const expired = await store.outbox.expireOlderThan(clock.now() - this.#o.maxAgeMs, clock.now());
    for (const row of expired) {
      logger.warn(
        {
          outboxId: row.id,
          channel: row.target.channel,
          chatId: row.target.chatId,
          ageMs: clock.now() - row.createdAt,
        },
        "reply expired unsent: older than outbox.maxAgeMs",
      );
    }
    return expired.length;
  }

  /** Asks for a pass soon; coalesces with one already running. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    this.#idle = this.#loop().finally(() => {
      this.#running = false;
    });
  }

  /** Stops scheduling passes and waits for the current one (bounded by the sends' own limits). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#idle;
  }

  /** Resolves when no pass is running (tests, drain). */
  async idle(): Promise<void> {
    while (this.#running) await this.#idle;
  }

  async #loop(): Promise<void> {
    const { store, clock, logger } = this.#o;
    try {
      do {
        this.#again = false;
        for (;;) {
          if (this.#stopped) return;
          // A cheap read first: most passes find nothing due, and a claim is a write transaction.
          const due = await store.outbox.nextDueAt();
          if (due === undefined || due > clock.now()) break;
          const rows = await store.outbox.claimDue(clock.now(), this.#o.batchSize);
          if (rows.length === 0) break;
          await Promise.all(rows.map((row) => this.#sendOne(row)));
        }
      } while (this.#again && !this.#stopped);
      await this.#armTimer();
    } catch (err) {
      logger.error({ err }, "outbox pass failed; retrying in 1 s");
      this.#schedule(1_000);
    }
  }

  async #armTimer(): Promise<void> {
    const next = await this.#o.store.outbox.nextDueAt();
    if (next === undefined) return;
    this.#schedule(Math.max(0, next - this.#o.clock.now()));
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.kick(), Math.min(delayMs, 60_000));
    this.#timer.unref();
  }

  async #sendOne(row: OutboxRecord): Promise<void> {
    const { store, clock, logger, metrics } = this.#o;
    const channel = this.#o.channelFor(row.target);
    const log = logger.child({ outboxId: row.id, channel: row.target.channel, chatId: row.target.chatId });
    if (!channel) {
      await store.outbox.markDead(
        row.id,
        `channel ${row.target.channel}/${row.target.accountId} is not configured`,
        clock.now(),
      );
      log.error("reply dead: its channel is not configured");
      metrics.outbound.inc({ channel: row.target.channel, result: "dead" });
      return;
    }
    if (clock.now() - row.createdAt > this.#o.maxAgeMs) {
      await store.outbox.markDead(row.id, "expired: older than outbox.maxAgeMs", clock.now());
      log.warn("reply dead: older than outbox.maxAgeMs");
      metrics.outbound.inc({ channel: row.target.channel, result: "expired" });
      return;
    }
    try {
      const receipt = await channel.send(
        {
          ...row.target,
          ...(row.replyTo ? { replyTo: row.replyTo } : {}),
          ...(row.recipientId ? { recipientId: row.recipientId } : {}),
          text: row.text,
          idempotencyKey: `outbox-${row.id}`,
        },
        this.#abort.signal,
      );
      await store.outbox.markSent(row.id, receipt.platformMessageId, clock.now());
      metrics.outbound.inc({ channel: row.target.channel, result: "sent" });
    } catch (err) {
      const sendError =
        err instanceof ChannelSendError
          ? err
          : new ChannelSendError("transient", err instanceof Error ? err.message : String(err), {
              cause: err,
            });
      const attempts = row.attempts + 1;
      if (!sendError.retryable || attempts >= this.#o.maxAttempts) {
        await store.outbox.markDead(row.id, `${sendError.kind}: ${sendError.message}`, clock.now());
        log.error({ attempts, kind: sendError.kind, err: sendError.message }, "reply dead: not delivered");
        metrics.outbound.inc({ channel: row.target.channel, result: "dead" });
        return;
      }
      const backoff = sendError.retryAfterMs ?? Math.min(60_000, this.#o.retryBaseMs * 2 ** (attempts - 1));
      await store.outbox.markRetry(
        row.id,
        `${sendError.kind}: ${sendError.message}`,
        clock.now() + backoff,
        clock.now(),
      );
      log.warn(
        { attempts, retryInMs: backoff, kind: sendError.kind, err: sendError.message },
        "send failed; will retry",
      );
      metrics.outbound.inc({ channel: row.target.channel, result: "retry" });
    }
  }
}
