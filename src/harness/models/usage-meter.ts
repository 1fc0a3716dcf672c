/**
 * Today's tokens and spend, in memory, for the caps in `limits:`: every model call's usage is
 * priced and added as it streams, so a cap acts before the run commits. Days are UTC days, as
 * in the usage table. Seeded from the store at start and re-read periodically (another gateway
 * process on the same database spends from the same budget); the rows themselves are written
 * by commitTurn with the run.
 */
import type { UsageOrigin, UsageRepo } from "../../store/repos/usage-repo.js";
import { type Clock, systemClock, type TimerHandle } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { TokenUsage } from "../providers/types.js";
import { type PriceTable, totalTokens } from "./prices.js";

/** The caps (each off when undefined). */
export interface UsageLimits {
  maxTokensPerRun?: number | undefined;
  sessionDailyTokens?: number | undefined;
  dailySpendUsd?: number | undefined;
  dailySpendHardUsd?: number | undefined;
}

/** Options of {@link UsageMeter}. */
export interface UsageMeterOptions {
  prices: PriceTable;
  limits: UsageLimits;
  repo?: UsageRepo;
  clock?: Clock;
  /** Period of the read-back of the day's totals; default 30_000 ms. */
  syncMs?: number;
  logger?: Logger;
}

/** What a call is for, to check against the caps. */
export interface UsageContext {
  sessionKey: string;
  origin: UsageOrigin;
  /** Tokens the run has used so far. */
  runTokens: number;
}

/** A cap that stops a call: which one, and the sentence a person reads. */
export interface CapRefusal {
  cap: "maxTokensPerRun" | "sessionDailyTokens" | "dailySpendUsd" | "dailySpendHardUsd";
  reason: string;
}

/** Owns today's usage totals and the decision whether a cap stops a call. */
export class UsageMeter {
  readonly #o: UsageMeterOptions & { clock: Clock; syncMs: number };
  #day = "";
  #spendUsd = 0;
  #tokens = 0;
  /** Tokens per session today (loaded from the store on a session's first check of the day). */
  readonly #sessions = new Map<string, number>();
  #timer: TimerHandle | undefined;
  #closed = false;

  constructor(options: UsageMeterOptions) {
    this.#o = { clock: systemClock, syncMs: 30_000, ...options };
  }

  get limits(): UsageLimits {
    return this.#o.limits;
  }

  /** Reads today's totals, then re-reads them periodically. */
  async load(): Promise<void> {
    await this.#sync();
    this.#schedule();
  }

  /** Today's spend and tokens (UTC day). */
  today(): { day: string; spendUsd: number; tokens: number } {
    this.#rollover();
    return { day: this.#day, spendUsd: this.#spendUsd, tokens: this.#tokens };
  }

  /** Prices one call's usage and adds it to today's totals; returns its cost in USD. */
  record(sessionKey: string, ref: string, usage: TokenUsage): number {
    this.#rollover();
    const cost = this.#o.prices.costUsd(ref, usage);
    const tokens = totalTokens(usage);
    this.#spendUsd += cost;
    this.#tokens += tokens;
    if (this.#sessions.has(sessionKey))
      this.#sessions.set(sessionKey, (this.#sessions.get(sessionKey) ?? 0) + tokens);
    return cost;
  }

  /**
   * The cap that stops this call, or undefined. Background work pauses at `dailySpendUsd`;
   * human chats go on until `dailySpendHardUsd`.
   */
  async check(ctx: UsageContext): Promise<CapRefusal | undefined> {
    const l = this.#o.limits;
    this.#rollover();
    if (l.maxTokensPerRun !== undefined && ctx.runTokens >= l.maxTokensPerRun) {
      return {
        cap: "maxTokensPerRun",
        reason: `this turn used ${fmtTokens(ctx.runTokens)} tokens, the limit per turn (limits.maxTokensPerRun is ${fmtTokens(l.maxTokensPerRun)})`,
      };
    }
    if (l.dailySpendHardUsd !== undefined && this.#spendUsd >= l.dailySpendHardUsd) {
      return {
        cap: "dailySpendHardUsd",
        reason: `today's model spend is $${this.#spendUsd.toFixed(2)}, at the hard daily cap (limits.dailySpendHardUsd is $${l.dailySpendHardUsd.toFixed(2)}); it resets at 00:00 UTC`,
      };
    }
    if (ctx.origin !== "human" && l.dailySpendUsd !== undefined && this.#spendUsd >= l.dailySpendUsd) {
      return {
        cap: "dailySpendUsd",
        reason: `background work is paused: today's model spend is $${this.#spendUsd.toFixed(2)}, at the daily cap (limits.dailySpendUsd is $${l.dailySpendUsd.toFixed(2)})`,
      };
    }
    if (l.sessionDailyTokens !== undefined) {
      const used = await this.#sessionTokens(ctx.sessionKey);
      if (used >= l.sessionDailyTokens) {
        return {
          cap: "sessionDailyTokens",
          reason: `this conversation used ${fmtTokens(used)} tokens today, its daily limit (limits.sessionDailyTokens is ${fmtTokens(l.sessionDailyTokens)}); it resets at 00:00 UTC`,
        };
      }
    }
    return undefined;
  }

  /** True when background work is paused by the daily spend cap (checked before starting it). */
  backgroundPaused(): boolean {
    this.#rollover();
    const l = this.#o.limits;
    return (
      (l.dailySpendUsd !== undefined && this.#spendUsd >= l.dailySpendUsd) ||
      (l.dailySpendHardUsd !== undefined && this.#spendUsd >= l.dailySpendHardUsd)
    );
  }

  /** Stops the periodic read-back. */
  close(): void {
    this.#closed = true;
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
  }

  async #sessionTokens(sessionKey: string): Promise<number> {
    const known = this.#sessions.get(sessionKey);
    if (known !== undefined) return known;
    const stored = this.#o.repo
      ? await this.#o.repo.sessionTokensSince(sessionKey, dayStart(this.#o.clock.now()))
      : 0;
    // Tokens recorded while the read was in flight are not lost: take the larger.
    const now = Math.max(stored, this.#sessions.get(sessionKey) ?? 0);
    if (this.#sessions.size >= 10_000) this.#sessions.clear();
    this.#sessions.set(sessionKey, now);
    return now;
  }

  #rollover(): void {
    const day = utcDayOf(this.#o.clock.now());
    if (day === this.#day) return;
    this.#day = day;
    this.#spendUsd = 0;
    this.#tokens = 0;
    this.#sessions.clear();
  }

  async #sync(): Promise<void> {
    this.#rollover();
    if (!this.#o.repo) return;
    const day = this.#day;
    const t = await this.#o.repo.totalsSince(dayStart(this.#o.clock.now()));
    if (day !== this.#day) return;
    // Committed rows lag the calls in flight: never go below what this process counted.
    this.#spendUsd = Math.max(this.#spendUsd, t.costUsd);
    this.#tokens = Math.max(this.#tokens, t.tokens);
  }

  #schedule(): void {
    if (this.#closed || !this.#o.repo) return;
    this.#timer = this.#o.clock.setTimeout(
      () => {
        this.#sync()
          .catch((err: unknown) => this.#o.logger?.warn({ err }, "usage totals not re-read from the store"))
          .finally(() => this.#schedule());
      },
      this.#o.syncMs,
      { unref: true },
    );
  }
}

/** Epoch ms of 00:00 UTC of the day of `now`. */
export function dayStart(now: number): number {
  return Math.floor(now / 86_400_000) * 86_400_000;
}

function utcDayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

function fmtTokens(n: number): string {
  return n.toLocaleString("en-US");
}
