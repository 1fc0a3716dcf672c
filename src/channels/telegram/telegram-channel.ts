/**
 * Telegram through grammY: long polling (default) or a webhook on the gateway's HTTP server.
 * An update's offset is confirmed only after the message is committed to the inbox, so a
 * crash re-delivers it and the inbox dedupe makes it count once. An update our own code cannot
 * handle is given up after a few attempts, so one bad update never blocks the bot. Replies go
 * out as Telegram HTML (plain text if Telegram rejects the entities), threaded to the message
 * they answer.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Bot } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import { backoffDelayMs } from "../../util/backoff.js";
import { type Clock, systemClock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { RouteRegistrar } from "../types.js";
import type {
  Attachment,
  Channel,
  ChannelLimits,
  ChatTarget,
  InboundMessage,
  InboundSink,
  OutboundMessage,
  SendReceipt,
} from "../types.js";
import { ChannelSendError, SinkUnavailableError } from "../errors.js";
import { downloadTelegramFile } from "./download.js";
import { type TelegramFailure, configProblem, toSendError, toTelegramFailure } from "./errors.js";
import { htmlToText, renderTelegramChunks } from "./format.js";
import { type AddressingRules, mapUpdate } from "./inbound.js";
import { TelegramPoller } from "./polling.js";
import { StreamingPreviews, messageIdOf } from "./preview.js";
import { readWebhookUpdate } from "./webhook.js";

type Grammy = typeof import("grammy");
/** grammY types its AbortSignal from the abort-controller shim; Node's own is what it gets at run time. */
type GrammySignal = Parameters<Bot["api"]["getUpdates"]>[1];

export interface TelegramChannelOptions {
  accountId: string;
  token: string;
  /** Bot API root without trailing slash (default https://api.telegram.org). */
  apiRoot: string;
  mode: "polling" | "webhook";
  /** Webhook mode: public URL, secret and the path it reaches on the gateway server. */
  webhook?: { url: string; secret: string; path: string };
  server?: RouteRegistrar;
  /** Extra case-insensitive patterns that address the bot in groups. */
  mentionPatterns: readonly string[];
  streaming: "off" | "edit";
  /** Largest attachment downloaded (bytes). */
  mediaMaxBytes: number;
  /** Attachments are saved under <workspaceDir>/inbox/telegram/<chat id>[/<topic id>]/. */
  workspaceDir: string;
  /** Long-poll hold time (default 30 s). */
  pollTimeoutSeconds?: number;
  /** Commands registered with setMyCommands; in groups a bare `/name` of these addresses the bot. */
  commands: ReadonlyArray<{ command: string; description: string }>;
  logger: Logger;
  /** Limit for one attachment download, getFile included (default 30 s). */
  downloadTimeoutMs?: number;
  /** Attempts at an update our own code fails on (mapping, download, a bug) before it is skipped (default 3). */
  updateMaxAttempts?: number;
  /**
   * Backoff for failed getUpdates and failed updates: full jitter under a ceiling that starts
   * here and doubles per attempt up to 30 s (default 500 ms).
   */
  retryBaseMs?: number;
  /** Wait after a 409 on getUpdates: another poller or a webhook holds the bot (default 30 s). */
  conflictBackoffMs?: number;
  /** Least time between two edits of a streaming preview (default 1 s). */
  previewEditIntervalMs?: number;
  /** Time source and timers of every wait: reconnects, retries, polling, previews (default `systemClock`). */
  clock?: Clock;
  /** Uniform [0, 1) source of the backoff jitter (default Math.random). */
  random?: () => number;
}

/** Updates the gateway asks Telegram for. */
const ALLOWED_UPDATES = ["message", "edited_message"] as const;

/** What handling one update came to. */
type Handled = "done" | "aborted";

export class TelegramChannel implements Channel {
  readonly name = "telegram" as const;
  readonly accountId: string;
  readonly limits: ChannelLimits = { maxMessageChars: 4096, formatting: "telegram-html" };
  readonly #o: TelegramChannelOptions;
  readonly #rules: AddressingRules;
  #grammy: Grammy | undefined;
  #bot: Bot | undefined;
  #me: UserFromGetMe | undefined;
  #sink: InboundSink | undefined;
  /** Aborted on stop: ends polling, downloads and background reconnects. */
  #life: AbortController | undefined;
  #connecting: Promise<void> | undefined;
  #poller: TelegramPoller | undefined;
  #polling: Promise<unknown> | undefined;
  readonly #previews: StreamingPreviews;
  readonly #clock: Clock;

