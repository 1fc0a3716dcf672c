/**
 * Opens the SQLite Store: creates the folder, opens the file with the pragmas the gateway
 * relies on (WAL, synchronous NORMAL, foreign keys, busy timeout) and migrates the schema.
 */
import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { Logger } from "../../util/logger.js";
import { redactSecrets } from "../../util/redact.js";
import type { Store } from "../types.js";
import { guard } from "./errors.js";
import { migrate } from "./migrations.js";
import { SqliteStore } from "./sqlite-store.js";
import { SAFETY_AUTOCHECKPOINT_PAGES, WalCheckpointer } from "./wal-checkpointer.js";

/** Where and how to open the database. */
export interface SqliteStoreOptions {
  /** Database file; its folder is created if missing. `":memory:"` for a private in-memory database. */
  path: string;
  /** How long a statement waits for another connection's lock before failing `locked`. Default 5000. */
  busyTimeoutMs?: number;
  /** Open without writing: no folder creation, no migration; writes fail `read_only`. Default false. */
  readonly?: boolean;
  /**
   * Checkpoint the WAL on a worker thread instead of inside commits (see WalCheckpointer), for
   * a long-running writer such as the gateway. Ignored for `:memory:` and read-only. Default false.
   */
  checkpointInWorker?: boolean;
  /** Where the checkpoint worker reports trouble. */
  logger?: Logger;
  /**
   * Applied to every error text before it is stored (inbox and run errors, outbox send errors,
   * failure notices): a provider error that echoes an API key must not put it on disk. Default:
   * the known secret shapes (`redactSecrets`); the gateway passes its configured secrets too.
   */
  redact?: (text: string) => string;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5_000;
const MEMORY = ":memory:";

/**
 * Opens (creating if needed) and migrates a SQLite store. Throws StoreError — `schema_too_new`,
 * `corrupt`, `locked`, `read_only`, `disk_full` or `io` — when the database cannot be used,
 * and TypeError for invalid options.
 */
export function openSqliteStore(options: SqliteStoreOptions): Store {
  const { path, busyTimeoutMs, readonly } = resolveOptions(options);
  const memory = path === MEMORY;
  return guard(path, () => {
    if (!memory && !readonly) {
      mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
      // Owner-only before SQLite opens it: its -wal and -shm files take the database's mode.
      closeSync(openSync(path, "a", 0o600));
      try {
        chmodSync(path, 0o600);
      } catch {
        // Not ours to change (another owner): SQLite still opens it if it may.
      }
    }
    const db = new BetterSqlite3(path, { readonly, fileMustExist: readonly, timeout: busyTimeoutMs });
    try {
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      // WAL is a property of the file; a read-only connection uses whatever mode it has.
      if (!memory && !readonly) db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("foreign_keys = ON");
      const version = migrate(db, path);
      let checkpointer: WalCheckpointer | undefined;
      if (options.checkpointInWorker && !memory && !readonly) {
        db.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
        checkpointer = new WalCheckpointer({ path, ...(options.logger ? { logger: options.logger } : {}) });
      }
      return new SqliteStore(db, path, version, checkpointer, options.redact ?? redactSecrets);
    } catch (err) {
      db.close();
      throw err;
    }
  });
}

function resolveOptions(
  options: SqliteStoreOptions,
): Required<Pick<SqliteStoreOptions, "path" | "busyTimeoutMs" | "readonly">> {
  const { path, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS, readonly = false } = options;
  if (typeof path !== "string" || path.trim() === "") {
    throw new TypeError(`store path must be a file path or ":memory:", got ${JSON.stringify(path)}`);
  }
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new TypeError(
      `store busyTimeoutMs must be a whole number of milliseconds >= 0, got ${busyTimeoutMs}`,
    );
  }
  if (readonly && path === MEMORY) {
    throw new TypeError(
      `store readonly cannot be true for path ":memory:" (an in-memory database starts empty)`,
    );
  }
  return { path, busyTimeoutMs, readonly };
}
