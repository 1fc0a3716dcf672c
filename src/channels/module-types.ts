/**
 * The channel module: what one platform folder exports so the gateway can configure, build,
 * check and secure it without knowing its name, and what its factory is given.
 */
import type { z } from "zod";
import type { RouteHandler } from "../http/server.js";
import type { PairingRepo } from "../store/repos/pairing-repo.js";
import type { PreviewRepo } from "../store/repos/preview-repo.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { AccessPolicy, AnswerSource, Channel, ChannelName } from "./types.js";

/** Where a channel registers HTTP routes on the gateway's server (webhooks, the HTTP API). */
export interface RouteRegistrar {
  route(method: "GET" | "POST", path: string, handler: RouteHandler): void;
  readonly maxBodyBytes: number;
}

/** What a channel reports about its platform connection (counted in the gateway's metrics). */
export interface ChannelSignals {
  /** The platform connection was lost and is back (switchyard_channel_reconnects_total). */
  reconnected(channel: ChannelName, accountId: string): void;
}

/** What a channel module's factory gets besides its settings. */
export interface ChannelFactoryContext {
  signals: ChannelSignals;
  agentId: string;
  server: RouteRegistrar;
  workspaceDir: string;
  /** The chat commands, for platforms that register them (Telegram's setMyCommands). */
  commands: ReadonlyArray<{ command: string; description: string }>;
  /** For channels that answer in the same exchange (HTTP, console). */
  answers: AnswerSource;
  /** For access policies with pairing. */
  pairing: PairingRepo;
  /**
   * The newest message the gateway took from each chat of a channel account since `since`: a
   * platform that does not redeliver what arrived while the gateway was away (Discord) reads on
   * from there after a restart. Absent: no catching up.
   */
  lastTaken?(
    channel: ChannelName,
    accountId: string,
    since: number,
  ): Promise<Array<{ chatId: string; threadId?: string; platformMessageId: string; receivedAt: number }>>;
  /**
   * Where streaming previews are recorded (one write per preview), so a turn redone after a
   * crash takes its preview message for the answer. Absent: previews live in memory only.
   */
  previews?: PreviewRepo;
  /**
   * Ms this process still holds resource lease `name` by its own clock (0: not held). An exclusive
   * connection asks before each poll and keeps no poll open longer. Absent: no limit.
   */
  leaseRemainingMs?(name: string): number;
  clock: Clock;
  logger: Logger;
}

/** A module's channels (one per bot account) and the access policy they share. */
export interface ChannelSet {
  channels: Channel[];
  access: AccessPolicy;
}

/** One `doctor` line about a channel. */
export interface ChannelCheck {
  verdict: "ok" | "warn" | "fail";
  /** What was checked, e.g. "telegram:default". */
  what: string;
  detail: string;
}

/**
 * One platform: a folder exporting this, plus one line in channels/registry.ts. The settings
 * schema is `channels.<name>` (built from the shared access fragment), the factory returns the
 * channels *and* their access policy (there is no channel without one), the probe is doctor's,
 * and the platform SDK is imported lazily by the adapter, when it starts. A module keeps its
 * implementation out of start-up by importing it inside `create` (which may be async): a
 * channel that is not configured costs nothing to load.
 */
export interface ChannelModule<S extends z.ZodType = z.ZodType> {
  readonly settings: S;
  /** Whether the parsed settings turn the channel on (absent settings: off, unless defaulted). */
  enabled(settings: z.output<S>): boolean;
  create(settings: NonNullable<z.output<S>>, ctx: ChannelFactoryContext): ChannelSet | Promise<ChannelSet>;
  /**
   * The account ids the settings configure, without creating anything (the CLI checks delivery
   * targets with it). Absent: one account, "default". Throws ConfigError like `create`.
   */
  accounts?(settings: NonNullable<z.output<S>>): string[];
  /**
   * Checks for `doctor` (tokens, reachability), each bounded by `timeoutMs`; `baseUrl` is where
   * the gateway's HTTP server listens. A configuration problem found on the way is thrown as
   * ConfigError (doctor reports each issue as a failed check); nothing else is thrown.
   */
  probe?(
    settings: NonNullable<z.output<S>>,
    ctx: { timeoutMs: number; baseUrl: string },
  ): Promise<ChannelCheck[]>;
}
