/**
 * The Telegram send path: Markdown rendered as Telegram HTML chunks, each sent threaded to the
 * message it answers, and sent again as plain text when Telegram rejects the entities; with
 * `streaming: edit`, a preview message edited as the turn's text arrives and then replaced by
 * the first chunk. Failures leave as ChannelSendErrors for the outbox to retry or give up.
 */
import type { Bot } from "grammy";
import type { Clock } from "../../util/clock.js";
import { ChannelSendError } from "../errors.js";
import type { ChatTarget, OutboundMessage, SendReceipt } from "../types.js";
import { type TelegramFailure, toSendError } from "./errors.js";
import { htmlToText, renderTelegramChunks } from "./format.js";
import type { PreviewLedger } from "../preview-ledger.js";
import { type PreviewApi, type PreviewTarget, StreamingPreviews } from "../preview.js";
import type { TelegramChannelOptions } from "./telegram-channel.js";

/** grammY types its AbortSignal from the abort-controller shim; Node's own is what it gets at run time. */
type GrammySignal = Parameters<Bot["api"]["getUpdates"]>[1];

/**
 * What the send path needs of its channel: the channel's settings (their defaults are
 * documented on TelegramChannelOptions), its message limit and its live bot.
 */
export interface TelegramSenderOptions
  extends Pick<TelegramChannelOptions, "accountId" | "streaming" | "previewEditIntervalMs" | "logger"> {
  /** Longest message Telegram takes, in characters. */
  maxMessageChars: number;
  clock: Clock;
  /** The bot; undefined while the channel is stopped (sends then fail as transient). */
  bot(): Bot | undefined;
  /** Classifies anything a grammY call threw. */
  failure(err: unknown): TelegramFailure;
  /** Where previews are recorded across restarts; absent: in memory only. */
  previewLedger?: PreviewLedger;
}

/** Sends, edits and previews for one Telegram account (see the file header). */
export class TelegramSender {
  readonly #o: TelegramSenderOptions;
  /** The streaming previews (`streaming: edit`) of this account; the channel drives them. */
  readonly previews: StreamingPreviews;

  constructor(options: TelegramSenderOptions) {
    this.#o = options;
    const api = previewApi(() => this.#requireBot());
    this.previews = new StreamingPreviews({
      api: () => (options.bot() ? api : undefined),
      enabled: options.streaming === "edit",
      ...(options.previewLedger ? { ledger: options.previewLedger } : {}),
      editIntervalMs: options.previewEditIntervalMs ?? 1_000,
      clock: options.clock,
      logger: options.logger,
    });
  }

  /** Markdown → Telegram HTML chunks of at most `maxMessageChars`, never splitting a code block. */
  prepare(markdown: string): string[] {
    return renderTelegramChunks(markdown, this.#o.maxMessageChars).map((c) => c.html);
  }

  /**
   * Sends one chunk (Telegram HTML), or puts it into the turn's streaming preview if there is
   * one. Throws a ChannelSendError.
   */
  async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt> {
    const bot = this.#requireBot();
    const abort = signal as GrammySignal;
    const chatId = message.chatId;
    const threadId = message.threadId ? Number(message.threadId) : undefined;
    const replyToId = messageIdOf(message.replyTo);
    const preview = await this.previews.take(message);
    try {
      if (preview) {
        const finished = await this.#finishPreview(
          bot,
          chatId,
          Number(preview.messageId),
          message.text,
          abort,
        );
        // Done, or gone (deleted by the user): either way the preview is forgotten.
        preview.done();
        if (finished) return { platformMessageId: preview.messageId };
      }
      const other = {
        ...(threadId ? { message_thread_id: threadId } : {}),
        ...(replyToId !== undefined
          ? { reply_parameters: { message_id: replyToId, allow_sending_without_reply: true } }
          : {}),
      };
      try {
        const sent = await bot.api.sendMessage(chatId, message.text, { ...other, parse_mode: "HTML" }, abort);
        return { platformMessageId: String(sent.message_id) };
      } catch (err) {
        if (this.#o.failure(err).kind !== "bad_entities") throw err;
        this.#o.logger.warn(
          { chatId, err: this.#o.failure(err).description },
          "Telegram rejected the formatting; sending plain text",
        );
        const sent = await bot.api.sendMessage(
          chatId,
          htmlToText(message.text, this.#o.maxMessageChars),
          other,
          abort,
        );
        return { platformMessageId: String(sent.message_id) };
      }
    } catch (err) {
      const sendError = this.#toSendError(err, chatId);
      // A retryable failure leaves the preview in place (closed), so the retry edits it again
      // instead of sending a second message next to a stale partial one.
      if (preview && !sendError.retryable) preview.done();
      throw sendError;
    }
  }

  /** Shows "typing…" in the chat (and topic). */
  async typing(target: ChatTarget): Promise<void> {
    const threadId = target.threadId ? Number(target.threadId) : undefined;
    await this.#requireBot().api.sendChatAction(
      target.chatId,
      "typing",
      threadId ? { message_thread_id: threadId } : {},
    );
  }

  /** Replaces the text (Telegram HTML) of a message the bot sent. */
  async edit(target: ChatTarget, platformMessageId: string, text: string): Promise<void> {
    await this.#requireBot().api.editMessageText(target.chatId, Number(platformMessageId), text, {
      parse_mode: "HTML",
    });
  }

