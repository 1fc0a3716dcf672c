/**
 * The long-polling loop of one Telegram account. A batch of updates is handled before the next
 * getUpdates, and the offset moves past an update only once it was handled (committed, ignored
 * or given up), so a crash re-delivers it. Chats in a batch are handled side by side, each in
 * order, so a slow download in one chat does not hold up another chat's messages.
 * getUpdates failures: 401 stops polling (the token was revoked), 409 waits long (another
 * process polls this bot, or a webhook is set), 429 waits `retry_after`, others back off.
 */
import type { Update } from "grammy/types";
import { backoffDelayMs } from "../../util/backoff.js";
import { type Clock, systemClock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { TelegramFailure } from "./errors.js";

export interface TelegramPollerOptions {
  /** `telegram account "default" (@name_bot)`, for log lines a person must act on. */
  label: string;
  getUpdates(params: { offset: number; timeout: number }, signal: AbortSignal): Promise<Update[]>;
  /**
   * Handles one update; never throws. Resolves true once the update is done with (it may be
   * confirmed), false when `signal` aborted first (it must stay unconfirmed).
   */
  handle(update: Update, signal: AbortSignal): Promise<boolean>;
  failure(err: unknown): TelegramFailure;
  /** Long-poll hold time, in seconds. */
  pollTimeoutSeconds: number;
  /**
   * Backoff after a failed getUpdates: full jitter under a ceiling that starts here and doubles
   * per failure up to 30 s (default 500 ms). Telegram's `retry_after` takes precedence.
   */
  retryBaseMs?: number;
  /**
   * Wait after a 409 conflict (default 30 s; a poller under a lease, `pollWindowMs`, 2 s: the
   * other poller is one whose lease lapsed, and it stops at its own next check).
   */
  conflictBackoffMs?: number;
  /**
   * Asked before each getUpdates: how long this process may keep a poll open (its lease on the
   * bot, ms). 0: it may not poll now (the lease lapsed — it stalled past its TTL — and its
   * renewal has not yet said whether it still holds it); the loop waits and asks again. Else
   * the long poll's hold time is cut to end a second before the lease would: a poll never
   * outlives the lease, so it never overlaps the next holder's. Absent: no limit.
   */
  pollWindowMs?: () => number;
  /** Chats of one batch handled at the same time (default 4). */
  parallelChats?: number;
  /** Waits between polls (default `systemClock`). */
  clock?: Clock;
  /** Uniform [0, 1) source of the backoff jitter (default Math.random). */
  random?: () => number;
  logger: Logger;
}

/** How often a poller that may not poll now asks again. */
const MAY_POLL_CHECK_MS = 250;

/** Why polling ended. */
export type PollEnd = "stopped" | "unauthorized";

export class TelegramPoller {
  readonly #o: TelegramPollerOptions;
  #offset = 0;

  constructor(options: TelegramPollerOptions) {
    this.#o = options;
  }

  /** The next getUpdates offset: every update below it was handled. */
  get offset(): number {
    return this.#offset;
  }

  /** Polls until `signal` aborts or Telegram rejects the token. Never throws. */
  async run(signal: AbortSignal): Promise<PollEnd> {
    const o = this.#o;
    const retryBaseMs = o.retryBaseMs ?? 500;
    let failures = 0;
    while (!signal.aborted) {
      const windowMs = o.pollWindowMs?.() ?? Number.POSITIVE_INFINITY;
      if (windowMs <= 0) {
        await this.#pause(MAY_POLL_CHECK_MS, signal);
        continue;
      }
      const timeout = Math.max(0, Math.min(o.pollTimeoutSeconds, Math.floor(windowMs / 1000) - 1));
      let updates: Update[];
      try {
        updates = await o.getUpdates({ offset: this.#offset, timeout }, signal);
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        const f = o.failure(err);
        if (f.kind === "unauthorized") {
          o.logger.error(
            { err: f.description },
            `${o.label}: Telegram rejected the bot token (${f.description}); polling stopped. This bot receives nothing until its token is fixed in the config and the gateway is restarted.`,
          );
          return "unauthorized";
        }
        if (f.kind === "conflict") {
          const waitMs = o.conflictBackoffMs ?? (o.pollWindowMs ? 2_000 : 30_000);
          o.logger.error(
            { err: f.description, retryInMs: waitMs },
            `${o.label}: Telegram refused to hand out updates (${f.description}). Another process is polling this bot, or a webhook is set for it; only one may receive updates. Trying again in ${Math.round(waitMs / 1000)} s.`,
          );
          await this.#pause(waitMs, signal);
          continue;
        }
        failures++;
        const waitMs = backoffDelayMs(failures, {
          baseMs: retryBaseMs,
          maxMs: 30_000,
          random: o.random,
          retryAfterMs: f.retryAfterMs,
        });
        o.logger.warn({ err: f.description, retryInMs: waitMs }, "telegram getUpdates failed");
        await this.#pause(waitMs, signal);
        continue;
      }
      await this.#handleBatch(updates, signal);
    }
    return "stopped";
  }

  /** Waits `ms`, or less when `signal` aborts (the loop then sees it and ends). */
  async #pause(ms: number, signal: AbortSignal): Promise<void> {
    await (this.#o.clock ?? systemClock).sleep(ms, signal).catch(() => undefined);
  }

  async #handleBatch(updates: Update[], signal: AbortSignal): Promise<void> {
    const done = new Set<number>();
    const byChat = new Map<string, Update[]>();
    for (const update of updates) {
      const key = chatKeyOf(update);
      const chat = byChat.get(key);
      if (chat) chat.push(update);
      else byChat.set(key, [update]);
    }
    await forEachLimited([...byChat.values()], this.#o.parallelChats ?? 4, async (chatUpdates) => {
      for (const update of chatUpdates) {
        if (!(await this.#o.handle(update, signal))) return;
        done.add(update.update_id);
      }
    });
    // Confirm only the unbroken run of handled updates: anything after a gap is fetched again.
    for (const update of [...updates].sort((a, b) => a.update_id - b.update_id)) {
      if (!done.has(update.update_id)) break;
      this.#offset = Math.max(this.#offset, update.update_id + 1);
    }
  }
}

/** Updates of one chat are handled in order; other kinds each on their own. */
function chatKeyOf(update: Update): string {
  const chat =
    update.message?.chat ??
    update.edited_message?.chat ??
    update.channel_post?.chat ??
    update.edited_channel_post?.chat;
  return chat ? `chat:${chat.id}` : `update:${update.update_id}`;
}

async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
}
