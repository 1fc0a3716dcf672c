/**
 * Telegram intake: one update, from long polling or a webhook request, mapped to an inbound
 * message, its files downloaded, and committed through the gateway's sink. An update is done
 * with (its offset confirmed, the webhook answered 2xx) only once committed, so a crash
 * re-delivers it and the inbox dedupe makes it count once. An update our own code cannot handle
 * is given up after a few attempts, so one bad update never blocks the bot.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Bot } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import { backoffDelayMs } from "../../util/backoff.js";
import type { Clock } from "../../util/clock.js";
import { saveAttachments } from "../attachments.js";
import { SinkUnavailableError } from "../errors.js";
import type { InboundMessage, InboundSink } from "../types.js";
import { downloadTelegramFile } from "./download.js";
import { type AddressingRules, mapUpdate } from "./inbound.js";
import type { TelegramChannelOptions } from "./telegram-channel.js";
import { readWebhookUpdate } from "./webhook.js";

/** What handling one update came to: done with (committed, ignored or given up), or left for redelivery. */
export type UpdateOutcome = "done" | "aborted";

/**
 * What intake needs of its channel: the channel's settings (their defaults are documented on
 * TelegramChannelOptions) and its live state, read at each use.
 */
export interface TelegramIntakeOptions
  extends Pick<
    TelegramChannelOptions,
    | "accountId"
    | "apiRoot"
    | "token"
    | "workspaceDir"
    | "mediaMaxBytes"
    | "downloadTimeoutMs"
    | "updateMaxAttempts"
    | "retryBaseMs"
    | "random"
    | "webhook"
    | "server"
    | "logger"
  > {
  rules: AddressingRules;
  clock: Clock;
  /** Where messages are committed; undefined before start and after stop. */
  sink(): InboundSink | undefined;
  /** The bot's identity; undefined until getMe answered. */
  me(): UserFromGetMe | undefined;
  /** The bot; undefined while the channel is stopped. */
  bot(): Bot | undefined;
  /** The channel's life, aborted on stop; undefined before start. */
  life(): AbortController | undefined;
}

/** Turns updates into committed inbound messages (see the file header). */
export class TelegramIntake {
  readonly #o: TelegramIntakeOptions;

  constructor(options: TelegramIntakeOptions) {
    this.#o = options;
  }

  /** Answers one webhook request: 200 once its update is done with, 5xx to have Telegram retry. */
  async webhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const update = await readWebhookUpdate(req, res, {
      secret: this.#o.webhook?.secret ?? "",
      maxBytes: this.#o.server?.maxBodyBytes ?? 1_048_576,
    });
    if (!update) return;
    const life = this.#o.life();
    if (!life || life.signal.aborted) {
      res.writeHead(503).end();
      return;
    }
    try {
      const handled = await this.handle(update, life.signal, "throw");
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
  async handle(
    update: Update,
    signal: AbortSignal,
    onCommitFailure: "retry" | "throw",
  ): Promise<UpdateOutcome> {
    const log = this.#o.logger;
    const maxFaults = this.#o.updateMaxAttempts ?? 3;
    const updateId = update.update_id;
    let message: InboundMessage | null | undefined;
    let faults = 0;
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return "aborted";
      const sink = this.#o.sink();
      // Not started (a webhook delivery before getMe answered) or stopped: not ours to drop.
      if (!sink || !this.#o.me()) return "aborted";
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
    await this.#o.clock.sleep(ms, signal).catch(() => undefined);
  }

  /** The update as an inbound message with its files saved, or null when it is not one. */
  async #toInbound(update: Update, signal: AbortSignal): Promise<InboundMessage | null> {
    const me = this.#o.me();
    const bot = this.#o.bot();
    if (!me || !bot) throw new Error("telegram channel is not started");
    const mapped = mapUpdate(update, me, this.#o.rules);
    if (mapped.type === "ignore") {
      this.#o.logger.info({ updateId: update.update_id, why: mapped.why }, "telegram update ignored");
      return null;
    }
    const base: InboundMessage = {
      channel: "telegram",
      accountId: this.#o.accountId,
      chatId: mapped.chatId,
      ...(mapped.threadId ? { threadId: mapped.threadId } : {}),
      senderId: mapped.senderId,
      senderName: mapped.senderName,
      isDirect: mapped.isDirect,
      mentionsBot: mapped.mentionsBot,
      text: mapped.text,
      attachments: [],
      platformMessageId: `${mapped.chatId}:${mapped.message.message_id}`,
      ...(mapped.replyToText ? { replyToText: mapped.replyToText } : {}),
      receivedAt: this.#o.clock.now(),
    };
    return saveAttachments(base, mapped.files, {
      admits: this.#o.sink()?.admits?.bind(this.#o.sink()),
      logger: this.#o.logger,
      describe: (file) => ({ updateId: update.update_id, fileId: file.fileId }),
      save: (file) =>
        downloadTelegramFile(
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
            clock: this.#o.clock,
          },
          signal,
        ),
    });
  }
}
