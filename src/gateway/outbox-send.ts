/**
 * One outbox send: the row's channel sends it under a time limit and the dispatcher's stop, and
 * the outcome is recorded — `sent` with the platform's id, a retry with backoff (the platform's
 * retry-after when it names one), or `dead` (a permanent error, the attempts spent, or no such
 * channel here). A row in doubt (an earlier send may have arrived) is first looked up where its
 * channel can (`findSent`): found, it is recorded sent and not posted again.
 */
import type { Channel, ChatTarget, OutboundMessage, SendReceipt } from "../channels/types.js";
import { ChannelSendError } from "../channels/errors.js";
import type { OutboxRecord } from "../store/repos/outbox-repo.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { GatewayMetrics } from "./metrics.js";
import type { OutcomeRecorder } from "./outbox-outcomes.js";

export interface OutboxSenderOptions {
  store: Store;
  channelFor(target: ChatTarget): Channel | undefined;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
  maxAttempts: number;
  sendTimeoutMs: number;
  /** This process's owner id, when several gateways share the store. */
  ownership?: { owner: string } | undefined;
  outcomes: OutcomeRecorder;
  backoffMs(attempt: number, retryAfterMs?: number): number;
  /** Aborted by the dispatcher's stop: every in-flight send's signal follows it. */
  stopping: AbortSignal;
  /** Aborted once stop has waited long enough: sends still running are left behind. */
  abandon: AbortSignal;
}

/** Owns the sending of one row at a time (see the file header). */
export class OutboxSender {
  readonly #o: OutboxSenderOptions;
  constructor(options: OutboxSenderOptions) {
    this.#o = options;
  }

