/**
 * Telegram through grammY: long polling (default) or a webhook on the gateway's HTTP server.
 * This file is the channel's lifecycle: connecting (getMe, setMyCommands, then polling or
 * setWebhook; retried in the background while Telegram is unreachable) and stopping. Updates
 * are committed by TelegramIntake (telegram-intake.ts), replies go out through TelegramSender
 * (telegram-sender.ts).
 */
import type { Bot } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import { backoffDelayMs } from "../../util/backoff.js";
import { type Clock, systemClock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { helperLines } from "../helper-lines.js";
import type { HelperProgress, RouteRegistrar } from "../types.js";
import type {
  Channel,
  ChannelHealth,
  ChannelLimits,
  ChatTarget,
  InboundSink,
  OutboundMessage,
  SendReceipt,
} from "../types.js";
import type { PreviewLedger } from "../preview-ledger.js";
import { type TelegramFailure, configProblem, toTelegramFailure } from "./errors.js";
import { TelegramPoller } from "./polling.js";
import { TelegramIntake } from "./telegram-intake.js";
import { TelegramSender } from "./telegram-sender.js";

/** A running turn's live-text target, as the previews need it (the gateway passes a StreamTarget). */
type LiveTarget = ChatTarget & { replyTo?: string; recovered?: boolean };

type Grammy = typeof import("grammy");
/** grammY types its AbortSignal from the abort-controller shim; Node's own is what it gets at run time. */
type GrammySignal = Parameters<Bot["api"]["getUpdates"]>[1];

/** One Telegram account's settings (module.ts builds them from the config) and seams. */
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
  /** How long this process still holds a resource lease (ChannelFactoryContext.leaseRemainingMs); asked before each poll. */
  leaseRemainingMs?: (name: string) => number;
  /** Wait after a 409 on getUpdates: another poller or a webhook holds the bot (default 30 s). */
  conflictBackoffMs?: number;
  /** Least time between two edits of a streaming preview (default 1 s). */
  previewEditIntervalMs?: number;
  /** Where streaming previews are recorded across restarts (the store); absent: in memory only. */
  previewLedger?: PreviewLedger;
  /** Time source and timers of every wait: reconnects, retries, polling, previews (default `systemClock`). */
  clock?: Clock;
  /** Uniform [0, 1) source of the backoff jitter (default Math.random). */
  random?: () => number;
}

/** Updates the gateway asks Telegram for. */
const ALLOWED_UPDATES = ["message", "edited_message"] as const;

/** One Telegram bot account as a Channel (see the file header). */
export class TelegramChannel implements Channel {
  readonly name = "telegram" as const;
  readonly accountId: string;
  /** Long polling: one poller per bot in a cluster (Telegram answers a second one 409). Webhooks: every node. */
  readonly exclusive?: string;
  readonly limits: ChannelLimits = { maxMessageChars: 4096, formatting: "telegram-html" };
  readonly #o: TelegramChannelOptions;
  #grammy: Grammy | undefined;
  #bot: Bot | undefined;
  #me: UserFromGetMe | undefined;
  #sink: InboundSink | undefined;
  /** Aborted on stop: ends polling, downloads and background reconnects. */
  #life: AbortController | undefined;
  #connecting: Promise<void> | undefined;
  #poller: TelegramPoller | undefined;
  #health: ChannelHealth = { state: "stopped", detail: "not started" };
  #polling: Promise<unknown> | undefined;
  readonly #intake: TelegramIntake;
  readonly #sender: TelegramSender;
  readonly #clock: Clock;