  /** Forgets every streaming preview and stops their timers (the channel stops). */
  forgetPreviews(): void {
    this.previews.clear();
  }

  /**
   * Puts the final text into the preview message. Resolves false when the preview is gone
   * (the user deleted it) so the caller sends a fresh message; throws other failures.
   */
  async #finishPreview(
    bot: Bot,
    chatId: string,
    previewId: number,
    html: string,
    signal: GrammySignal,
  ): Promise<boolean> {
    const edit = async (text: string, other: { parse_mode?: "HTML" }): Promise<boolean> => {
      try {
        await bot.api.editMessageText(chatId, previewId, text, other, signal);
        return true;
      } catch (err) {
        const kind = this.#o.failure(err).kind;
        if (kind === "not_modified") return true;
        if (kind === "message_gone") return false;
        throw err;
      }
    };
    try {
      return await edit(html, { parse_mode: "HTML" });
    } catch (err) {
      if (this.#o.failure(err).kind !== "bad_entities") throw err;
    }
    return edit(htmlToText(html, this.#o.maxMessageChars), {});
  }

  #requireBot(): Bot {
    const bot = this.#o.bot();
    if (!bot) throw new ChannelSendError("transient", `telegram account ${this.#o.accountId} is not started`);
    return bot;
  }

  #toSendError(err: unknown, chatId: string): ChannelSendError {
    if (err instanceof ChannelSendError) return err;
    const sendError = toSendError(this.#o.failure(err), err, chatId);
    if (!sendError.retryable)
      this.#o.logger.warn({ chatId, err: sendError.message }, "Telegram refused the message");
    return sendError;
  }
}

/**
 * Telegram's calls for a streaming preview: a reply in the turn's chat and topic, edits, and a
 * delete. The Bot API cannot list a chat's messages, so there is no `find`: a preview posted in
 * the instant before a crash, before its id was recorded, stays in the chat.
 */
function previewApi(botOf: () => Bot): PreviewApi {
  return {
    post: async (target: PreviewTarget, text: string) => {
      const bot = botOf();
      const threadId = target.threadId ? Number(target.threadId) : undefined;
      const replyId = messageIdOf(target.replyTo);
      const sent = await bot.api.sendMessage(target.chatId, text, {
        ...(threadId ? { message_thread_id: threadId } : {}),
        ...(replyId !== undefined
          ? { reply_parameters: { message_id: replyId, allow_sending_without_reply: true } }
          : {}),
      });
      return String(sent.message_id);
    },
    update: (target, messageId, text) => botOf().api.editMessageText(target.chatId, Number(messageId), text),
    remove: (target, messageId) => botOf().api.deleteMessage(target.chatId, Number(messageId)),
  };
}

/** `<chat>:<message id>` (the channel's platformMessageId) → the message id. */
export function messageIdOf(platformMessageId: string | undefined): number | undefined {
  if (!platformMessageId) return undefined;
  const id = Number(platformMessageId.split(":").pop());
  return Number.isInteger(id) && id > 0 ? id : undefined;
}
