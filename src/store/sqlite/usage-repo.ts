/**
 * Token usage in SQLite: running totals per UTC day, provider and model, and one row per model
 * call (`usage_calls`), both added to by commitTurn from each run record. The per-call rows are
 * what `switchyard usage`, `auth status` and the spend caps read, always over a time range.
 */
import type { Database, Statement } from "better-sqlite3";
import type { TokenUsage } from "../../harness/providers/types.js";
import type { RunRecord, RunTrigger } from "../repos/run-repo.js";
import type {
  ProfileUsage,
  UsageDay,
  UsageGrouping,
  UsageOrigin,
  UsageRepo,
  UsageSummaryRow,
} from "../repos/usage-repo.js";
import { guard } from "./errors.js";

interface TokenColumns {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

interface UsageRow extends TokenColumns {
  day: string;
  provider: string;
  model: string;
  runs: number;
}

interface CallRow extends TokenColumns {
  at: number;
  day: string;
  run_id: string;
  session_key: string;
  origin: UsageOrigin;
  provider: string;
  model: string;
  profile_id: string;
  cost_usd: number;
}

interface SummaryRow extends TokenColumns {
  key: string;
  calls: number;
  cost_usd: number;
}

/** Who a run's calls were for, by what started it: a person, or background work. */
const ORIGIN_OF_TRIGGER = {
  user: "human",
  cron: "cron",
  heartbeat: "heartbeat",
  wake: "wake",
  subagent: "subagent",
  recovery: "recovery",
  assignment: "assignment",
} as const satisfies Record<RunTrigger, UsageOrigin>;

/** The group key of each grouping, as an SQL expression over usage_calls. */
const GROUP_KEY_SQL = {
  day: "day",
  session: "session_key",
  model: "provider || '/' || model",
  origin: "origin",
  profile: "provider || ':' || profile_id",
} as const satisfies Record<UsageGrouping, string>;

/** The built-in simulator's provider name: its calls are listed but count against no cap. */
const SIMULATOR = "simulator";

const TOKENS_SQL = "input_tokens + output_tokens + cache_read_tokens + cache_write_tokens";

/** The UTC calendar day (YYYY-MM-DD) of an epoch-ms time. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/**
 * UsageRepo over one better-sqlite3 connection; `byDay` is newest day first, then provider,
 * model. Every "since" query reads the calls from usage_calls_at (or usage_calls_session) on.
 */
export class SqliteUsageRepo implements UsageRepo {
  readonly #path: string;
  readonly #add: Statement<[Omit<UsageRow, "runs">]>;
  readonly #addCall: Statement<[CallRow]>;
  readonly #byDay: Statement<[number], UsageRow>;
  readonly #summarize: Record<UsageGrouping, Statement<[number], SummaryRow>>;
  readonly #totals: Statement<[number], { calls: number; tokens: number; cost_usd: number }>;
  readonly #sessionTokens: Statement<[string, number], { tokens: number }>;
  readonly #billed: Statement<[string, UsageOrigin], { tokens: number; cost_usd: number }>;
  readonly #byProfile: Statement<
    [number],
    { provider: string; profile_id: string; calls: number; tokens: number; cost_usd: number }
  >;

