/**
 * The usage contract: token totals per day, provider and model, and one row per model call
 * (profile, model, session, origin, tokens, cost) for `switchyard usage`, `auth status` and the
 * spend caps. commitTurn writes both from the run record, in its own transaction: recording
 * usage costs no extra store transaction.
 */
import type { TokenUsage } from "../../harness/providers/types.js";

/** Token usage of one UTC day (`YYYY-MM-DD`), provider and model, added up over its runs. */
export interface UsageDay {
  day: string;
  provider: string;
  model: string;
  usage: TokenUsage;
  runs: number;
}

/** Who the work was for: a person, or background work (see RunTrigger). */
export type UsageOrigin = "human" | "heartbeat" | "cron" | "wake" | "subagent" | "recovery" | "assignment";

/** How `summarize` groups calls. */
export type UsageGrouping = "day" | "session" | "model" | "origin" | "profile";

/** One group of calls. */
export interface UsageSummaryRow {
  /** The group: `YYYY-MM-DD`, a session key, `provider/model`, an origin, or `provider:profile`. */
  key: string;
  calls: number;
  usage: TokenUsage;
  costUsd: number;
}

/** Calls and tokens of one auth profile. */
export interface ProfileUsage {
  provider: string;
  profileId: string;
  calls: number;
  /** Input + output + cache read + cache write. */
  tokens: number;
  costUsd: number;
}

/** Token usage (commitTurn adds each run to it). */
export interface UsageRepo {
  /** Totals per day, provider and model, newest day first. */
  byDay(limit: number): Promise<UsageDay[]>;
  /** Calls at or after `since` (epoch ms), grouped; largest cost first, then most tokens, then key. */
  summarize(query: { since: number; by: UsageGrouping }): Promise<UsageSummaryRow[]>;
  /**
   * All calls at or after `since`: cost and tokens (input + output + cache read + write). The
   * caps read it, so the built-in simulator's calls (provider `simulator`) are left out.
   */
  totalsSince(since: number): Promise<{ calls: number; tokens: number; costUsd: number }>;
  /** Tokens of one session's calls at or after `since`, the simulator's left out (see totalsSince). */
  sessionTokensSince(sessionKey: string, since: number): Promise<number>;
  /** Per profile, calls at or after `since`, by provider then profile id. */
  byProfileSince(since: number): Promise<ProfileUsage[]>;
  /**
   * Tokens (input + output + cache read + write) and cost of every call billed to `sessionKey`
   * with `origin`, ever, the simulator's included: an assignment's helpers (origin `subagent`),
   * which its checkpoint counts as it counts its own runs.
   */
  billedTotals(sessionKey: string, origin: UsageOrigin): Promise<{ tokens: number; costUsd: number }>;
}
