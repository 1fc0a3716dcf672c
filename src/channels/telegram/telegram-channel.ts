/**
 * Telegram through grammY: long polling (default) or a webhook on the gateway's HTTP server.
 * An update's offset is confirmed only after the message is committed to the inbox, so a
 * crash re-delivers it and the inbox dedupe makes it count once. Replies go out as Telegram
 * HTML (plain text if Telegram rejects the entities), threaded to the message they answer.
 */
import { timingSafeEqual } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import type { Bot } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import type { Logger } from "../../util/logger.js";
import type { RouteRegistrar } from "../http/http-channel.js";
import {
  type Attachment,
  type Channel,
  type ChannelLimits,
  ChannelSendError,
  type ChatTarget,
  type InboundMessage,
  type InboundSink,
  type OutboundMessage,
  type SendReceipt,
} from "../types.js";
import { htmlToText, renderTelegramChunks } from "./format.js";
import { type PendingFile, mapUpdate } from "./inbound.js";

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
  /** Attachments are saved under <workspaceDir>/inbox/telegram/<chat id>/. */
  workspaceDir: string;
  /** Long-poll hold time (default 30 s). */
  pollTimeoutSeconds?: number;
  /** Commands registered with setMyCommands. */
  commands: ReadonlyArray<{ command: string; description: string }>;
  logger: Logger;
}

/** Updates the gateway asks Telegram for. */
const ALLOWED_UPDATES = ["message", "edited_message"] as const;
/** Streaming previews are edited at most this often. */
const PREVIEW_EDIT_MS = 1_000;

interface Preview {
  /** Set once the preview message is sent. */
  id: number | undefined;
  ready: Promise<void>;
  text: string;
  lastEditAt: number;
  timer: NodeJS.Timeout | undefined;
}

export class TelegramChannel implements Channel {
  readonly name = "telegram" as const;
  readonly accountId: string;
  readonly limits: ChannelLimits = { maxMessageChars: 4096, formatting: "telegram-html" };
  readonly #o: TelegramChannelOptions;
  readonly #patterns: RegExp[];
  #grammy: Grammy | undefined;
  #bot: Bot | undefined;
  #me: UserFromGetMe | undefined;
  #sink: InboundSink | undefined;
  /** Aborted on stop: ends polling and background reconnects. */
  #life: AbortController | undefined;
  #connecting: Promise<void> | undefined;
  #polling: Promise<void> | undefined;
  #offset = 0;
  readonly #previews = new Map<string, Preview>();

