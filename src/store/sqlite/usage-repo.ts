/**
 * Token usage in SQLite: running totals per UTC day, provider and model, added to by
 * commitTurn from each run record.
 */
import type { Database, Statement } from "better-sqlite3";
import type { RunRecord } from "../repos/run-repo.js";
import type { UsageDay, UsageRepo } from "../repos/usage-repo.js";
import { guard } from "./errors.js";

interface UsageRow {
  day: string;
  provider: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  runs: number;
}

/** The UTC calendar day (YYYY-MM-DD) of an epoch-ms time. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** UsageRepo over one better-sqlite3 connection; `byDay` is newest day first, then provider, model. */
export class SqliteUsageRepo implements UsageRepo {
  readonly #path: string;
  readonly #add: Statement<[Omit<UsageRow, "runs">]>;
  readonly #byDay: Statement<[number], UsageRow>;

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
    this.#byDay = db.prepare("SELECT * FROM usage ORDER BY day DESC, provider, model LIMIT ?");
  }

  async byDay(limit: number): Promise<UsageDay[]> {
    return guard(this.#path, () =>
      this.#byDay.all(Math.max(0, limit)).map((row) => ({
        day: row.day,
        provider: row.provider,
        model: row.model,
        usage: {
          inputTokens: row.input_tokens,
          outputTokens: row.output_tokens,
          cacheReadTokens: row.cache_read_tokens,
          cacheWriteTokens: row.cache_write_tokens,
        },
        runs: row.runs,
      })),
    );
  }

  /** For commitTurn, inside its transaction: adds one run to its day's totals. */
  addRunInTransaction(run: RunRecord): void {
    this.#add.run({
      day: utcDay(run.startedAt),
      provider: run.provider,
      model: run.model,
      input_tokens: run.usage.inputTokens,
      output_tokens: run.usage.outputTokens,
      cache_read_tokens: run.usage.cacheReadTokens,
      cache_write_tokens: run.usage.cacheWriteTokens,
    });
  }
}
