/**
 * Statements prepared once per database and reused by their SQL text: for repositories whose
 * queries are many or built from parts (the cron ledger's updates), so none is prepared again
 * on a hot path such as the scheduler's per-job claims.
 */
import type { Database, Statement } from "better-sqlite3";

/** `sql(source)`: the statement for `source`, prepared on first use. */
export type StatementCache = <P extends unknown[] | object = unknown[], R = unknown>(
  source: string,
) => Statement<P, R>;

export function statementCache(db: Database): StatementCache {
  const prepared = new Map<string, Statement>();
  return <P extends unknown[] | object = unknown[], R = unknown>(source: string) => {
    let statement = prepared.get(source);
    if (!statement) {
      statement = db.prepare(source);
      prepared.set(source, statement);
    }
    return statement as unknown as Statement<P, R>;
  };
}
