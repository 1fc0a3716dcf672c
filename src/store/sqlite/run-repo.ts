/**
 * Run records in SQLite: one row per committed turn, written by commitTurn, its attempts as
 * JSON. A run's calls are not kept on it: commitTurn writes them as usage rows (see
 * SqliteUsageRepo), and a run read back has `calls: []`.
 */
import type { Database, Statement } from "better-sqlite3";
import type { AttemptRecord, RunOutcome, RunRecord, RunRepo, RunTrigger } from "../repos/run-repo.js";
import { guard } from "./errors.js";

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
  /** AttemptRecord[] as JSON; `[]` for runs from before schema 6. */
  attempts: string;
}

const RUN_OUTCOMES: readonly RunOutcome[] = ["answered", "failed", "aborted", "timeout", "yielded"];

/**
 * RunRepo over one better-sqlite3 connection; `recent` is newest `startedAt` first. Runs read
 * back have `calls: []` (see the file header).
 */
export class SqliteRunRepo implements RunRepo {
  readonly #path: string;
  readonly #insert: Statement<[RunRow & { committed_at: number }]>;
  readonly #exists: Statement<[string], { one: number }>;
  readonly #byId: Statement<[string], RunRow>;
  readonly #recent: Statement<[number], RunRow>;
  readonly #recentOf: Statement<[string, number], RunRow>;
  readonly #countByOutcome: Statement<[], { outcome: RunOutcome; n: number }>;

  constructor(db: Database, path: string) {
    this.#path = path;
    this.#insert = db.prepare(
      `INSERT INTO runs (run_id, session_key, run_trigger, channel, provider, model, started_at, duration_ms,
         outcome, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tool_calls, model_calls,
         error_kind, error, attempts, committed_at)
       VALUES (@run_id, @session_key, @run_trigger, @channel, @provider, @model, @started_at, @duration_ms,
         @outcome, @input_tokens, @output_tokens, @cache_read_tokens, @cache_write_tokens, @tool_calls,
         @model_calls, @error_kind, @error, @attempts, @committed_at)`,
    );
    this.#exists = db.prepare("SELECT 1 AS one FROM runs WHERE run_id = ?");
    this.#byId = db.prepare("SELECT * FROM runs WHERE run_id = ?");
    this.#recent = db.prepare("SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?");
    this.#recentOf = db.prepare(
      "SELECT * FROM runs WHERE session_key = ? ORDER BY started_at DESC, rowid DESC LIMIT ?",
    );
    this.#countByOutcome = db.prepare("SELECT outcome, COUNT(*) AS n FROM runs GROUP BY outcome");
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    return guard(this.#path, () => {
      const row = this.#byId.get(runId);
      return row ? toRunRecord(row) : undefined;
    });
  }

  async recent(limit: number): Promise<RunRecord[]> {
    return guard(this.#path, () => this.#recent.all(Math.max(0, limit)).map(toRunRecord));
  }

  async recentOf(sessionKey: string, limit: number): Promise<RunRecord[]> {
    return guard(this.#path, () => this.#recentOf.all(sessionKey, Math.max(0, limit)).map(toRunRecord));
  }

  async countByOutcome(): Promise<Record<RunOutcome, number>> {
    return guard(this.#path, () => {
      const counts = Object.fromEntries(RUN_OUTCOMES.map((o) => [o, 0])) as Record<RunOutcome, number>;
      for (const { outcome, n } of this.#countByOutcome.all()) counts[outcome] = n;
      return counts;
    });
  }

  /** For commitTurn, inside its transaction: was a run with this id committed already? */
  existsInTransaction(runId: string): boolean {
    return this.#exists.get(runId) !== undefined;
  }

  /** For commitTurn, inside its transaction. */
  insertInTransaction(run: RunRecord, now: number): void {
    this.#insert.run({
      run_id: run.runId,
      session_key: run.sessionKey,
      run_trigger: run.trigger,
      channel: run.channel,
      provider: run.provider,
      model: run.model,
      started_at: run.startedAt,
      duration_ms: run.durationMs,
      outcome: run.outcome,
      input_tokens: run.usage.inputTokens,
      output_tokens: run.usage.outputTokens,
      cache_read_tokens: run.usage.cacheReadTokens,
      cache_write_tokens: run.usage.cacheWriteTokens,
      tool_calls: run.toolCalls,
      model_calls: run.modelCalls,
      error_kind: run.errorKind,
      error: run.error,
      attempts: JSON.stringify(run.attempts),
      committed_at: now,
    });
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
