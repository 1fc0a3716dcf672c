/**
 * What the admin API reads and steers: the gateway's live parts, handed over by the composition
 * root. Narrow views of each, so the API can be built in a test from a store and a few fakes.
 */
import type { LaneQueue } from "../gateway/lanes/lane-queue.js";
import type { LaneQueueEvent } from "../gateway/lanes/types.js";
import type { GatewayEvents } from "../gateway/events.js";
import type { ChannelDirectory } from "../gateway/channel-directory.js";
import type { Store } from "../store/types.js";
import type { AuthProfileState } from "../store/repos/auth-profile-repo.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { LogTail } from "./log-tail.js";

/** The gateway's parts the admin API uses (see the file header). */
export interface AdminSources {
  agentId: string;
  store: Store;
  lanes: Pick<LaneQueue, "stats" | "sessions" | "session" | "abortRunning">;
  /** This node's model-call slots. */
  pool: { readonly inUse: number; readonly maxConcurrent: number; readonly reservedForHuman: number };
  gateway: { readonly ready: boolean; readonly startedAt: number };
  channels: Pick<ChannelDirectory, "list" | "health">;
  clock: Clock;
  model: string;
  provider: string;
  simulated: boolean;
  /** The failover chain's references, first choice first. */
  chain: string[];
  authProfiles: { all(): AuthProfileState[]; sync(): Promise<void> };
  usage?: {
    today(): { day: string; spendUsd: number; tokens: number };
    readonly limits: {
      dailySpendUsd?: number | undefined;
      dailySpendHardUsd?: number | undefined;
      sessionDailyTokens?: number | undefined;
    };
  };
  heartbeat?: () => Promise<{ state: string; everyMs: number; nextBeatAt?: number; reason?: string }>;
  /** Starts what is due now (a job run now, a wake an answer queued) without waiting for the next tick. */
  kickScheduler?: () => unknown;
  /** `/stop` of a session's helpers and the like: the capabilities' phrases for what they stopped. */
  stopMore?: (sessionKey: string) => Promise<string[]>;
  /** DM policy and allowlist of each configured channel account. */
  policies: Array<{ channel: string; accountId: string; dmPolicy: string; allowFrom: string[] }>;
  /** Recent log lines (absent: the logger has no tail, e.g. in tests). */
  logTail?: LogTail;
  /** Gateway and lane events, for the live stream. */
  events: Pick<GatewayEvents, "on">;
  onLaneEvent: (listener: (e: LaneQueueEvent) => void) => () => void;
  logger: Logger;
}
