/**
 * Discord outbound for one bot, through discord.js's REST client (its per-route buckets and
 * global throttle): replies as Markdown (Discord renders it), split at 2,000 characters and 17
 * lines with code blocks closed and reopened; each post a reply to the message it answers that
 * pings nobody (`allowed_mentions: {parse: []}`, `replied_user: false`), carrying a nonce derived
 * from its outbox row with `enforce_nonce`, so a resend inside Discord's nonce window returns the
 * first message instead of posting again; and past that window `findSent` looks the reply up in
 * the channel. Typing, edits, and the streaming preview (the shared module) go through the same
 * client. The REST routes are plain strings: nothing here loads discord.js.
 */
import { createHash } from "node:crypto";
import type { Client } from "discord.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { chunkText } from "../chunking.js";
import { ChannelSendError } from "../errors.js";
import type { PreviewLedger } from "../preview-ledger.js";
import { type PreviewApi, type PreviewTarget, StreamingPreviews } from "../preview.js";
import type { ChatTarget, OutboundMessage, SendReceipt } from "../types.js";
import { toDiscordFailure, toSendError } from "./errors.js";

type Rest = Client["rest"];
type Target = ChatTarget & { replyTo?: string; recovered?: boolean };

/** Discord's epoch (2015-01-01), for snowflakes made from a time. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/** A reply's text as Discord returns it (the fields the lookup reads). */
interface ApiMessage {
  id: string;
  content?: string;
  author?: { id?: string };
  message_reference?: { message_id?: string };
}

export interface DiscordSenderOptions {
  accountId: string;
  maxMessageChars: number;
  maxLinesPerMessage: number;
  streaming: "off" | "edit";
  /** The REST client while the channel runs. */
  rest(): Rest | undefined;
  /** The bot's user id once connected. */
  botId(): string | undefined;
  clock: Clock;
  logger: Logger;
  /** Least time between two edits of a streaming preview (default 1 s). */
  previewEditIntervalMs?: number;
  /** Pages of 100 messages `findSent` reads at most (default 3). */
  lookupPages?: number;
  /** Where previews are recorded across restarts; absent: in memory only. */
  previewLedger?: PreviewLedger;
}

/** Sends, looks up, edits, typing and previews for one Discord bot (see the file header). */
export class DiscordSender {
  readonly #o: DiscordSenderOptions;
  /** The streaming previews (`streaming: edit`) of this account; the channel drives them. */
  readonly previews: StreamingPreviews;

  constructor(options: DiscordSenderOptions) {
    this.#o = options;
    const api = this.#previewApi();
    this.previews = new StreamingPreviews({
      // Up once the bot is logged in: before READY the client has no token and the bot no id, so
      // a redone turn's preview could neither be posted nor found (its deltas wait, see preview.ts).
      api: () => (options.rest() && options.botId() ? api : undefined),
      enabled: options.streaming === "edit",
      ...(options.previewLedger ? { ledger: options.previewLedger } : {}),
      editIntervalMs: options.previewEditIntervalMs ?? 1_000,
      maxChars: options.maxMessageChars,
      clock: options.clock,
      logger: options.logger,
    });
  }

