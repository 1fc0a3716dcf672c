/**
 * Slack through Bolt: Socket Mode (default) or the Events API on the gateway's HTTP server.
 * This file is the channel's lifecycle: connecting (auth.test with the bot token, then Bolt's
 * App on a receiver that acknowledges only what is committed; retried in the background while
 * Slack is unreachable) and stopping. Deliveries are committed by SlackIntake
 * (slack-intake.ts), replies go out through SlackSender (slack-sender.ts). Bolt is imported
 * when the channel starts, so a gateway without Slack never loads it.
 */
import type { App, webApi } from "@slack/bolt";
import type { Logger as SlackLogger, LogLevel } from "@slack/logger";
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
  RouteRegistrar,
  SendReceipt,
} from "../types.js";
import type { PreviewLedger } from "../preview-ledger.js";
import { SlackDirectory } from "./directory.js";
import { toSlackFailure } from "./errors.js";
import type { SlackIdentity, SlackMessageEvent } from "./inbound.js";
import { DurableSocketReceiver, GatewayHttpReceiver } from "./receiver.js";
import type { SlackAccountPlan } from "./settings.js";
import { BotThreads, type SlashCommandBody, SlackIntake } from "./slack-intake.js";
import { SlackSender } from "./slack-sender.js";

/** A running turn's live-text target, as the previews need it (the gateway passes a StreamTarget). */
type LiveTarget = ChatTarget & { replyTo?: string; recovered?: boolean };

/** What the adapter takes from Bolt, loaded when the channel starts. */
interface Bolt {
  App: typeof import("@slack/bolt").App;
  webApi: typeof import("@slack/bolt").webApi;
  verifySlackRequest: typeof import("@slack/bolt").verifySlackRequest;
}
type Target = ChatTarget & { replyTo?: string };

/** One Slack app's settings (module.ts builds them from the config) and seams. */
export interface SlackChannelOptions extends SlackAccountPlan {
  server?: RouteRegistrar;
  mentionPatterns: readonly string[];
  streaming: "off" | "edit";
  workingStatus: "auto" | "reaction" | "off";
  workingReaction: string;
  maxMessageChars: number;
  /** Largest attachment downloaded (bytes). */
  mediaMaxBytes: number;
  /** Attachments are saved under <workspaceDir>/inbox/slack/<channel>[/<thread>]/. */
  workspaceDir: string;
  /** The chat commands the slash command maps to. */
  commands: ReadonlyArray<{ command: string; description: string }>;
  /** Called when Socket Mode is back after losing its connection. */
  onReconnected?(): void;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  /** Limit for one attachment download (default 30 s). */
  downloadTimeoutMs?: number;
  /** Least time between two edits of a streaming preview (default 1 s). */
  previewEditIntervalMs?: number;
  /** Where streaming previews are recorded across restarts (the store); absent: in memory only. */
  previewLedger?: PreviewLedger;
  /** Socket Mode pong wait and reconnect step (default 5 s; tests shorten it). */
  clientPingTimeoutMs?: number;
  /** Page size of the sent-reply lookup (default 200). */
  lookupPageSize?: number;
}

/** One Slack app as a Channel (see the file header). */
export class SlackChannel implements Channel {
  readonly name = "slack" as const;
  readonly accountId: string;
  readonly limits: ChannelLimits;
  readonly #o: SlackChannelOptions;
  readonly #clock: Clock;
  #bolt: Bolt | undefined;
  #client: webApi.WebClient | undefined;
  #app: App | undefined;
  #me: SlackIdentity | undefined;
  #sink: InboundSink | undefined;
  #life: AbortController | undefined;
  #connecting: Promise<void> | undefined;
  #socket: DurableSocketReceiver | undefined;
  #health: ChannelHealth = { state: "stopped", detail: "not started" };
  readonly #httpReceiver: GatewayHttpReceiver | undefined;
  readonly #intake: SlackIntake;
  readonly #sender: SlackSender;

