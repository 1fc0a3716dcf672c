/**
 * The PostgreSQL schema's versions, applied once each, in order, under one transaction-scoped
 * advisory lock: several nodes starting together migrate once, the others wait and find it
 * done. Version 1 is the whole schema of SQLite's version 17 (no PostgreSQL database existed
 * before it); each later change is a new version here, like SQLite's. A database at a version
 * newer than this binary knows is refused, naming both.
 */
import { StoreError } from "../store-error.js";
import type { PoolClient } from "pg";
import { type PgDb, pgStoreError } from "./pg-db.js";
import { assignmentSchema } from "./schema/assignments.js";
import { coreSchema } from "./schema/core.js";
import { permitSchema } from "./schema/permits.js";
import { queueSchema } from "./schema/queue.js";
import { schedulingSchema } from "./schema/scheduling.js";

/** One schema version: its statements run in one transaction. */
export interface PgMigration {
  version: number;
  name: string;
  statements: readonly string[];
}

/** Every version, oldest first. */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "the schema of SQLite version 17: inbox, outbox, sessions, transcript, runs, usage, leases, pairing, auth profiles, cron, wakes, assignments, learnings, previews, sub-agents",
    statements: [...coreSchema, ...queueSchema, ...schedulingSchema, ...assignmentSchema],
  },
  {
    version: 2,
    name: "cluster_values: facts the nodes agree on, set once (the workspace's id)",
    statements: [
      `CREATE TABLE cluster_values (
         key TEXT PRIMARY KEY,
         value TEXT NOT NULL,
         set_at BIGINT NOT NULL
       )`,
    ],
  },
  {
    version: 3,
    name: "model_permits, permit_demands: the cluster's model-call cap, leased rows (SQLite v19)",
    statements: permitSchema,
  },
];

/** The newest version this binary knows. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.at(-1)?.version ?? 0;

/** An arbitrary constant: the advisory lock every migrating node takes. */
const MIGRATION_LOCK = 7_302_118_551;

/** The database's version (0: never migrated); no lock, no change. */
export async function pgSchemaVersion(db: PgDb): Promise<number> {
  const table = await db.row<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!table?.t) return 0;
  const row = await db.row<{ v: number | null }>("SELECT max(version) AS v FROM schema_migrations");
  return row?.v ?? 0;
}

/**
 * Brings the database to PG_SCHEMA_VERSION; resolves the version it is at. Throws StoreError
 * `schema_too_new` when the database is newer than this binary.
 *
 * The advisory lock is a session lock taken on one connection BEFORE the migration's
 * transaction begins: taken inside it, the transaction's snapshot would predate another node's
 * migration it waited for, and it would create the tables again.
 */
export async function migratePg(db: PgDb, now = Date.now()): Promise<number> {
  const client = await db.connect();
  let broken = false;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await client.query("BEGIN");
      const version = await migrateLocked(db.label, client, now);
      await client.query("COMMIT");
      return version;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {
        broken = true; // the connection is gone, and its session lock with it
      });
    }
  } catch (err) {
    throw pgStoreError(db.label, err);
  } finally {
    client.release(broken);
  }
}

/** The migration itself, in the caller's transaction, under the lock. */
async function migrateLocked(label: string, client: PoolClient, now: number): Promise<number> {
  await client.query(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`,
  );
  const at =
    ((await client.query("SELECT max(version) AS v FROM schema_migrations")).rows[0] as { v: number | null })
      .v ?? 0;
  if (at > PG_SCHEMA_VERSION)
    throw new StoreError(
      "schema_too_new",
      `the PostgreSQL store ${label} is at schema version ${at}, newer than this switchyard knows (${PG_SCHEMA_VERSION}): upgrade switchyard, or use a copy of the database`,
    );
  for (const m of PG_MIGRATIONS) {
    if (m.version <= at) continue;
    for (const statement of m.statements) await client.query(statement);
    await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
      m.version,
      m.name,
      now,
    ]);
  }
  return PG_SCHEMA_VERSION;
}
