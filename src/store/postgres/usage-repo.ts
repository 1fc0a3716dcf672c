/**
 * Token usage in PostgreSQL: running totals per UTC day, provider and model, and one row per
 * model call (`usage_calls`), both added to by commitTurn from each run record. The per-call
 * rows are what `switchyard usage`, `auth status` and the spend caps read, always over a time
 * range or one session. Keys order bytewise (COLLATE "C"), as in SQLite.
 */
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
import type { PgDb, PgRunner } from "./pg-db.js";

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

/** summarize's statement for one grouping: largest cost, then most tokens, then key. */
function summarizeSql(by: UsageGrouping): string {
  const key = GROUP_KEY_SQL[by];
  return `SELECT ${key} AS key, COUNT(*) AS calls,
      SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
      SUM(cache_read_tokens) AS cache_read_tokens, SUM(cache_write_tokens) AS cache_write_tokens,
      SUM(cost_usd) AS cost_usd
    FROM usage_calls WHERE at >= $1
    GROUP BY ${key}
    ORDER BY SUM(cost_usd) DESC, SUM(${TOKENS_SQL}) DESC, (${key}) COLLATE "C"`;
}

/** The UTC calendar day (YYYY-MM-DD) of an epoch-ms time. */
function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** UsageRepo over a PgDb; `byDay` is newest day first, then provider, model. */
export class PgUsageRepo implements UsageRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  async byDay(limit: number): Promise<UsageDay[]> {
    const rows = await this.#db.rows<UsageRow>(
      `SELECT * FROM usage ORDER BY day DESC, provider COLLATE "C", model COLLATE "C" LIMIT $1`,
      [Math.max(0, limit)],
    );
    return rows.map((row) => ({
      day: row.day,
      provider: row.provider,
      model: row.model,
      usage: toTokenUsage(row),
      runs: row.runs,
    }));
  }

  async summarize(query: { since: number; by: UsageGrouping }): Promise<UsageSummaryRow[]> {
    const rows = await this.#db.rows<SummaryRow>(summarizeSql(query.by), [query.since]);
    return rows.map((row) => ({
      key: row.key,
      calls: row.calls,
      usage: toTokenUsage(row),
      costUsd: row.cost_usd,
    }));
  }

  async totalsSince(since: number): Promise<{ calls: number; tokens: number; costUsd: number }> {
    // The caps' totals leave the simulator's calls out: they cost nothing and use no real tokens.
    const row = await this.#db.row<{ calls: number; tokens: number; cost_usd: number }>(
      `SELECT COUNT(*) AS calls, COALESCE(SUM(${TOKENS_SQL}), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost_usd
       FROM usage_calls WHERE at >= $1 AND provider <> '${SIMULATOR}'`,
      [since],
    );
    return { calls: row?.calls ?? 0, tokens: row?.tokens ?? 0, costUsd: row?.cost_usd ?? 0 };
  }

  async sessionTokensSince(sessionKey: string, since: number): Promise<number> {
    const row = await this.#db.row<{ tokens: number }>(
      `SELECT COALESCE(SUM(${TOKENS_SQL}), 0) AS tokens FROM usage_calls
       WHERE session_key = $1 AND at >= $2 AND provider <> '${SIMULATOR}'`,
      [sessionKey, since],
    );
    return row?.tokens ?? 0;
  }

  async billedTotals(sessionKey: string, origin: UsageOrigin): Promise<{ tokens: number; costUsd: number }> {
    const row = await this.#db.row<{ tokens: number; cost_usd: number }>(
      `SELECT COALESCE(SUM(${TOKENS_SQL}), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost_usd
       FROM usage_calls WHERE session_key = $1 AND origin = $2`,
      [sessionKey, origin],
    );
    return { tokens: row?.tokens ?? 0, costUsd: row?.cost_usd ?? 0 };
  }

  async byProfileSince(since: number): Promise<ProfileUsage[]> {
    const rows = await this.#db.rows<{
      provider: string;
      profile_id: string;
      calls: number;
      tokens: number;
      cost_usd: number;
    }>(
      `SELECT provider, profile_id, COUNT(*) AS calls, SUM(${TOKENS_SQL}) AS tokens, SUM(cost_usd) AS cost_usd
       FROM usage_calls WHERE at >= $1
       GROUP BY provider, profile_id ORDER BY provider COLLATE "C", profile_id COLLATE "C"`,
      [since],
    );
    return rows.map((row) => ({
      provider: row.provider,
      profileId: row.profile_id,
      calls: row.calls,
      tokens: row.tokens,
      costUsd: row.cost_usd,
    }));
  }

  /**
   * For commitTurn, inside its transaction: adds one run to its day's totals (by its start) and
   * writes one call row per `run.calls` entry (by the call's time), its origin from the trigger.
   */
  async addRunIn(tx: PgRunner, run: RunRecord): Promise<void> {
    await tx.exec(
      `INSERT INTO usage AS u (day, provider, model, input_tokens, output_tokens, cache_read_tokens,
         cache_write_tokens, runs)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 1)
       ON CONFLICT (day, provider, model) DO UPDATE SET
         input_tokens = u.input_tokens + EXCLUDED.input_tokens,
         output_tokens = u.output_tokens + EXCLUDED.output_tokens,
         cache_read_tokens = u.cache_read_tokens + EXCLUDED.cache_read_tokens,
         cache_write_tokens = u.cache_write_tokens + EXCLUDED.cache_write_tokens,
         runs = u.runs + 1`,
      [utcDay(run.startedAt), run.provider, run.model, ...tokenValues(run.usage)],
    );
    const origin = ORIGIN_OF_TRIGGER[run.trigger];
    for (const call of run.calls) {
      await tx.exec(
        `INSERT INTO usage_calls (at, day, run_id, session_key, origin, provider, model, profile_id,
           input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [
          call.at,
          utcDay(call.at),
          run.runId,
          run.billedSessionKey ?? run.sessionKey,
          origin,
          call.provider,
          call.model,
          call.profileId,
          ...tokenValues(call.usage),
          call.costUsd,
        ],
      );
    }
  }
}

/** input, output, cache read, cache write: the order of the token columns. */
function tokenValues(usage: TokenUsage): [number, number, number, number] {
  return [usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheWriteTokens];
}

function toTokenUsage(row: TokenColumns): TokenUsage {
  return {
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheWriteTokens: row.cache_write_tokens,
  };
}