  async sendOne(row: OutboxRecord): Promise<void> {
    const { store, metrics } = this.#o;
    const log = this.#o.logger.child({
      outboxId: row.id,
      channel: row.target.channel,
      chatId: row.target.chatId,
    });
    const channel = this.#o.channelFor(row.target);
    if (!channel) {
      const reason = `channel ${row.target.channel}/${row.target.accountId} is not configured`;
      await this.#o.outcomes.record(
        log,
        "dead",
        (now) => store.outbox.markDead(row.id, reason, now, this.#o.ownership?.owner),
        () => {
          log.error("reply dead: its channel is not configured");
          metrics.outbound.inc({ channel: row.target.channel, result: "dead" });
        },
      );
      return;
    }
    let receipt: SendReceipt & { found?: boolean };
    try {
      receipt = await this.#send(channel, row, log);
    } catch (err) {
      if (this.#o.stopping.aborted) {
        // Not the platform's verdict: the send was cut short. No attempt is used up.
        log.info("send interrupted by stop; the reply stays `sending` and is sent again after restart");
        return;
      }
      await this.#failed(row, toSendError(err), log);
      return;
    }
    const { platformMessageId, found } = receipt;
    await this.#o.outcomes.record(
      log,
      "sent",
      (now) => store.outbox.markSent(row.id, platformMessageId, now),
      () => {
        if (found)
          log.info(
            { platformMessageId },
            "reply was delivered before its send was interrupted; recorded as sent, not posted again",
          );
        metrics.outbound.inc({ channel: row.target.channel, result: found ? "found" : "sent" });
      },
    );
  }

  /**
   * channel.send — or, for a row in doubt on a channel that can look its messages up, that
   * lookup first: a receipt it finds is the outcome (`found`), and only a miss is sent.
   */
  async #deliver(
    channel: Channel,
    row: OutboxRecord,
    message: OutboundMessage,
    signal: AbortSignal,
  ): Promise<SendReceipt & { found?: boolean }> {
    if (row.inDoubt && channel.findSent) {
      const earlier = await channel.findSent(message, signal);
      if (earlier) return { ...earlier, found: true };
    }
    return channel.send(message, signal);
  }

  /**
   * Runs channel.send with its own signal, aborted after `sendTimeoutMs` or by stop(). Settles
   * when the send does, when the timeout fires (a transient ChannelSendError), or when stop()
   * stops waiting: a send that ignores its signal cannot hold the dispatcher.
   */
  async #send(channel: Channel, row: OutboxRecord, log: Logger): Promise<SendReceipt & { found?: boolean }> {
    const message: OutboundMessage = {
      ...row.target,
      ...(row.replyTo ? { replyTo: row.replyTo } : {}),
      ...(row.recipientId ? { recipientId: row.recipientId } : {}),
      text: row.text,
      idempotencyKey: idempotencyKeyOf(row),
      seq: row.seq,
      createdAt: row.createdAt,
    };
    const { sendTimeoutMs, clock } = this.#o;
    const controller = new AbortController();
    let giveUp: (reason: unknown) => void = () => {};
    const gaveUp = new Promise<never>((_, reject) => {
      giveUp = reject;
    });
    let abandoned = false;
    const onStop = () => controller.abort(this.#o.stopping.reason);
    const onAbandon = () => {
      abandoned = true;
      giveUp(new Error("outbox dispatcher stopped waiting for this send"));
    };
    const timer = clock.setTimeout(() => {
      const timeout = new ChannelSendError(
        "transient",
        `send timed out after ${sendTimeoutMs} ms (sendTimeoutMs)`,
      );
      abandoned = true;
      controller.abort(timeout);
      giveUp(timeout);
    }, sendTimeoutMs);
    this.#o.stopping.addEventListener("abort", onStop, { once: true });
    this.#o.abandon.addEventListener("abort", onAbandon, { once: true });
    if (this.#o.stopping.aborted) onStop();
    const sending = (async () => this.#deliver(channel, row, message, controller.signal))();
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
      clock.clearTimeout(timer);
      this.#o.stopping.removeEventListener("abort", onStop);
      this.#o.abandon.removeEventListener("abort", onAbandon);
    }
  }

  async #failed(row: OutboxRecord, sendError: ChannelSendError, log: Logger): Promise<void> {
    const { store, maxAttempts, metrics } = this.#o;
    const attempts = row.attempts + 1;
    const error = `${sendError.kind}: ${sendError.message}`;
    const detail = { attempts, kind: sendError.kind, err: sendError.message };
    if (!sendError.retryable || attempts >= maxAttempts) {
      // markDead counts this failed attempt, as markRetry does.
      await this.#o.outcomes.record(
        log,
        "dead",
        (now) => store.outbox.markDead(row.id, error, now, this.#o.ownership?.owner),
        () => {
          log.error(detail, "reply dead: not delivered");
          metrics.outbound.inc({ channel: row.target.channel, result: "dead" });
        },
      );
      return;
    }
    const retryInMs = this.#o.backoffMs(attempts, sendError.retryAfterMs);
    await this.#o.outcomes.record(
      log,
      "retry",
      (now) =>
        store.outbox.markRetry(row.id, error, now + retryInMs, now, this.#o.ownership?.owner, {
          // A transient failure (a timeout, a dropped connection, a 5xx) does not say the
          // platform did not post it; a rate limit does.
          inDoubt: sendError.kind === "transient",
        }),
      () => {
        log.warn({ ...detail, retryInMs }, "send failed; will retry");
        metrics.outbound.inc({ channel: row.target.channel, result: "retry" });
      },
    );
  }
}

/**
 * The row's idempotency key: its id and creation time, so a key stays unique when a home is
 * wiped and ids start again (a platform lookup by key must never match an older install's post).
 */
export function idempotencyKeyOf(row: Pick<OutboxRecord, "id" | "createdAt">): string {
  return `outbox-${row.id}-${row.createdAt.toString(36)}`;
}

/** Any failure of channel.send as a ChannelSendError; a failure of unknown shape is transient. */
function toSendError(err: unknown): ChannelSendError {
  if (err instanceof ChannelSendError) return err;
  return new ChannelSendError("transient", err instanceof Error ? err.message : String(err), { cause: err });
}