  prepare(markdown: string): string[] {
    return chunkText(markdown, this.#o.maxMessageChars, { maxLines: this.#o.maxLinesPerMessage });
  }

  async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt> {
    const channel = where(message);
    const preview = await this.previews.take(message);
    try {
      if (preview) {
        const replaced = await this.#rest()
          .patch(`/channels/${channel}/messages/${preview.messageId}`, {
            body: { content: message.text, allowed_mentions: NO_PINGS },
            ...(signal ? { signal } : {}),
          })
          .then(
            () => true,
            (err: unknown) => {
              if (toDiscordFailure(err).kind === "message_gone") return false; // deleted: post anew
              throw err;
            },
          );
        preview.done();
        if (replaced) return { platformMessageId: preview.messageId };
      }
      const posted = (await this.#rest().post(`/channels/${channel}/messages`, {
        body: {
          content: message.text,
          nonce: nonceOf(message.idempotencyKey),
          enforce_nonce: true,
          allowed_mentions: NO_PINGS,
          ...replyReference(message.replyTo),
        },
        ...(signal ? { signal } : {}),
      })) as ApiMessage;
      return { platformMessageId: posted.id };
    } catch (err) {
      const sendError = err instanceof ChannelSendError ? err : toSendError(err, `channel ${channel}`);
      if (preview && !sendError.retryable) preview.done();
      if (!sendError.retryable)
        this.#o.logger.warn({ channel, err: sendError.message }, "Discord refused the message");
      throw sendError;
    }
  }

  /**
   * Looks the reply up among the bot's messages in its channel since shortly before the row was
   * created (its idempotency key ends in that time): the same text, answering the same message.
   * Discord's nonce already makes a resend within a few minutes safe; this covers a row resent
   * after a longer outage. At most `lookupPages` pages of 100.
   */
  async findSent(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt | undefined> {
    const me = this.#o.botId();
    const createdAt =
      message.createdAt ?? Number.parseInt(message.idempotencyKey.split("-").at(-1) ?? "", 36);
    const after = snowflakeAt(
      Number.isFinite(createdAt) ? createdAt - 120_000 : this.#o.clock.now() - 600_000,
    );
    const hit = await this.#findAfter(
      message,
      after,
      (m) =>
        m.author?.id === me &&
        m.content === message.text &&
        (message.replyTo === undefined || !isSnowflake(message.replyTo)
          ? true
          : m.message_reference?.message_id === message.replyTo),
      signal,
    );
    return hit === undefined ? undefined : { platformMessageId: hit };
  }

  /**
   * The id of the first message in the target's channel after the snowflake `after` that
   * `match` accepts, reading at most `lookupPages` pages of 100. Throws a ChannelSendError when
   * Discord cannot be asked.
   */
  async #findAfter(
    target: { chatId: string; threadId?: string },
    after: string,
    match: (m: ApiMessage) => boolean,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const rest = this.#rest();
    const channel = where(target);
    let cursor = after;
    try {
      for (let page = 0; page < (this.#o.lookupPages ?? 3); page++) {
        const batch = (await rest.get(`/channels/${channel}/messages`, {
          query: new URLSearchParams({ after: cursor, limit: "100" }),
          ...(signal ? { signal } : {}),
        })) as ApiMessage[];
        const hit = batch.find(match);
        if (hit) return hit.id;
        if (batch.length < 100) return undefined;
        cursor = batch.reduce((max, m) => (BigInt(m.id) > BigInt(max) ? m.id : max), cursor);
      }
      return undefined;
    } catch (err) {
      throw toSendError(err, `looking up a message in channel ${channel}`);
    }
  }

  /** "Typing…" for 10 seconds (the caller refreshes it while a run works). */
  async typing(target: Target): Promise<void> {
    await this.#rest()
      .post(`/channels/${where(target)}/typing`)
      .catch((err: unknown) => {
        throw toSendError(err, `typing in channel ${where(target)}`);
      });
  }

  async edit(target: ChatTarget, platformMessageId: string, text: string): Promise<void> {
    await this.#rest()
      .patch(`/channels/${where(target)}/messages/${platformMessageId}`, {
        body: { content: text, allowed_mentions: NO_PINGS },
      })
      .catch((err: unknown) => {
        throw toSendError(err, `editing a message in channel ${where(target)}`);
      });
  }

  forgetPreviews(): void {
    this.previews.clear();
  }

  /**
   * Discord's calls for a streaming preview: a reply to the message the turn answers, edits, a
   * delete, and `find`: the bot's reply to that message, which before the reply's first chunk is
   * sent can only be a preview (every reply chunk answers it too, but none was sent yet) — so a
   * preview posted just before a crash, before it was recorded, is found again.
   */
  #previewApi(): PreviewApi {
    return {
      post: async (target, text) => {
        const posted = (await this.#rest().post(`/channels/${where(target)}/messages`, {
          body: { content: text, allowed_mentions: NO_PINGS, ...replyReference(target.replyTo) },
        })) as ApiMessage;
        return posted.id;
      },
      update: (target, id, text) =>
        this.#rest().patch(`/channels/${where(target)}/messages/${id}`, {
          body: { content: text, allowed_mentions: NO_PINGS },
        }),
      remove: (target, id) => this.#rest().delete(`/channels/${where(target)}/messages/${id}`),
      find: async (target: PreviewTarget) => {
        const replyTo = target.replyTo;
        if (!replyTo || !isSnowflake(replyTo)) return undefined; // nothing to tell it by
        const me = this.#o.botId();
        return this.#findAfter(
          target,
          replyTo,
          (m) => m.author?.id === me && m.message_reference?.message_id === replyTo,
        );
      },
    };
  }

  #rest(): Rest {
    const rest = this.#o.rest();
    if (!rest) throw new ChannelSendError("transient", `discord account ${this.#o.accountId} is not started`);
    return rest;
  }
}

/** Model text pings nobody: no @everyone, roles or users, and the replied-to author is not pinged. */
const NO_PINGS = { parse: [], replied_user: false } as const;

/** A thread's messages go to the thread; everything else to its channel. */
function where(target: { chatId: string; threadId?: string }): string {
  return target.threadId ?? target.chatId;
}

function isSnowflake(id: string): boolean {
  return /^\d{1,20}$/.test(id);
}

/** A reply to `replyTo` that still posts if that message was deleted meanwhile. */
function replyReference(replyTo: string | undefined): object {
  return replyTo && isSnowflake(replyTo)
    ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } }
    : {};
}

/**
 * The nonce of an outbox row (Discord takes at most 25 characters): the idempotency key itself,
 * or, if longer, 25 characters of its hash.
 */
export function nonceOf(idempotencyKey: string): string {
  if (idempotencyKey.length <= 25) return idempotencyKey;
  return createHash("sha256").update(idempotencyKey).digest("base64url").slice(0, 25);
}

/** The smallest snowflake of a time (ms), as Discord's `after` takes it. */
export function snowflakeAt(ms: number): string {
  const since = BigInt(Math.max(0, Math.floor(ms))) - DISCORD_EPOCH;
  return (since > 0n ? since << 22n : 0n).toString();
}
