/**
 * Run records in PostgreSQL: one row per committed turn, written by commitTurn, its attempts as
 * JSON text. A run's calls are not kept on it: commitTurn writes them as usage rows (see
 * PgUsageRepo), and a run read back has `calls: []`.
 */
import type { AttemptRecord, RunOutcome, RunRecord, RunRepo, RunTrigger } from "../repos/run-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";

interface RunRow {
  run_id: string;
  session_key: string;
  run_trigger: RunTrigger;
  channel: string | null;
  provider: string;
  model: string;
  started_at: number;
  duration_ms: number;
  outcome: RunOutcome;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  tool_calls: number;
  model_calls: number;
  error_kind: string | null;
  error: string | null;
  /** AttemptRecord[] as JSON. */
  attempts: string;
}

const RUN_OUTCOMES: readonly RunOutcome[] = ["answered", "failed", "aborted", "timeout", "yielded"];

/**
 * RunRepo over a PgDb; `recent` is newest `startedAt` first (then the later commit, then the
 * larger id: PostgreSQL has no insertion order). Runs read back have `calls: []`.
 */
export class PgRunRepo implements RunRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const row = await this.#db.row<RunRow>("SELECT * FROM runs WHERE run_id = $1", [runId]);
    return row ? toRunRecord(row) : undefined;
  }

  async recent(limit: number): Promise<RunRecord[]> {
    const rows = await this.#db.rows<RunRow>(
      `SELECT * FROM runs ORDER BY started_at DESC, committed_at DESC, run_id COLLATE "C" DESC LIMIT $1`,
      [Math.max(0, limit)],
    );
    return rows.map(toRunRecord);
  }

  async recentOf(sessionKey: string, limit: number): Promise<RunRecord[]> {
    const rows = await this.#db.rows<RunRow>(
      `SELECT * FROM runs WHERE session_key = $1
         ORDER BY started_at DESC, committed_at DESC, run_id COLLATE "C" DESC LIMIT $2`,
      [sessionKey, Math.max(0, limit)],
    );
    return rows.map(toRunRecord);
  }

  async countByOutcome(): Promise<Record<RunOutcome, number>> {
    const counts = Object.fromEntries(RUN_OUTCOMES.map((o) => [o, 0])) as Record<RunOutcome, number>;
    const rows = await this.#db.rows<{ outcome: RunOutcome; n: number }>(
      "SELECT outcome, COUNT(*) AS n FROM runs GROUP BY outcome",
    );
    for (const { outcome, n } of rows) counts[outcome] = n;
    return counts;
  }

  /** For commitTurn, inside its transaction: the run's row, its attempts as JSON. */
  async insertIn(tx: PgRunner, run: RunRecord, now: number): Promise<void> {
    await tx.exec(
      `INSERT INTO runs (run_id, session_key, run_trigger, channel, provider, model, started_at, duration_ms,
         outcome, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tool_calls, model_calls,
         error_kind, error, attempts, committed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
      [
        run.runId,
        run.sessionKey,
        run.trigger,
        run.channel,
        run.provider,
        run.model,
        run.startedAt,
        run.durationMs,
        run.outcome,
        run.usage.inputTokens,
        run.usage.outputTokens,
        run.usage.cacheReadTokens,
        run.usage.cacheWriteTokens,
        run.toolCalls,
        run.modelCalls,
        run.errorKind,
        run.error,
        JSON.stringify(run.attempts),
        now,
      ],
    );
  }
}

function toRunRecord(row: RunRow): RunRecord {
  return {
    runId: row.run_id,
    sessionKey: row.session_key,
    trigger: row.run_trigger,
    channel: row.channel,
    provider: row.provider,
    model: row.model,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    outcome: row.outcome,
    usage: {
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      cacheReadTokens: row.cache_read_tokens,
      cacheWriteTokens: row.cache_write_tokens,
    },
    toolCalls: row.tool_calls,
    modelCalls: row.model_calls,
    errorKind: row.error_kind,
    error: row.error,
    attempts: JSON.parse(row.attempts) as AttemptRecord[],
    // Not kept on the run: they are the usage rows (see the file header).
    calls: [],
  };
}