  constructor(options: SlackChannelOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.accountId = options.accountId;
    this.limits = { maxMessageChars: options.maxMessageChars, formatting: "slack-mrkdwn" };
    const threads = new BotThreads(() => this.#clock.now());
    const directory = new SlackDirectory({
      client: () => this.#client,
      clock: this.#clock,
      logger: options.logger,
    });
    this.#intake = new SlackIntake({
      accountId: options.accountId,
      botToken: options.botToken,
      workspaceDir: options.workspaceDir,
      mediaMaxBytes: options.mediaMaxBytes,
      downloadTimeoutMs: options.downloadTimeoutMs ?? 30_000,
      mentionPatterns: options.mentionPatterns.map((p) => new RegExp(p, "i")),
      commands: new Set(options.commands.map((c) => c.command.toLowerCase())),
      slashCommand: options.slashCommand,
      threads,
      directory,
      clock: this.#clock,
      logger: options.logger,
      sink: () => this.#sink,
      me: () => this.#me,
      life: () => this.#life?.signal,
    });
    this.#sender = new SlackSender({
      ...options,
      threads,
      clock: this.#clock,
      client: () => this.#client,
      me: () => this.#me,
    });
    if (options.mode === "http") {
      if (!options.http || !options.server)
        throw new Error(
          `slack account ${options.accountId}: HTTP mode needs a signing secret and the gateway server`,
        );
      this.#httpReceiver = new GatewayHttpReceiver({
        signingSecret: options.http.signingSecret,
        path: options.http.path,
        server: options.server,
        logger: options.logger,
        verify: () => this.#bolt?.verifySlackRequest,
        now: () => this.#clock.now(),
      });
    }
  }

  /** The bot's identity in its workspace, once started. */
  get me(): SlackIdentity | undefined {
    return this.#me;
  }

  /**
   * Connects: auth.test, then Bolt on its receiver (Socket Mode connects; HTTP mode starts
   * answering its route). A rejected token throws: a configuration problem the gateway reports
   * as it exits. A network failure is retried in the background with backoff.
   */
  async start(sink: InboundSink): Promise<void> {
    const o = this.#o;
    this.#sink = sink;
    // Before the client exists, so no turn previews before earlier attempts' previews are known.
    await this.#sender.previews.restore();
    const { App, webApi, verifySlackRequest } = await import("@slack/bolt");
    this.#bolt = { App, webApi, verifySlackRequest };
    this.#client = new webApi.WebClient(o.botToken, this.#clientOptions());
    this.#life = new AbortController();
    this.#health = { state: "connecting" };
    try {
      await this.#connect();
    } catch (err) {
      const fatal = this.#configProblem(err);
      if (fatal) throw fatal;
      o.logger.error(
        { err: toSlackFailure(err).description },
        "cannot reach Slack; retrying in the background",
      );
      this.#health = {
        state: "connecting",
        detail: `cannot reach Slack: ${toSlackFailure(err).description}`,
      };
      this.#connecting = this.#connectLater(this.#life.signal);
    }
  }

  async #connect(): Promise<void> {
    const o = this.#o;
    const bolt = this.#bolt as Bolt;
    const auth = await (this.#client as webApi.WebClient).auth.test();
    if (!auth.user_id || !auth.bot_id)
      throw new Error("auth.test did not name the bot (is botToken a bot token?)");
    this.#me = { userId: auth.user_id, botId: auth.bot_id };
    this.#sender.previews.removeOrphansLater();
    const socket = this.#httpReceiver
      ? undefined
      : new DurableSocketReceiver({
          appToken: o.appToken ?? "",
          apiUrl: o.apiUrl,
          slackLogger: slackLogger(o.logger),
          logger: o.logger,
          ...(o.clientPingTimeoutMs !== undefined ? { clientPingTimeoutMs: o.clientPingTimeoutMs } : {}),
          onReconnected: () => o.onReconnected?.(),
        });
    this.#socket = socket;
    const receiver = socket ?? (this.#httpReceiver as GatewayHttpReceiver);
    const app = new bolt.App({
      token: o.botToken,
      botId: auth.bot_id,
      botUserId: auth.user_id,
      receiver,
      ignoreSelf: false, // the intake ignores the bot's own messages, with a debug line
      logger: slackLogger(o.logger),
      clientOptions: this.#clientOptions(),
    });
    const onMessage = async (args: { event: unknown; context: Record<string, unknown> }) =>
      this.#intake.event(args.event as SlackMessageEvent, args.context);
    app.event("message", onMessage);
    app.event("app_mention", onMessage);
    app.command(o.slashCommand, async ({ command, ack }) =>
      this.#intake.command(command as SlashCommandBody, (r) => ack(r)),
    );
    app.error(async (err) => {
      o.logger.error({ err }, "Slack listener failed");
    });
    await app.start();
    this.#app = app;
    this.#health = { state: "connected" };
    o.logger.info(
      { team: auth.team, bot: auth.user, mode: o.mode },
      o.mode === "socket" ? "slack socket mode connected" : `slack events API at ${o.http?.path}`,
    );
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
        const fatal = this.#configProblem(err);
        if (fatal) {
          this.#o.logger.error({ err: fatal.message }, `${fatal.message}; this app stays offline`);
          this.#health = { state: "stopped", detail: fatal.message };
          return;
        }
        this.#o.logger.warn({ err: toSlackFailure(err).description, attempt }, "still cannot reach Slack");
      }
    }
  }

  /**
   * The Web API client's options, fresh for each client (Slack's clients write into theirs): no
   * retries of their own (the outbox retries), and a 429 thrown at once so its method is paused.
   */
  #clientOptions() {
    return {
      slackApiUrl: this.#o.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logger: slackLogger(this.#o.logger),
    };
  }

  /** A start-up failure retrying cannot fix (a rejected token), naming the setting to check. */
  #configProblem(err: unknown): Error | undefined {
    const f = toSlackFailure(err);
    if (f.kind !== "auth" && f.kind !== "missing_scope") return undefined;
    const key = this.accountId === "default" ? "channels.slack" : `channels.slack.accounts.${this.accountId}`;
    const which = this.#me ? `${key}.appToken (Socket Mode)` : `${key}.botToken`;
    return new Error(
      `slack account ${this.accountId}: Slack refused the token (${f.description}); check ${which}`,
      {
        cause: err,
      },
    );
  }

  /** Connected once Bolt started; connecting while Socket Mode reconnects or Slack is unreachable. */
  health(): ChannelHealth {
    if (this.#health.state === "connected" && this.#socket?.reconnecting)
      return { state: "connecting", detail: "Socket Mode reconnecting" };
    return this.#health;
  }

  async stop(): Promise<void> {
    this.#sink = undefined;
    if (this.#health.state !== "stopped") this.#health = { state: "stopped", detail: "stopped" };
    this.#sender.forgetPreviews();
    if (this.#life) {
      this.#life.abort();
      await this.#connecting;
      this.#life = undefined;
    }
    const app = this.#app;
    this.#app = undefined;
    await app?.stop().catch((err: unknown) => this.#o.logger.debug({ err }, "slack app stop failed"));
    // A stopped channel sends nothing: send, typing and edit fail with "not started".
    this.#client = undefined;
  }

  // ------------------------------------------------------------------ outbound (slack-sender.ts)

  prepare(markdown: string): string[] {
    return this.#sender.prepare(markdown);
  }

  send(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt> {
    return this.#sender.send(message, signal);
  }

  findSent(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt | undefined> {
    return this.#sender.findSent(message, signal);
  }

  typing(target: Target): Promise<void> {
    return this.#sender.typing(target);
  }

  typingDone(target: Target): Promise<void> {
    return this.#sender.typingDone(target);
  }

  edit(target: ChatTarget, platformMessageId: string, text: string): Promise<void> {
    return this.#sender.edit(target, platformMessageId, text);
  }

  streamDelta(target: LiveTarget, delta: string): void {
    this.#sender.previews.delta(target, delta);
  }

  streamReset(target: LiveTarget, discardedChars: number): void {
    this.#sender.previews.reset(target, discardedChars);
  }

  streamDiscard(target: LiveTarget): void {
    this.#sender.previews
      .discard(target)
      .catch((err: unknown) => this.#o.logger.debug({ err }, "could not discard a preview"));
  }

  /** The session's helpers at work: one line each in the preview of its next turn. */
  streamHelpers(target: LiveTarget, progress: HelperProgress): void {
    this.#sender.previews.status(target, helperLines(progress.helpers));
  }
}

/** Bolt's and the Slack SDK's logger, onto ours: their chatty info lines become debug. */
export function slackLogger(log: Logger): SlackLogger {
  let level = "info" as LogLevel;
  const text = (msg: unknown[]) => msg.map((m) => (typeof m === "string" ? m : String(m))).join(" ");
  return {
    debug: (...msg: unknown[]) => log.debug(text(msg)),
    info: (...msg: unknown[]) => log.debug(text(msg)),
    warn: (...msg: unknown[]) => log.warn(text(msg)),
    error: (...msg: unknown[]) => log.error(text(msg)),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
