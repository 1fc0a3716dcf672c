/**
 * Discord through discord.js: this file is the channel's lifecycle — the client (intents Guilds,
 * GuildMessages, DirectMessages and the privileged MessageContent; `Partials.Channel` so DMs
 * arrive; caches bounded so memory stays flat however many messages pass), logging in (the
 * gateway URL from /gateway/bot; retried in the background while Discord is unreachable),
 * reconnects and resumes (the library's; logged and counted here), a missing MessageContent
 * intent (close 4014: the channel stops and says what to enable, in the log and in `status`),
 * slash command registration, and stopping. Messages are committed by DiscordIntake, replies go
 * out through DiscordSender. discord.js is imported when the channel starts.
 */
import type { Client } from "discord.js";
import { backoffDelayMs } from "../../util/backoff.js";
import { type Clock, systemClock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { helperLines } from "../helper-lines.js";
import type {
  Channel,
  ChannelHealth,
  ChannelLimits,
  ChatTarget,
  HelperProgress,
  InboundSink,
  OutboundMessage,
  SendReceipt,
} from "../types.js";
import { discordClientOptions, registerCommands, type SlashCommandScope } from "./client.js";
import { type ChatMarker, DiscordCatchUp } from "./catch-up.js";
import { DiscordIntake } from "./discord-intake.js";
import { DiscordSender } from "./discord-sender.js";
import type { PreviewLedger } from "../preview-ledger.js";
import { toDiscordFailure } from "./errors.js";
import type { DiscordAccountPlan } from "./settings.js";

type Target = ChatTarget & { replyTo?: string; recovered?: boolean };

/** Gateway close codes after which discord.js does not reconnect, with what to do about each. */
const FATAL_CLOSE: Readonly<Record<number, string>> = {
  4004: "Discord rejected the bot token; check the token (Developer Portal → Bot → Reset Token)",
  4013: "Discord rejected the gateway intents (invalid intents)",
  4014: "the Message Content intent is not enabled: turn on Developer Portal → your application → Bot → Privileged Gateway Intents → MESSAGE CONTENT INTENT, then restart",
};

/** A typing indicator lasts 10 s on Discord; one sooner than this after the last is skipped. */
const TYPING_REUSE_MS = 7_000;

/** One bot's settings (module.ts builds them from the config) and seams. */
export interface DiscordChannelOptions extends DiscordAccountPlan {
  mentionPatterns: readonly string[];
  streaming: "off" | "edit";
  maxMessageChars: number;
  maxLinesPerMessage: number;
  mediaMaxBytes: number;
  /** Attachments are saved under <workspaceDir>/inbox/discord/<channel>[/<thread>]/. */
  workspaceDir: string;
  /** The chat commands registered as slash commands. */
  commands: ReadonlyArray<{ command: string; description: string }>;
  /** Where they are registered: globally, in these servers, or not at all. */
  slashCommands: SlashCommandScope;
  restRequestsPerSecond: number;
  maxRateLimitWaitMs: number;
  /** How far back a restart reads the chats it talked in (ms); 0: not at all. */
  catchUpMs?: number;
  /** The newest message taken from each chat since a time (the inbox's), and when. */
  lastTaken?(since: number): Promise<ChatMarker[]>;
  /** Called when the gateway connection is back after a loss (resumed or re-identified). */
  onReconnected?(): void;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  /** Tests: skip discord.js's 5 s spacing between identifies. */
  fastIdentify?: boolean;
  /** Limit for one attachment download (default 30 s). */
  downloadTimeoutMs?: number;
  /** Least time between two edits of a streaming preview (default 1 s). */
  previewEditIntervalMs?: number;
  /** Where streaming previews are recorded across restarts (the store); absent: in memory only. */
  previewLedger?: PreviewLedger;
  /** How long a login may take to reach READY (default 60 s). */
  readyTimeoutMs?: number;
}

/** One Discord bot as a Channel (see the file header). */
export class DiscordChannel implements Channel {
  readonly name = "discord" as const;
  readonly accountId: string;
  /** One gateway connection per bot in a cluster: the node holding this lease runs it. */
  readonly exclusive: string;
  readonly limits: ChannelLimits;
  readonly #o: DiscordChannelOptions;
  readonly #clock: Clock;
  readonly #intake: DiscordIntake;
  readonly #sender: DiscordSender;
  readonly #typedAt = new Map<string, number>();
  readonly #catchUp: DiscordCatchUp;
  #client: Client | undefined;
  #botId: string | undefined;
  #sink: InboundSink | undefined;
  #life: AbortController | undefined;
  #connecting: Promise<void> | undefined;
  #health: ChannelHealth = { state: "stopped", detail: "not started" };
  #readyOnce = false;

  constructor(options: DiscordChannelOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.accountId = options.accountId;
    this.exclusive = `channel:discord:${options.accountId}`;
    this.limits = {
      maxMessageChars: options.maxMessageChars,
      maxLines: options.maxLinesPerMessage,
      formatting: "discord-markdown",
    };
    this.#intake = new DiscordIntake({
      accountId: options.accountId,
      workspaceDir: options.workspaceDir,
      mediaMaxBytes: options.mediaMaxBytes,
      downloadTimeoutMs: options.downloadTimeoutMs ?? 30_000,
      mentionPatterns: options.mentionPatterns.map((p) => new RegExp(p, "i")),
      clock: this.#clock,
      logger: options.logger,
      sink: () => this.#sink,
      botId: () => this.#botId,
      life: () => this.#life?.signal,
    });
    this.#catchUp = new DiscordCatchUp({
      catchUpMs: options.catchUpMs ?? 0,
      ...(options.lastTaken ? { lastTaken: options.lastTaken } : {}),
      take: (message) => this.#intake.message(message),
      clock: this.#clock,
      logger: options.logger,
    });
    this.#sender = new DiscordSender({
      ...options,
      clock: this.#clock,
      rest: () => this.#client?.rest,
      botId: () => this.#botId,
    });
  }

  /** The bot's user id, once connected. */
  get botId(): string | undefined {
    return this.#botId;
  }

  health(): ChannelHealth {
    return this.#health;
  }

  /**
   * Logs in and waits for READY. A rejected token throws (a configuration problem the gateway
   * reports as it exits); a missing intent stops this channel (health says why) and the gateway
   * runs on; a network failure is retried in the background with backoff.
   */
  async start(sink: InboundSink): Promise<void> {
    this.#sink = sink;
    // Before the client exists, so no turn previews before earlier attempts' previews are known,
    // and no live message of a chat is taken before what that chat missed.
    await this.#sender.previews.restore();
    await this.#catchUp.prepare();
    this.#life = new AbortController();
    this.#health = { state: "connecting" };
    try {
      await this.#connect();
    } catch (err) {
      if (err instanceof FatalCloseError) return this.#halt(err.message);
      const fatal = this.#configProblem(err);
      if (fatal) throw fatal;
      this.#o.logger.error(
        { err: toDiscordFailure(err).description },
        "cannot reach Discord; retrying in the background",
      );
      this.#connecting = this.#connectLater(this.#life.signal);
    }
  }

  async #connect(): Promise<void> {
    const o = this.#o;
    const dj = await import("discord.js");
    const client = new dj.Client(discordClientOptions(dj, this.#o));
    this.#client = client;
    let failLogin: (err: Error) => void = () => {};
    const closedFatally = new Promise<never>((_, reject) => {
      failLogin = reject;
    });
    closedFatally.catch(() => {}); // raced below; a close after READY halts the channel instead
    client.on(dj.Events.ShardDisconnect, (event) => {
      if (this.#client !== client) return;
      const why =
        FATAL_CLOSE[event.code] ?? `the gateway closed with code ${event.code} and will not reconnect`;
      const err = new FatalCloseError(event.code, why);
      failLogin(err);
      if (this.#readyOnce) this.#halt(err.message);
    });
    client.on(dj.Events.ShardReconnecting, () => {
      if (this.#client !== client) return; // destroyed on purpose (stop, halt)
      this.#health = { state: "connecting", detail: "reconnecting to the gateway" };
      o.logger.warn("discord gateway connection lost; reconnecting");
    });
    client.on(dj.Events.ShardResume, (_id, replayed) => {
      this.#health = { state: "connected" };
      o.logger.info({ replayed }, "discord gateway resumed");
      o.onReconnected?.();
    });
    client.on(dj.Events.ShardReady, () => {
      if (!this.#readyOnce) return;
      this.#health = { state: "connected" };
      o.logger.info("discord gateway re-identified (a new session)");
      o.onReconnected?.();
    });
    client.on(dj.Events.ShardError, (err) => o.logger.warn({ err: err.message }, "discord gateway error"));
    client.on(dj.Events.Error, (err) => o.logger.error({ err }, "discord client error"));
    client.on(dj.Events.Raw, (packet: { t?: string; d?: { id?: string } }) => {
      if (packet.t === "MESSAGE_UPDATE")
        o.logger.debug({ messageId: packet.d?.id }, "discord message ignored: an edit");
    });
    client.on(dj.Events.MessageCreate, (message) => this.#catchUp.live(message));
    client.on(dj.Events.InteractionCreate, (interaction) => {
      if (interaction.isChatInputCommand()) void this.#intake.command(interaction);
    });
    const ready = new Promise<void>((resolve) => client.once(dj.Events.ClientReady, () => resolve()));
    const timeout = this.#readyTimeout();
    try {
      await Promise.race([client.login(o.token).then(() => ready), closedFatally, timeout.expired]);
    } catch (err) {
      await client.destroy().catch(() => {});
      this.#client = undefined;
      throw err;
    } finally {
      timeout.cancel();
    }
    this.#botId = client.user?.id;
    this.#readyOnce = true;
    this.#catchUp.ready(client);
    this.#sender.previews.removeOrphansLater();
    this.#health = { state: "connected" };
    o.logger.info({ bot: client.user?.tag, guilds: client.guilds.cache.size }, "discord gateway connected");
    await registerCommands(client, o.commands, o.slashCommands, o.logger);
  }

  /** Rejects after `readyTimeoutMs` unless cancelled (the login settled first). */
  #readyTimeout(): { expired: Promise<never>; cancel(): void } {
    const ms = this.#o.readyTimeoutMs ?? 60_000;
    let timer: ReturnType<Clock["setTimeout"]> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = this.#clock.setTimeout(
        () => reject(new Error(`no READY from the Discord gateway within ${ms} ms`)),
        ms,
        { unref: true },
      );
    });
    expired.catch(() => {}); // raced in #connect; never left unhandled
    return { expired, cancel: () => this.#clock.clearTimeout(timer) };
  }

  async #connectLater(signal: AbortSignal): Promise<void> {
    for (let attempt = 1; !signal.aborted; attempt++) {
      await this.#clock
        .sleep(backoffDelayMs(attempt, { baseMs: 2_000, maxMs: 60_000, random: this.#o.random }), signal)
        .catch(() => undefined);
      if (signal.aborted) return;
      try {
        await this.#connect();
        return;
      } catch (err) {
        if (err instanceof FatalCloseError) return this.#halt(err.message);
        const fatal = this.#configProblem(err);
        if (fatal) return this.#halt(fatal.message);
        this.#o.logger.warn(
          { err: toDiscordFailure(err).description, attempt },
          "still cannot reach Discord",
        );
      }
    }
  }

  /** The channel cannot run until its configuration changes: say why, everywhere, and let go. */
  #halt(why: string): void {
    this.#health = { state: "stopped", detail: why };
    this.#o.logger.error(`discord account ${this.accountId} stopped: ${why}`);
    const client = this.#client;
    this.#client = undefined;
    client?.destroy().catch((err: unknown) => this.#o.logger.debug({ err }, "discord client destroy failed"));
  }

  /** A start-up failure retrying cannot fix (a rejected token), naming the setting to check. */
  #configProblem(err: unknown): Error | undefined {
    const code = (err as { code?: unknown }).code;
    if (code !== "TokenInvalid" && toDiscordFailure(err).kind !== "auth") return undefined;
    const key =
      this.accountId === "default"
        ? "channels.discord.token"
        : `channels.discord.accounts.${this.accountId}.token`;
    return new Error(`discord account ${this.accountId}: Discord rejected the bot token; check ${key}`, {
      cause: err,
    });
  }

  async stop(): Promise<void> {
    this.#sink = undefined;
    this.#sender.forgetPreviews();
    if (this.#life) {
      this.#life.abort();
      await this.#connecting;
      this.#life = undefined;
    }
    const client = this.#client;
    this.#client = undefined;
    this.#catchUp.stop();
    if (this.#health.state !== "stopped") this.#health = { state: "stopped", detail: "stopped" };
    await client
      ?.destroy()
      .catch((err: unknown) => this.#o.logger.debug({ err }, "discord client destroy failed"));
  }

  // ------------------------------------------------------------------ outbound (discord-sender.ts)

  prepare(markdown: string): string[] {
    return this.#sender.prepare(markdown);
  }

  send(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt> {
    // A message ends the typing indicator on Discord: the next run's typing is sent at once.
    this.#typedAt.delete(message.threadId ?? message.chatId);
    return this.#sender.send(message, signal);
  }

  findSent(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt | undefined> {
    return this.#sender.findSent(message, signal);
  }

  /** Typing lasts 10 s on Discord: a refresh sooner than 7 s after the last is not sent. */
  async typing(target: Target): Promise<void> {
    const key = target.threadId ?? target.chatId;
    const now = this.#clock.now();
    if (now - (this.#typedAt.get(key) ?? Number.NEGATIVE_INFINITY) < TYPING_REUSE_MS) return;
    this.#typedAt.set(key, now);
    if (this.#typedAt.size > 1_000) this.#typedAt.clear();
    await this.#sender.typing(target);
  }

  edit(target: ChatTarget, platformMessageId: string, text: string): Promise<void> {
    return this.#sender.edit(target, platformMessageId, text);
  }

  streamDelta(target: Target, delta: string): void {
    this.#sender.previews.delta(target, delta);
  }

  streamReset(target: Target, discardedChars: number): void {
    this.#sender.previews.reset(target, discardedChars);
  }

  streamDiscard(target: Target): void {
    this.#sender.previews
      .discard(target)
      .catch((err: unknown) => this.#o.logger.debug({ err }, "could not discard a preview"));
  }

  /** The session's helpers at work: one line each in the preview of its next turn. */
  streamHelpers(target: Target, progress: HelperProgress): void {
    this.#sender.previews.status(target, helperLines(progress.helpers));
  }
}

/** The gateway closed with a code discord.js does not reconnect after. */
class FatalCloseError extends Error {
  readonly code: number;
  constructor(code: number, why: string) {
    super(why);
    this.name = "FatalCloseError";
    this.code = code;
  }
}