  constructor(options: TelegramChannelOptions) {
    this.#o = options;
    this.accountId = options.accountId;
    this.#patterns = options.mentionPatterns.map((p) => new RegExp(p, "i"));
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
   * Connects: getMe, setMyCommands, then long polling or setWebhook. A rejected token throws
   * (the gateway reports it and exits); a network failure is retried in the background with
   * backoff, so a gateway started while Telegram is unreachable still comes up.
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
      const g = this.#grammy;
      if (g && err instanceof g.GrammyError && (err.error_code === 401 || err.error_code === 404)) {
        throw new Error(
          `telegram account ${o.accountId}: the bot token was rejected (${err.error_code} ${err.description}); check channels.telegram.token`,
          { cause: err },
        );
      }
      o.logger.error({ err: this.#describe(err) }, "cannot reach Telegram; retrying in the background");
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
      .catch((err: unknown) => o.logger.warn({ err: this.#describe(err) }, "setMyCommands failed"));
    if (o.mode === "webhook" && o.webhook) {
      await bot.api.setWebhook(o.webhook.url, {
        secret_token: o.webhook.secret,
        allowed_updates: [...ALLOWED_UPDATES],
      });
      o.logger.info({ bot: me.username, url: o.webhook.url }, "telegram webhook set");
      return;
    }
    await bot.api.deleteWebhook();
    this.#polling = this.#pollLoop((this.#life as AbortController).signal);
    o.logger.info({ bot: me.username }, "telegram long polling started");
  }

  async #connectLater(signal: AbortSignal): Promise<void> {
    for (let attempt = 1; !signal.aborted; attempt++) {
      await sleep(Math.min(60_000, 1_000 * 2 ** Math.min(attempt, 6)), signal);
      if (signal.aborted) return;
      try {
        await this.#connect();
        return;
      } catch (err) {
        this.#o.logger.warn({ err: this.#describe(err), attempt }, "still cannot reach Telegram");
      }
    }
  }

  async stop(): Promise<void> {
    this.#sink = undefined;
    for (const p of this.#previews.values()) if (p.timer) clearTimeout(p.timer);
    this.#previews.clear();
    if (this.#life) {
      this.#life.abort();
      await this.#connecting;
      await this.#polling;
      this.#life = undefined;
      // Confirm what was committed, so a restart does not fetch it again (dedupe would drop it anyway).
      if (this.#offset > 0) {
        await this.#bot?.api
          .getUpdates(
            { offset: this.#offset, limit: 1, timeout: 0 },
            AbortSignal.timeout(5_000) as GrammySignal,
          )
          .catch(() => undefined);
      }
    }
  }

  // ------------------------------------------------------------------ inbound

  async #pollLoop(signal: AbortSignal): Promise<void> {
    const bot = this.#bot as Bot;
    const log = this.#o.logger;
    let failures = 0;
    while (!signal.aborted) {
      let updates: Update[];
      try {
        updates = await bot.api.getUpdates(
          {
            offset: this.#offset,
            timeout: this.#o.pollTimeoutSeconds ?? 30,
            allowed_updates: [...ALLOWED_UPDATES],
          },
          signal as GrammySignal,
        );
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        const wait = this.#retryAfterMs(err) ?? Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
        log.warn({ err: this.#describe(err), retryInMs: wait }, "telegram getUpdates failed");
        await sleep(wait, signal);
        continue;
      }
      for (const update of updates) {
        // Commit before confirming: the offset only moves past an update once it is in the inbox.
        for (let attempt = 1; !signal.aborted; attempt++) {
          try {
            await this.#handleUpdate(update);
            break;
          } catch (err) {
            const wait = Math.min(30_000, 500 * 2 ** Math.min(attempt, 6));
            log.error(
              { err, updateId: update.update_id, retryInMs: wait },
              "could not commit a Telegram update; retrying",
            );
            await sleep(wait, signal);
          }
        }
        if (signal.aborted) return;
        this.#offset = update.update_id + 1;
      }
    }
  }

  async #onWebhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const secret = this.#o.webhook?.secret ?? "";
    const given = String(req.headers["x-telegram-bot-api-secret-token"] ?? "");
    if (given.length !== secret.length || !timingSafeEqual(Buffer.from(given), Buffer.from(secret))) {
      res.writeHead(401).end("secret token is wrong");
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    let update: Update;
    try {
      update = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Update;
    } catch {
      res.writeHead(400).end("bad update");
      return;
    }
    try {
      await this.#handleUpdate(update);
      res.writeHead(200).end();
    } catch (err) {
      // Not committed: a non-2xx makes Telegram deliver it again.
      this.#o.logger.error({ err, updateId: update.update_id }, "could not commit a Telegram webhook update");
      res.writeHead(500).end();
    }
  }

  /** Maps, downloads files, and commits through the sink. Throws only if the commit failed. */
  async #handleUpdate(update: Update): Promise<void> {
    const sink = this.#sink;
    const me = this.#me;
    if (!sink || !me) throw new Error("telegram channel is not started");
    const mapped = mapUpdate(update, me, this.#patterns);
    if (mapped.type === "ignore") {
      this.#o.logger.info({ updateId: update.update_id, why: mapped.why }, "telegram update ignored");
      return;
    }
    const notes: string[] = [];
    const attachments: Attachment[] = [];
    for (const file of mapped.files) {
      const saved = await this.#download(file, mapped.chatId, mapped.message.message_id);
      if (typeof saved === "string") notes.push(saved);
      else attachments.push(saved);
    }
    const text = [mapped.text, ...notes].filter((t) => t.length > 0).join("\n");
    const message: InboundMessage = {
      channel: "telegram",
      accountId: this.accountId,
      chatId: mapped.chatId,
      ...(mapped.threadId ? { threadId: mapped.threadId } : {}),
      senderId: mapped.senderId,
      senderName: mapped.senderName,
      isDirect: mapped.isDirect,
      mentionsBot: mapped.mentionsBot,
      text,
      attachments,
      platformMessageId: `${mapped.chatId}:${mapped.message.message_id}`,
      ...(mapped.replyToText ? { replyToText: mapped.replyToText } : {}),
      receivedAt: Date.now(),
    };
    const result = await sink.accept(message);
    const direct =
      result.status === "command" ? result.reply : result.status === "rejected" ? result.reply : undefined;
    if (direct) {
      // Command answers and pairing codes go straight back; they are not agent replies.
      const target: ChatTarget = {
        channel: "telegram",
        accountId: this.accountId,
        chatId: mapped.chatId,
        ...(mapped.threadId ? { threadId: mapped.threadId } : {}),
      };
      for (const chunk of this.prepare(direct)) {
        await this.send({
          ...target,
          text: chunk,
          replyTo: message.platformMessageId,
          idempotencyKey: `direct-${message.platformMessageId}`,
        }).catch((err: unknown) =>
          this.#o.logger.warn({ err: this.#describe(err), chatId: mapped.chatId }, "direct reply failed"),
        );
      }
    }
  }

  /** Saves a file into the workspace; returns a note for the model instead when it cannot. */
  async #download(file: PendingFile, chatId: string, messageId: number): Promise<Attachment | string> {
    const max = this.#o.mediaMaxBytes;
    const mb = (n: number) => `${(n / 1_048_576).toFixed(1)} MB`;
    if (file.sizeBytes !== undefined && file.sizeBytes > max) {
      return `[attachment ${file.name} not downloaded: ${mb(file.sizeBytes)} is over the ${mb(max)} limit (channels.telegram.mediaMaxMb)]`;
    }
    try {
      const info = await (this.#bot as Bot).api.getFile(file.fileId);
      if (!info.file_path)
        return `[attachment ${file.name} could not be downloaded: Telegram gave no file path]`;
      const res = await fetch(`${this.#o.apiRoot}/file/bot${this.#o.token}/${info.file_path}`, {
        signal: AbortSignal.timeout(60_000),
      });
      if (!res.ok) return `[attachment ${file.name} could not be downloaded: HTTP ${res.status}]`;
      const bytes = Buffer.from(await res.arrayBuffer());
      if (bytes.length > max)
        return `[attachment ${file.name} not downloaded: ${mb(bytes.length)} is over the ${mb(max)} limit (channels.telegram.mediaMaxMb)]`;
      const relDir = join("inbox", "telegram", chatId.replace(/[^\w-]/g, "_"));
      const name = `${messageId}-${file.name.replace(/[^\w.-]/g, "_")}`;
      await mkdir(join(this.#o.workspaceDir, relDir), { recursive: true });
      await writeFile(join(this.#o.workspaceDir, relDir, name), bytes);
      return {
        kind: file.kind,
        path: join(relDir, name),
        sizeBytes: bytes.length,
        name: file.name,
        ...(file.mimeType ? { mimeType: file.mimeType } : {}),
      };
    } catch (err) {
      this.#o.logger.warn({ err: this.#describe(err), fileId: file.fileId }, "attachment download failed");
      return `[attachment ${file.name} could not be downloaded: ${this.#describe(err)}]`;
    }
  }

  // ------------------------------------------------------------------ outbound

  /** Markdown → Telegram HTML chunks of at most 4096 characters, never splitting a code block. */
  prepare(markdown: string): string[] {
    return renderTelegramChunks(markdown, this.limits.maxMessageChars).map((c) => c.html);
  }

  async send(message: OutboundMessage): Promise<SendReceipt> {
    const bot = this.#requireBot();
    const chatId = message.chatId;
    const threadId = message.threadId ? Number(message.threadId) : undefined;
    const replyToId = message.replyTo ? Number(message.replyTo.split(":").pop()) : undefined;
    const preview = await this.#takePreview(message);
    try {
      if (preview !== undefined) {
        try {
          await bot.api.editMessageText(chatId, preview, message.text, { parse_mode: "HTML" });
        } catch (err) {
          if (this.#isNotModified(err)) return { platformMessageId: String(preview) };
          if (!this.#isEntityError(err)) throw err;
          await bot.api.editMessageText(
            chatId,
            preview,
            htmlToText(message.text, this.limits.maxMessageChars),
          );
        }
        return { platformMessageId: String(preview) };
      }
      const other = {
        ...(threadId ? { message_thread_id: threadId } : {}),
        ...(replyToId && Number.isFinite(replyToId)
          ? { reply_parameters: { message_id: replyToId, allow_sending_without_reply: true } }
          : {}),
      };
      try {
        const sent = await bot.api.sendMessage(chatId, message.text, { ...other, parse_mode: "HTML" });
        return { platformMessageId: String(sent.message_id) };
      } catch (err) {
        if (!this.#isEntityError(err)) throw err;
        this.#o.logger.warn(
          { chatId, err: this.#describe(err) },
          "Telegram rejected the formatting; sending plain text",
        );
        const sent = await bot.api.sendMessage(
          chatId,
          htmlToText(message.text, this.limits.maxMessageChars),
          other,
        );
        return { platformMessageId: String(sent.message_id) };
      }
    } catch (err) {
      throw this.#toSendError(err, chatId);
    }
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

  /** Streaming preview: one message, edited as text arrives, no more than once a second. */
  streamDelta(target: ChatTarget, delta: string): void {
    if (this.#o.streaming !== "edit" || !this.#bot) return;
    const key = previewKey(target);
    const preview = this.#previews.get(key);
    if (!preview) {
      const threadId = target.threadId ? Number(target.threadId) : undefined;
      const fresh: Preview = {
        id: undefined,
        ready: Promise.resolve(),
        text: delta,
        lastEditAt: Date.now(),
        timer: undefined,
      };
      fresh.ready = this.#bot.api
        .sendMessage(
          target.chatId,
          delta.slice(0, 4096) || "…",
          threadId ? { message_thread_id: threadId } : {},
        )
        .then((m) => {
          fresh.id = m.message_id;
        })
        .catch((err: unknown) => {
          this.#o.logger.debug({ err: this.#describe(err) }, "preview send failed");
        });
      this.#previews.set(key, fresh);
      return;
    }
    preview.text += delta;
    if (preview.timer) return;
    const wait = Math.max(0, preview.lastEditAt + PREVIEW_EDIT_MS - Date.now());
    const p = preview;
    p.timer = setTimeout(() => {
      p.timer = undefined;
      p.lastEditAt = Date.now();
      void p.ready.then(() => {
        if (p.id === undefined || this.#previews.get(key) !== p) return;
        this.#bot?.api.editMessageText(target.chatId, p.id, p.text.slice(0, 4096)).catch(() => undefined);
      });
    }, wait);
    p.timer.unref();
  }

  /** The first chunk of a streamed reply replaces its preview message. */
  async #takePreview(message: OutboundMessage): Promise<number | undefined> {
    const key = previewKey(message);
    const preview = this.#previews.get(key);
    if (!preview) return undefined;
    this.#previews.delete(key);
    if (preview.timer) clearTimeout(preview.timer);
    await preview.ready;
    return preview.id;
  }

  // ------------------------------------------------------------------ errors

  #requireBot(): Bot {
    if (!this.#bot)
      throw new ChannelSendError("transient", `telegram account ${this.accountId} is not started`);
    return this.#bot;
  }

  #toSendError(err: unknown, chatId: string): ChannelSendError {
    const g = this.#grammy;
    if (g && err instanceof g.GrammyError) {
      if (err.error_code === 429) {
        return new ChannelSendError("rate_limit", err.description, {
          cause: err,
          retryAfterMs: (err.parameters.retry_after ?? 1) * 1000,
        });
      }
      if (err.error_code >= 500) return new ChannelSendError("transient", err.description, { cause: err });
      // 400 (chat not found, too long), 403 (blocked by the user, kicked), 401: retrying cannot help.
      this.#o.logger.warn(
        { chatId, code: err.error_code, description: err.description },
        "Telegram refused the message",
      );
      return new ChannelSendError("permanent", `${err.error_code} ${err.description} (chat ${chatId})`, {
        cause: err,
      });
    }
    if (err instanceof ChannelSendError) return err;
    return new ChannelSendError("transient", this.#describe(err), { cause: err });
  }

  #retryAfterMs(err: unknown): number | undefined {
    const g = this.#grammy;
    if (g && err instanceof g.GrammyError && err.error_code === 429)
      return (err.parameters.retry_after ?? 1) * 1000;
    return undefined;
  }

  #isEntityError(err: unknown): boolean {
    const g = this.#grammy;
    return Boolean(
      g &&
        err instanceof g.GrammyError &&
        err.error_code === 400 &&
        /can't parse entities/i.test(err.description),
    );
  }

  #isNotModified(err: unknown): boolean {
    const g = this.#grammy;
    return Boolean(g && err instanceof g.GrammyError && /message is not modified/i.test(err.description));
  }

  #describe(err: unknown): string {
    const g = this.#grammy;
    if (g && err instanceof g.GrammyError) return `${err.error_code} ${err.description}`;
    return err instanceof Error ? err.message : String(err);
  }
}

function previewKey(target: ChatTarget): string {
  return `${target.chatId}:${target.threadId ?? ""}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
