/**
 * How the commands that read or change the database directly (`sessions`, `auth`, `usage`)
 * open it, whether or not a gateway runs on it: SQLite in WAL mode lets one process write while
 * others read, and a writer waits out another's write lock (the store's busy timeout).
 */
import { join } from "node:path";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { StoreError } from "../store/store-error.js";
import type { Store } from "../store/types.js";

/** The database of a home folder: `<home>/switchyard.db`. */
export function databasePath(home: string): string {
  return join(home, "switchyard.db");
}

/**
 * Opens an existing database read-only, so nothing done with it can write; a database an older
 * version left at an older schema is opened read-write once, which upgrades it (as the gateway
 * would).
 */
export function openForReading(path: string): Store {
  try {
    return openSqliteStore({ path, readonly: true });
  } catch (err) {
    if (err instanceof StoreError && err.code === "read_only") return openSqliteStore({ path });
    throw err;
  }
}