  constructor(options: TelegramChannelOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.accountId = options.accountId;
    this.#rules = {
      mentionPatterns: options.mentionPatterns.map((p) => new RegExp(p, "i")),
      commands: new Set(options.commands.map((c) => c.command.toLowerCase())),
    };
    this.#previews = new StreamingPreviews({
      api: () => this.#bot?.api,
      editIntervalMs: options.previewEditIntervalMs ?? 1_000,
      clock: this.#clock,
      logger: options.logger,
    });
    if (options.mode === "webhook") {
      if (!options.webhook || !options.server) {
        throw new Error(
          `telegram account ${options.accountId}: webhook mode needs webhook settings and the gateway server`,
        );
      }
      options.server.route("POST", options.webhook.path, (req, res) => this.#onWebhook(req, res));
    }
  }

  /** The bot's own identity, once started. */
  get me(): UserFromGetMe | undefined {
    return this.#me;
  }

  /**
   * Connects: getMe, setMyCommands, then long polling or setWebhook. A rejected token or a
   * webhook Telegram refuses (400) throws: both are configuration problems the gateway reports
   * as it exits. A network failure is retried in the background with backoff, so a gateway
   * started while Telegram is unreachable still comes up.
   */
  async start(sink: InboundSink): Promise<void> {
    const o = this.#o;
    this.#sink = sink;
    this.#grammy = await import("grammy");
    this.#bot = new this.#grammy.Bot(o.token, {
      client: { apiRoot: o.apiRoot, timeoutSeconds: (o.pollTimeoutSeconds ?? 30) + 15 },
    });
    this.#life = new AbortController();
    try {
      await this.#connect();
    } catch (err) {
      const fatal = configProblem(this.#failure(err), this.accountId, err);
      if (fatal) throw fatal;
      o.logger.error(
        { err: this.#failure(err).description },
        "cannot reach Telegram; retrying in the background",
      );
      this.#connecting = this.#connectLater(this.#life.signal);
    }
  }

  async #connect(): Promise<void> {
    const o = this.#o;
    const bot = this.#bot as Bot;
    const me = await bot.api.getMe();
    this.#me = me;
    bot.botInfo = me;
    await bot.api
      .setMyCommands(o.commands)
      .catch((err: unknown) =>
        o.logger.warn({ err: this.#failure(err).description }, "setMyCommands failed"),
      );
    if (o.mode === "webhook" && o.webhook) {
      await bot.api.setWebhook(o.webhook.url, {
        secret_token: o.webhook.secret,
        allowed_updates: [...ALLOWED_UPDATES],
      });
      o.logger.info({ bot: me.username, url: o.webhook.url }, "telegram webhook set");
      return;
    }
    await bot.api.deleteWebhook();
    const poller = new TelegramPoller({
      label: this.#label(),
      getUpdates: (params, signal) =>
        bot.api.getUpdates({ ...params, allowed_updates: [...ALLOWED_UPDATES] }, signal as GrammySignal),
      handle: async (update, signal) => (await this.#handle(update, signal, "retry")) === "done",
      failure: (err) => this.#failure(err),
      pollTimeoutSeconds: o.pollTimeoutSeconds ?? 30,
      ...(o.retryBaseMs !== undefined ? { retryBaseMs: o.retryBaseMs } : {}),
      ...(o.conflictBackoffMs !== undefined ? { conflictBackoffMs: o.conflictBackoffMs } : {}),
      clock: this.#clock,
      random: o.random,
      logger: o.logger,
    });
    this.#poller = poller;
    this.#polling = poller.run((this.#life as AbortController).signal);
    o.logger.info({ bot: me.username }, "telegram long polling started");
  }

  async #connectLater(signal: AbortSignal): Promise<void> {
    for (let attempt = 1; !signal.aborted; attempt++) {
      // 2 s, 4 s, … up to 60 s (ceilings; full jitter below them).
      await this.#pause(
        backoffDelayMs(attempt, { baseMs: 2_000, maxMs: 60_000, random: this.#o.random }),
        signal,
      );
      if (signal.aborted) return;
      try {
        await this.#connect();
        return;
      } catch (err) {
        const fatal = configProblem(this.#failure(err), this.accountId, err);
        if (fatal) {
          this.#o.logger.error({ err: fatal.message }, `${fatal.message}; this bot stays offline`);
          return;
        }
        this.#o.logger.warn({ err: this.#failure(err).description, attempt }, "still cannot reach Telegram");
      }
    }
  }

  async stop(): Promise<void> {
    this.#sink = undefined;
    this.#previews.clear();
    if (this.#life) {
      this.#life.abort();
      await this.#connecting;
      await this.#polling;
      this.#life = undefined;
      // Confirm what was committed, so a restart does not fetch it again (dedupe would drop it anyway).
      const offset = this.#poller?.offset ?? 0;
      if (offset > 0) {
        await this.#bot?.api
          .getUpdates({ offset, limit: 1, timeout: 0 }, AbortSignal.timeout(5_000) as GrammySignal)
          .catch(() => undefined);
      }
    }
    // A stopped channel sends nothing: send, typing and edit fail with "not started".
    this.#bot = undefined;
  }

  // ------------------------------------------------------------------ inbound

  async #onWebhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const update = await readWebhookUpdate(req, res, {
      secret: this.#o.webhook?.secret ?? "",
      maxBytes: this.#o.server?.maxBodyBytes ?? 1_048_576,
    });
    if (!update) return;
    const life = this.#life;
    if (!life || life.signal.aborted) {
      res.writeHead(503).end();
      return;
    }
    try {
      const handled = await this.#handle(update, life.signal, "throw");
      res.writeHead(handled === "done" ? 200 : 503).end();
    } catch (err) {
      // Not committed: a non-2xx makes Telegram deliver it again.
      this.#o.logger.error({ err, updateId: update.update_id }, "could not commit a Telegram webhook update");
      res.writeHead(err instanceof SinkUnavailableError ? 503 : 500).end();
    }
  }

  /**
   * Maps an update, downloads its files and commits it through the sink. A commit failure
   * (the store failing, the gateway draining) is retried until it succeeds or the channel stops
   * (`onCommitFailure: "retry"`, polling) or thrown (`"throw"`, webhook: Telegram retries). Any
   * other failure is our own (mapping, download, a bug): logged with the update id and, after
   * `updateMaxAttempts`, given up so the updates behind it keep flowing.
   */
  async #handle(update: Update, signal: AbortSignal, onCommitFailure: "retry" | "throw"): Promise<Handled> {
    const log = this.#o.logger;
    const maxFaults = this.#o.updateMaxAttempts ?? 3;
    const updateId = update.update_id;
    let message: InboundMessage | null | undefined;
    let faults = 0;
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return "aborted";
      const sink = this.#sink;
      // Not started (a webhook delivery before getMe answered) or stopped: not ours to drop.
      if (!sink || !this.#me) return "aborted";
      let stage: "prepare" | "commit" = "prepare";
      try {
        if (message === undefined) message = await this.#toInbound(update, signal);
        if (message === null) return "done";
        if (signal.aborted) return "aborted"; // stopped mid-download: leave it for redelivery
        stage = "commit";
        await sink.accept(message);
        return "done";
      } catch (err) {
        if (signal.aborted) return "aborted";
        if (stage === "commit" && err instanceof SinkUnavailableError) {
          if (onCommitFailure === "throw") throw err;
          const waitMs = Math.max(err.retryAfterMs, this.#backoffMs(attempt));
          log.warn(
            { err, updateId, retryInMs: waitMs },
            "could not commit a Telegram update; it stays unconfirmed and is retried",
          );
          await this.#pause(waitMs, signal);
          continue;
        }
        faults++;
        if (faults >= maxFaults) {
          log.error(
            { err, updateId, attempts: faults, stage },
            `giving up on Telegram update ${updateId} after ${faults} failed attempts; it is skipped`,
          );
          return "done";
        }
        log.warn(
          { err, updateId, attempt: faults, stage },
          "could not handle a Telegram update; trying again",
        );
        await this.#pause(this.#backoffMs(faults), signal);
      }
    }
  }

  #backoffMs(attempt: number): number {
    return backoffDelayMs(attempt, {
      baseMs: this.#o.retryBaseMs ?? 500,
      maxMs: 30_000,
      random: this.#o.random,
    });
  }

  /** Waits `ms`, or less when `signal` aborts (the caller checks `signal.aborted`). */
  async #pause(ms: number, signal: AbortSignal): Promise<void> {
    await this.#clock.sleep(ms, signal).catch(() => undefined);
  }

  /** The update as an inbound message with its files saved, or null when it is not one. */
  async #toInbound(update: Update, signal: AbortSignal): Promise<InboundMessage | null> {
    const me = this.#me;
    const bot = this.#bot;
    if (!me || !bot) throw new Error("telegram channel is not started");
    const mapped = mapUpdate(update, me, this.#rules);
    if (mapped.type === "ignore") {
      this.#o.logger.info({ updateId: update.update_id, why: mapped.why }, "telegram update ignored");
      return null;
    }
    const notes: string[] = [];
    const attachments: Attachment[] = [];
    const base: InboundMessage = {
      channel: "telegram",
      accountId: this.accountId,
      chatId: mapped.chatId,
      ...(mapped.threadId ? { threadId: mapped.threadId } : {}),
      senderId: mapped.senderId,
      senderName: mapped.senderName,
      isDirect: mapped.isDirect,
      mentionsBot: mapped.mentionsBot,
      text: mapped.text,
      attachments,
      platformMessageId: `${mapped.chatId}:${mapped.message.message_id}`,
      ...(mapped.replyToText ? { replyToText: mapped.replyToText } : {}),
      receivedAt: this.#clock.now(),
    };
    // Files of a sender who will not reach the agent (unknown, not addressed) never reach disk.
    const files = mapped.files.length > 0 && (await this.#sink?.admits?.(base)) === false ? [] : mapped.files;
    if (files.length < mapped.files.length) {
      this.#o.logger.info(
        { updateId: update.update_id, chatId: mapped.chatId, files: mapped.files.length },
        "attachments not downloaded: the sender is not admitted",
      );
    }
    for (const file of files) {
      const saved = await downloadTelegramFile(
        file,
        { chatId: mapped.chatId, threadId: mapped.threadId, messageId: mapped.message.message_id },
        {
          api: bot.api,
          apiRoot: this.#o.apiRoot,
          token: this.#o.token,
          workspaceDir: this.#o.workspaceDir,
          maxBytes: this.#o.mediaMaxBytes,
          timeoutMs: this.#o.downloadTimeoutMs ?? 30_000,
          limitSetting: "channels.telegram.mediaMaxMb",
          clock: this.#clock,
        },
        signal,
      );
      if (typeof saved === "string") {
        this.#o.logger.warn(
          { updateId: update.update_id, chatId: mapped.chatId, fileId: file.fileId, note: saved },
          "attachment not saved",
        );
        notes.push(saved);
      } else attachments.push(saved);
    }
    const text = [mapped.text, ...notes].filter((t) => t.length > 0).join("\n");
    return { ...base, text };
  }

  // ------------------------------------------------------------------ outbound

  /** Markdown → Telegram HTML chunks of at most 4096 characters, never splitting a code block. */
  prepare(markdown: string): string[] {
    return renderTelegramChunks(markdown, this.limits.maxMessageChars).map((c) => c.html);
  }

  async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt> {
    const bot = this.#requireBot();
    const abort = signal as GrammySignal;
    const chatId = message.chatId;
    const threadId = message.threadId ? Number(message.threadId) : undefined;
    const replyToId = messageIdOf(message.replyTo);
    const preview = await this.#previews.take(message);
    try {
      if (preview) {
        const finished = await this.#finishPreview(bot, chatId, preview.messageId, message.text, abort);
        // Done, or gone (deleted by the user): either way the preview is forgotten.
        preview.done();
        if (finished) return { platformMessageId: String(preview.messageId) };
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
        if (this.#failure(err).kind !== "bad_entities") throw err;
        this.#o.logger.warn(
          { chatId, err: this.#failure(err).description },
          "Telegram rejected the formatting; sending plain text",
        );
        const sent = await bot.api.sendMessage(
          chatId,
          htmlToText(message.text, this.limits.maxMessageChars),
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
        const kind = this.#failure(err).kind;
        if (kind === "not_modified") return true;
        if (kind === "message_gone") return false;
        throw err;
      }
    };
    try {
      return await edit(html, { parse_mode: "HTML" });
    } catch (err) {
      if (this.#failure(err).kind !== "bad_entities") throw err;
    }
    return edit(htmlToText(html, this.limits.maxMessageChars), {});
  }

  async typing(target: ChatTarget): Promise<void> {
    const threadId = target.threadId ? Number(target.threadId) : undefined;
    await this.#requireBot().api.sendChatAction(
      target.chatId,
      "typing",
      threadId ? { message_thread_id: threadId } : {},
    );
  }

  async edit(target: ChatTarget, platformMessageId: string, text: string): Promise<void> {
    await this.#requireBot().api.editMessageText(target.chatId, Number(platformMessageId), text, {
      parse_mode: "HTML",
    });
  }

  /**
   * Streaming preview (`streaming: edit`): one message per turn, edited as text arrives, no
   * more than once a second, replying to the message the turn answers (`target.replyTo`).
   */
  streamDelta(target: ChatTarget & { replyTo?: string }, delta: string): void {
    if (this.#o.streaming !== "edit") return;
    this.#previews.delta(target, delta);
  }

  // ------------------------------------------------------------------ errors

  #requireBot(): Bot {
    if (!this.#bot)
      throw new ChannelSendError("transient", `telegram account ${this.accountId} is not started`);
    return this.#bot;
  }

  #failure(err: unknown): TelegramFailure {
    return toTelegramFailure(err, this.#grammy);
  }

  #label(): string {
    return `telegram account "${this.accountId}"${this.#me ? ` (@${this.#me.username})` : ""}`;
  }

  #toSendError(err: unknown, chatId: string): ChannelSendError {
    if (err instanceof ChannelSendError) return err;
    const sendError = toSendError(this.#failure(err), err, chatId);
    if (!sendError.retryable)
      this.#o.logger.warn({ chatId, err: sendError.message }, "Telegram refused the message");
    return sendError;
  }
}
