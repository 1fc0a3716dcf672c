/**
 * `switchyard db copy --from sqlite --to postgres`: moves a home's state (sessions, transcripts,
 * the inbox and outbox, runs and usage, jobs and their ledger, wakes, assignments, learnings,
 * pairing, auth profiles, sub-agents) from its SQLite file into an empty PostgreSQL database
 * (`store.url`), in one PostgreSQL transaction: all of it or nothing. The SQLite file is first
 * brought to this binary's schema (as a gateway start would), then read without writing; ids
 * are kept and the identity sequences moved past them, so a gateway on the copy goes on where
 * the home left off. Stop the gateway first: rows it writes meanwhile are not copied.
 */
import { existsSync } from "node:fs";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { StoreError } from "../store/store-error.js";

/**
 * Tables that are the schema's own bookkeeping or the target's, or leased rows of running
 * processes (model-call permits and demands): never copied.
 */
const SKIPPED = new Set(["schema_migrations", "cluster_values", "model_permits", "permit_demands"]);
/** Tables whose rows the migration seeds (a counter row): replaced by the source's. */
const SEEDED = new Set(["cron_version"]);

/** What a copy moved. */
export interface CopyReport {
  /** Rows copied, by table (tables with none left out). */
  tables: Record<string, number>;
  rows: number;
}

/** PostgreSQL column facts the copy needs. */
interface PgColumn {
  table_name: string;
  column_name: string;
  data_type: string;
  is_identity: string;
  identity_generation: string | null;
}

/** The tables of the PostgreSQL schema in creation order (foreign keys point backwards). */
function tableOrder(statements: readonly string[]): string[] {
  const names: string[] = [];
  for (const s of statements) {
    const m = /^\s*CREATE TABLE (?:IF NOT EXISTS )?(\w+)/i.exec(s);
    if (m?.[1]) names.push(m[1]);
  }
  return names;
}

/** Copies the SQLite database at `sqlitePath` into the PostgreSQL database at `url`. */
export async function copySqliteToPostgres(sqlitePath: string, url: string): Promise<CopyReport> {
  if (!existsSync(sqlitePath))
    throw new StoreError("io", `no SQLite database at ${sqlitePath}: nothing to copy (check --home)`);
  // Up to this binary's schema first, so both sides have the same tables and columns.
  await openSqliteStore({ path: sqlitePath }).close();
  const { openPgStore } = await import("../store/postgres/open-pg-store.js");
  const { PG_MIGRATIONS } = await import("../store/postgres/pg-migrations.js");
  const target = await openPgStore({ url, poolSize: 1 });
  const BetterSqlite3 = (await import("better-sqlite3")).default;
  const source = new BetterSqlite3(sqlitePath, { readonly: true, fileMustExist: true });
  try {
    const order = tableOrder(PG_MIGRATIONS.flatMap((m) => m.statements)).filter((t) => !SKIPPED.has(t));
    const columns = await target.db.rows<PgColumn>(
      `SELECT table_name, column_name, data_type, is_identity, identity_generation
       FROM information_schema.columns WHERE table_schema = current_schema()`,
    );
    const sqliteTables = new Set(
      source
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => (r as { name: string }).name),
    );
    return await target.db.tx(async (tx) => {
      const report: CopyReport = { tables: {}, rows: 0 };
      for (const table of order.filter((t) => !SEEDED.has(t))) {
        const row = await tx.row<{ n: number }>(`SELECT count(*) AS n FROM ${table}`);
        if ((row?.n ?? 0) > 0)
          throw new StoreError(
            "conflict",
            `the PostgreSQL store at ${target.db.label} is not empty (${row?.n} rows in ${table}): copy into a new, empty database`,
          );
      }
      for (const table of order) {
        if (!sqliteTables.has(table)) continue;
        const sqliteColumns = new Set(
          source
            .prepare(`PRAGMA table_info(${table})`)
            .all()
            .map((c) => (c as { name: string }).name),
        );
        // The target's columns the source has too; an ALWAYS identity is the target's own.
        const cols = columns.filter(
          (c) =>
            c.table_name === table && sqliteColumns.has(c.column_name) && c.identity_generation !== "ALWAYS",
        );
        if (cols.length === 0) continue;
        if (SEEDED.has(table)) await tx.run(`DELETE FROM ${table}`);
        const names = cols.map((c) => c.column_name);
        const placeholders = names.map((_, i) => `$${i + 1}`).join(", ");
        const insert = `INSERT INTO ${table} (${names.join(", ")}) VALUES (${placeholders})`;
        let copied = 0;
        // rowid order where there is one: the order rows were written in (ALWAYS identities follow it).
        const hasRowid = !/WITHOUT ROWID/i.test(
          String(
            (source.prepare("SELECT sql FROM sqlite_master WHERE name = ?").get(table) as { sql?: string })
              ?.sql ?? "",
          ),
        );
        const rows = source
          .prepare(`SELECT ${names.join(", ")} FROM ${table}${hasRowid ? " ORDER BY rowid" : ""}`)
          .iterate() as IterableIterator<Record<string, unknown>>;
        for (const r of rows) {
          await tx.run(
            insert,
            cols.map((c) => {
              const v = r[c.column_name];
              if (c.data_type === "boolean" && typeof v === "number") return v !== 0;
              if (typeof v === "bigint") return Number(v);
              return v ?? null;
            }),
          );
          copied++;
        }
        // Identity columns given explicit ids: the next id comes after the copied ones.
        for (const c of cols.filter((x) => x.is_identity === "YES"))
          await tx.run(
            `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${c.column_name}) FROM ${table}), 0) + 1, false)`,
            [table, c.column_name],
          );
        if (copied > 0) report.tables[table] = copied;
        report.rows += copied;
      }
      return report;
    });
  } finally {
    source.close();
    await target.close();
  }
}
