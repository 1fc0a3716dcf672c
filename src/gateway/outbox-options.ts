/** The outbox dispatcher's options, their defaults, and their checks. */
import type { Channel, ChatTarget } from "../channels/types.js";
import type { ChannelAccount } from "../store/repos/outbox-repo.js";
import type { Store } from "../store/types.js";
import { type Clock, MAX_TIMER_MS } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { GatewayMetrics } from "./metrics.js";

/** Cap of the backoff ceiling between send attempts. */
export const MAX_BACKOFF_MS = 60_000;

export interface OutboxDispatcherOptions {
  store: Store;
  /** The channel that sends to `target`; undefined if it is not configured (the row goes dead). */
  channelFor(target: ChatTarget): Channel | undefined;
  /** Time source and every timer: pass timer, send timeouts, retries, stop's limit. */
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
  /** Replies older than this are expired, not sent (default 3_600_000: 1 h). */
  maxAgeMs?: number;
  /** Send attempts before a row is dead; every failed attempt counts (default 5). */
  maxAttempts?: number;
  /** Most sends in flight at once, across chats (default 32). */
  concurrency?: number;
  /**
   * Backoff ceiling of the first retry; doubles per attempt up to 60 s; the wait is drawn
   * uniformly below it (full jitter) unless the platform says when (default 1_000). Also paces
   * re-attempts of an outcome the store failed to record.
   */
  retryBaseMs?: number;
  /** Uniform [0, 1) source of the backoff jitter (default Math.random). */
  random?: () => number;
  /**
   * Limit on one `channel.send` (default 30_000). Then its signal is aborted and the send counts
   * as a transient failure, retried with backoff, whether or not the channel honours the signal.
   */
  sendTimeoutMs?: number;
  /** How long stop() waits for aborted sends to settle and be recorded (default 5_000). */
  stopTimeoutMs?: number;
  /**
   * This process's owner id and lease TTL: claimed rows carry them, and only rows of the
   * channel accounts this process hosts (`channelFor` finds them) are claimed. Default a local
   * owner (one process).
   */
  ownership?: { owner: string; ttlMs: number; hosted(): readonly ChannelAccount[] };
}

export type Settings = Required<Omit<OutboxDispatcherOptions, "ownership">> &
  Pick<OutboxDispatcherOptions, "ownership">;

/** The options with their defaults applied; throws RangeError for a bad value. */
export function outboxSettings(options: OutboxDispatcherOptions): Settings {
  return {
    ...options,
    maxAgeMs: checkInteger("maxAgeMs", options.maxAgeMs ?? 3_600_000, 1),
    maxAttempts: checkInteger("maxAttempts", options.maxAttempts ?? 5, 1),
    concurrency: checkInteger("concurrency", options.concurrency ?? 32, 1),
    retryBaseMs: checkInteger("retryBaseMs", options.retryBaseMs ?? 1_000, 1, MAX_BACKOFF_MS),
    sendTimeoutMs: checkInteger("sendTimeoutMs", options.sendTimeoutMs ?? 30_000, 1, MAX_TIMER_MS),
    stopTimeoutMs: checkInteger("stopTimeoutMs", options.stopTimeoutMs ?? 5_000, 0, MAX_TIMER_MS),
    random: options.random ?? Math.random,
  };
}

/** @throws RangeError naming the option, the value and the range expected. */
function checkInteger(
  field: keyof OutboxDispatcherOptions,
  value: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    const expected = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new RangeError(
      `OutboxDispatcherOptions.${field}: got ${String(value)}, expected an integer ${expected}`,
    );
  }
  return value;
}
