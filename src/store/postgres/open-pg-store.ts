/**
 * Opens the PostgreSQL Store: connects (one line naming the store and the cause when it
 * cannot: a wrong URL, a refused login, an unreachable server), checks the server version
 * (≥ 13), migrates under the advisory lock, and returns the store.
 */
import { redactSecrets } from "../../util/redact.js";
import { StoreError } from "../store-error.js";
import { PgDb, pgStoreError } from "./pg-db.js";
import { migratePg } from "./pg-migrations.js";
import { PgStore } from "./pg-store.js";

/** Where and how to open the database. */
export interface PgStoreOptions {
  /** `postgres://user:pass@host:5432/database` */
  url: string;
  /** Connections in this process's pool (default 10). */
  poolSize?: number;
  /** A schema instead of `public` (tests give each store its own); created when missing. */
  schema?: string;
  /** Applied to every error text before it is stored (default: the known secret shapes). */
  redact?: (text: string) => string;
  /** Open without migrating: a database at another version is opened as it is (the CLI's status). */
  migrate?: boolean;
}

/** The oldest PostgreSQL the store supports. */
export const MIN_SERVER_VERSION = 13;

/**
 * Opens and migrates a PostgreSQL store. Throws StoreError (`unavailable`, `schema_too_new`,
 * `io`) with one line naming the store and the cause.
 */
export async function openPgStore(options: PgStoreOptions): Promise<PgStore> {
  if (!/^postgres(ql)?:\/\//.test(options.url))
    throw new StoreError(
      "unavailable",
      `store.url must be a postgres:// URL (postgres://user:pass@host:5432/database); got "${options.url.replace(/\/\/[^@/]*@/, "//…@")}"`,
    );
  const db = new PgDb({
    url: options.url,
    ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
    ...(options.schema !== undefined ? { schema: options.schema } : {}),
  });
  try {
    const version = await db.row<{ v: number }>("SELECT current_setting('server_version_num')::int AS v");
    const major = Math.floor(Number(version?.v ?? 0) / 10_000);
    if (major < MIN_SERVER_VERSION)
      throw new StoreError(
        "unavailable",
        `the PostgreSQL store at ${db.label} runs server version ${major}; switchyard needs ${MIN_SERVER_VERSION} or newer`,
      );
    if (options.schema !== undefined) await db.run(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
    const schemaVersion = options.migrate === false ? 0 : await migratePg(db);
    return new PgStore(db, schemaVersion, options.redact ?? redactSecrets);
  } catch (err) {
    await db.close().catch(() => {});
    throw pgStoreError(db.label, err);
  }
}