  constructor(options: TelegramChannelOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.accountId = options.accountId;
    if (options.mode === "polling") this.exclusive = `channel:telegram:${options.accountId}`;
    this.#intake = new TelegramIntake({
      ...options,
      rules: {
        mentionPatterns: options.mentionPatterns.map((p) => new RegExp(p, "i")),
        commands: new Set(options.commands.map((c) => c.command.toLowerCase())),
      },
      clock: this.#clock,
      sink: () => this.#sink,
      me: () => this.#me,
      bot: () => this.#bot,
      life: () => this.#life,
    });
    this.#sender = new TelegramSender({
      ...options,
      maxMessageChars: this.limits.maxMessageChars,
      clock: this.#clock,
      bot: () => this.#bot,
      failure: (err) => this.#failure(err),
    });
    if (options.mode === "webhook") {
      if (!options.webhook || !options.server) {
        throw new Error(
          `telegram account ${options.accountId}: webhook mode needs webhook settings and the gateway server`,
        );
      }
      options.server.route("POST", options.webhook.path, (req, res) => this.#intake.webhook(req, res));
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
    // Before the bot exists, so no turn previews before earlier attempts' previews are known.
    await this.#sender.previews.restore();
    this.#grammy = await import("grammy");
    this.#bot = new this.#grammy.Bot(o.token, {
      client: { apiRoot: o.apiRoot, timeoutSeconds: (o.pollTimeoutSeconds ?? 30) + 15 },
    });
    this.#life = new AbortController();
    this.#health = { state: "connecting" };
    try {
      await this.#connect();
    } catch (err) {
      const fatal = configProblem(this.#failure(err), this.accountId, err);
      if (fatal) throw fatal;
      o.logger.error(
        { err: this.#failure(err).description },
        "cannot reach Telegram; retrying in the background",
      );
      this.#health = {
        state: "connecting",
        detail: `cannot reach Telegram: ${this.#failure(err).description}`,
      };
      this.#connecting = this.#connectLater(this.#life.signal);
    }
  }

  /** Connected once getMe answered; stopped (with why) when Telegram rejected the token. */
  health(): ChannelHealth {
    return this.#health;
  }

  async #connect(): Promise<void> {
    const o = this.#o;
    const bot = this.#bot as Bot;
    const me = await bot.api.getMe();
    this.#me = me;
    bot.botInfo = me;
    this.#sender.previews.removeOrphansLater();
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
      this.#health = { state: "connected" };
      return;
    }
    await bot.api.deleteWebhook();
    const [remaining, exclusive] = [o.leaseRemainingMs, this.exclusive];
    const poller = new TelegramPoller({
      label: this.#label(),
      getUpdates: (params, signal) =>
        bot.api.getUpdates({ ...params, allowed_updates: [...ALLOWED_UPDATES] }, signal as GrammySignal),
      handle: async (update, signal) => (await this.#intake.handle(update, signal, "retry")) === "done",
      failure: (err) => this.#failure(err),
      pollTimeoutSeconds: o.pollTimeoutSeconds ?? 30,
      ...(o.retryBaseMs !== undefined ? { retryBaseMs: o.retryBaseMs } : {}),
      ...(o.conflictBackoffMs !== undefined ? { conflictBackoffMs: o.conflictBackoffMs } : {}),
      // Not while this process's lease on the bot has run out (it stalled): another may poll.
      ...(remaining && exclusive ? { pollWindowMs: () => remaining(exclusive) } : {}),
      clock: this.#clock,
      random: o.random,
      logger: o.logger,
    });
    this.#poller = poller;
    this.#polling = poller.run((this.#life as AbortController).signal).then((end) => {
      if (end === "unauthorized")
        this.#health = {
          state: "stopped",
          detail: `Telegram rejected the bot token; polling stopped (fix ${this.#label()}'s token and restart)`,
        };
      return end;
    });
    this.#health = { state: "connected" };
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
          this.#health = { state: "stopped", detail: fatal.message };
          return;
        }
        this.#o.logger.warn({ err: this.#failure(err).description, attempt }, "still cannot reach Telegram");
      }
    }
  }

  async stop(): Promise<void> {
    this.#sink = undefined;
    if (this.#health.state !== "stopped") this.#health = { state: "stopped", detail: "stopped" };
    this.#sender.forgetPreviews();
    if (this.#life) {
      this.#life.abort();
      await this.#connecting;
      await this.#polling;
      this.#life = undefined;
      // Confirm what was committed, so a restart does not fetch it again (dedupe would drop it
      // anyway) — only while this process still holds the bot: a node that lost its lease (it
      // stalled) would, by polling, knock the new holder's long poll off.
      const offset = this.#poller?.offset ?? 0;
      const remaining = this.#o.leaseRemainingMs;
      const holds = !remaining || !this.exclusive || remaining(this.exclusive) > 0;
      if (offset > 0 && holds) {
        await this.#bot?.api
          .getUpdates({ offset, limit: 1, timeout: 0 }, AbortSignal.timeout(5_000) as GrammySignal)
          .catch(() => undefined);
      }
    }
    // A stopped channel sends nothing: send, typing and edit fail with "not started".
    this.#bot = undefined;
  }

  // ------------------------------------------------------------------ outbound (telegram-sender.ts)

  /** Markdown → Telegram HTML chunks of at most 4096 characters, never splitting a code block. */
  prepare(markdown: string): string[] {
    return this.#sender.prepare(markdown);
  }

  send(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt> {
    return this.#sender.send(message, signal);
  }

  typing(target: ChatTarget): Promise<void> {
    return this.#sender.typing(target);
  }

  edit(target: ChatTarget, platformMessageId: string, text: string): Promise<void> {
    return this.#sender.edit(target, platformMessageId, text);
  }

  /**
   * Streaming preview (`streaming: edit`): one message per turn, edited as text arrives, no
   * more than once a second, replying to the message the turn answers (`target.replyTo`).
   */
  streamDelta(target: LiveTarget, delta: string): void {
    this.#sender.previews.delta(target, delta);
  }

  /** Drops the discarded tail of the turn's preview; its next edit shows the replacement. */
  streamReset(target: LiveTarget, discardedChars: number): void {
    this.#sender.previews.reset(target, discardedChars);
  }

  /** The turn ended with nothing to send here: its preview is deleted. */
  streamDiscard(target: LiveTarget): void {
    this.#sender.previews
      .discard(target)
      .catch((err: unknown) => this.#o.logger.debug({ err }, "could not discard a preview"));
  }

  /** The session's helpers at work: one line each in the preview of its next turn. */
  streamHelpers(target: LiveTarget, progress: HelperProgress): void {
    this.#sender.previews.status(target, helperLines(progress.helpers));
  }

  // ------------------------------------------------------------------ helpers

  #failure(err: unknown): TelegramFailure {
    return toTelegramFailure(err, this.#grammy);
  }

  #label(): string {
    return `telegram account "${this.accountId}"${this.#me ? ` (@${this.#me.username})` : ""}`;
  }

  /** Waits `ms`, or less when `signal` aborts (the caller checks `signal.aborted`). */
  async #pause(ms: number, signal: AbortSignal): Promise<void> {
    await this.#clock.sleep(ms, signal).catch(() => undefined);
  }
}