  constructor(db: Database, path: string) {
    this.#path = path;
    this.#add = db.prepare(
      `INSERT INTO usage (day, provider, model, input_tokens, output_tokens, cache_read_tokens,
         cache_write_tokens, runs)
       VALUES (@day, @provider, @model, @input_tokens, @output_tokens, @cache_read_tokens, @cache_write_tokens, 1)
       ON CONFLICT (day, provider, model) DO UPDATE SET
         input_tokens = input_tokens + excluded.input_tokens,
         output_tokens = output_tokens + excluded.output_tokens,
         cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
         cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
         runs = runs + 1`,
    );
    this.#addCall = db.prepare(
      `INSERT INTO usage_calls (at, day, run_id, session_key, origin, provider, model, profile_id,
         input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd)
       VALUES (@at, @day, @run_id, @session_key, @origin, @provider, @model, @profile_id,
         @input_tokens, @output_tokens, @cache_read_tokens, @cache_write_tokens, @cost_usd)`,
    );
    this.#byDay = db.prepare("SELECT * FROM usage ORDER BY day DESC, provider, model LIMIT ?");
    const summarize = (by: UsageGrouping) =>
      db.prepare<[number], SummaryRow>(
        `SELECT ${GROUP_KEY_SQL[by]} AS key, COUNT(*) AS calls,
           SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
           SUM(cache_read_tokens) AS cache_read_tokens, SUM(cache_write_tokens) AS cache_write_tokens,
           SUM(cost_usd) AS cost_usd
         FROM usage_calls WHERE at >= ?
         GROUP BY key
         ORDER BY SUM(cost_usd) DESC, SUM(${TOKENS_SQL}) DESC, key`,
      );
    this.#summarize = {
      day: summarize("day"),
      session: summarize("session"),
      model: summarize("model"),
      origin: summarize("origin"),
      profile: summarize("profile"),
    };
    // The caps' totals leave the simulator's calls out: they cost nothing and use no real tokens.
    this.#totals = db.prepare(
      `SELECT COUNT(*) AS calls, COALESCE(SUM(${TOKENS_SQL}), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost_usd
       FROM usage_calls WHERE at >= ? AND provider <> '${SIMULATOR}'`,
    );
    this.#sessionTokens = db.prepare(
      `SELECT COALESCE(SUM(${TOKENS_SQL}), 0) AS tokens FROM usage_calls
       WHERE session_key = ? AND at >= ? AND provider <> '${SIMULATOR}'`,
    );
    this.#billed = db.prepare(
      `SELECT COALESCE(SUM(${TOKENS_SQL}), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost_usd
       FROM usage_calls WHERE session_key = ? AND origin = ?`,
    );
    this.#byProfile = db.prepare(
      `SELECT provider, profile_id, COUNT(*) AS calls, SUM(${TOKENS_SQL}) AS tokens, SUM(cost_usd) AS cost_usd
       FROM usage_calls WHERE at >= ?
       GROUP BY provider, profile_id ORDER BY provider, profile_id`,
    );
  }

  async byDay(limit: number): Promise<UsageDay[]> {
    return guard(this.#path, () =>
      this.#byDay.all(Math.max(0, limit)).map((row) => ({
        day: row.day,
        provider: row.provider,
        model: row.model,
        usage: toTokenUsage(row),
        runs: row.runs,
      })),
    );
  }

  async summarize(query: { since: number; by: UsageGrouping }): Promise<UsageSummaryRow[]> {
    return guard(this.#path, () =>
      this.#summarize[query.by].all(query.since).map((row) => ({
        key: row.key,
        calls: row.calls,
        usage: toTokenUsage(row),
        costUsd: row.cost_usd,
      })),
    );
  }

  async totalsSince(since: number): Promise<{ calls: number; tokens: number; costUsd: number }> {
    return guard(this.#path, () => {
      const row = this.#totals.get(since);
      return { calls: row?.calls ?? 0, tokens: row?.tokens ?? 0, costUsd: row?.cost_usd ?? 0 };
    });
  }

  async sessionTokensSince(sessionKey: string, since: number): Promise<number> {
    return guard(this.#path, () => this.#sessionTokens.get(sessionKey, since)?.tokens ?? 0);
  }

  async billedTotals(sessionKey: string, origin: UsageOrigin): Promise<{ tokens: number; costUsd: number }> {
    return guard(this.#path, () => {
      const row = this.#billed.get(sessionKey, origin);
      return { tokens: row?.tokens ?? 0, costUsd: row?.cost_usd ?? 0 };
    });
  }

  async byProfileSince(since: number): Promise<ProfileUsage[]> {
    return guard(this.#path, () =>
      this.#byProfile.all(since).map((row) => ({
        provider: row.provider,
        profileId: row.profile_id,
        calls: row.calls,
        tokens: row.tokens,
        costUsd: row.cost_usd,
      })),
    );
  }

  /**
   * For commitTurn, inside its transaction: adds one run to its day's totals (by its start) and
   * writes one call row per `run.calls` entry (by the call's time), its origin from the trigger.
   */
  addRunInTransaction(run: RunRecord): void {
    this.#add.run({
      day: utcDay(run.startedAt),
      provider: run.provider,
      model: run.model,
      ...toTokenColumns(run.usage),
    });
    const origin = ORIGIN_OF_TRIGGER[run.trigger];
    for (const call of run.calls) {
      this.#addCall.run({
        at: call.at,
        day: utcDay(call.at),
        run_id: run.runId,
        session_key: run.billedSessionKey ?? run.sessionKey,
        origin,
        provider: call.provider,
        model: call.model,
        profile_id: call.profileId,
        ...toTokenColumns(call.usage),
        cost_usd: call.costUsd,
      });
    }
  }
}

function toTokenColumns(usage: TokenUsage): TokenColumns {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
  };
}

function toTokenUsage(row: TokenColumns): TokenUsage {
  return {
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheWriteTokens: row.cache_write_tokens,
  };
}
