/**
 * The memory index's SQLite database: its schema (files, chunks and an external-content FTS5
 * table kept in step by triggers), how it is opened (owner-only, WAL, rebuilt when damaged or
 * of another schema version: it only caches what the files hold) and the writes of a scan.
 */
import { chmodSync, closeSync, mkdirSync, openSync, rmSync } from "node:fs";
import path from "node:path";
import BetterSqlite3, { type Database } from "better-sqlite3";
import type { TextChunk } from "./markdown-chunks.js";
import { MemoryIndexError } from "./memory-index-error.js";
import type { MemoryWarnings } from "./types.js";

/** Bumped when the schema or the chunking changes: an index of another version is rebuilt. */
const SCHEMA_VERSION = 1;

/** What a scan learned about one file. */
export interface FileUpdate {
  path: string;
  /** null: re-read on the next scan whatever the mtime says. */
  mtimeMs: number | null;
  size: number;
  chunks: TextChunk[];
  /** Left out with a warning: recorded with no chunks, so that it is not read again until it changes. */
  skipped: boolean;
}

/** Deletes the chunks of `removed` and of every update, then writes the updates: one transaction. */
export function applyUpdates(db: Database, updates: readonly FileUpdate[], removed: readonly string[]): void {
  const deleteChunks = db.prepare("DELETE FROM chunks WHERE path = ?");
  const deleteFile = db.prepare("DELETE FROM files WHERE path = ?");
  const insertChunk = db.prepare("INSERT INTO chunks (path, start_line, end_line, text) VALUES (?, ?, ?, ?)");
  const upsertFile = db.prepare(
    `INSERT INTO files (path, mtime_ms, size) VALUES (?, ?, ?)
     ON CONFLICT (path) DO UPDATE SET mtime_ms = excluded.mtime_ms, size = excluded.size`,
  );
  db.transaction(() => {
    for (const rel of removed) {
      deleteChunks.run(rel);
      deleteFile.run(rel);
    }
    for (const u of updates) {
      deleteChunks.run(u.path);
      for (const c of u.chunks) insertChunk.run(u.path, c.startLine, c.endLine, c.text);
      upsertFile.run(u.path, u.mtimeMs, u.size);
    }
  }).immediate();
}

/** An index built for another workspace folder (the config changed) is emptied first. */
export function forgetOtherWorkspace(db: Database, root: string): void {
  const row = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'workspace'").get();
  if (row?.value === root) return;
  db.transaction(() => {
    db.exec("DELETE FROM chunks; DELETE FROM files;");
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('workspace', ?)").run(root);
  }).immediate();
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  -- mtime_ms NULL: re-read on the next scan.
  CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ms REAL, size INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS chunks_path ON chunks (path);
  CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content = 'chunks', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
  );
  CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text);
  END;
  CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
  END;
`;

const DROP = `
  DROP TRIGGER IF EXISTS chunks_ai; DROP TRIGGER IF EXISTS chunks_ad;
  DROP TABLE IF EXISTS chunks_fts; DROP TABLE IF EXISTS chunks;
  DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS meta;
`;

/** Opens the index; a damaged file is deleted and built again (it is only a cache of the files). */
export function openIndexDatabase(
  dbPath: string,
  busyTimeoutMs: number,
  logger: MemoryWarnings | undefined,
): Database {
  try {
    return openOnce(dbPath, busyTimeoutMs);
  } catch (err) {
    if (dbPath === ":memory:" || !isSqliteCode(err, ["SQLITE_CORRUPT", "SQLITE_NOTADB"])) {
      throw new MemoryIndexError("unavailable", `cannot open the memory index ${dbPath}: ${errorText(err)}`, {
        cause: err,
      });
    }
    logger?.warn({ dbPath }, `memory index ${dbPath} is damaged (${errorText(err)}); rebuilding it`);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${dbPath}${suffix}`, { force: true });
    try {
      return openOnce(dbPath, busyTimeoutMs);
    } catch (again) {
      throw new MemoryIndexError(
        "unavailable",
        `cannot open the memory index ${dbPath}: ${errorText(again)}`,
        {
          cause: again,
        },
      );
    }
  }
}

function openOnce(dbPath: string, busyTimeoutMs: number): Database {
  const memory = dbPath === ":memory:";
  if (!memory) {
    mkdirSync(path.dirname(path.resolve(dbPath)), { recursive: true, mode: 0o700 });
    // Owner-only before SQLite opens it: its -wal and -shm files take the database's mode.
    closeSync(openSync(dbPath, "a", 0o600));
    try {
      chmodSync(dbPath, 0o600);
    } catch {
      // Not ours to change (another owner): SQLite still opens it if it may.
    }
  }
  const db = new BetterSqlite3(dbPath, { timeout: busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (!memory) db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.transaction(() => {
      const version = db.pragma("user_version", { simple: true });
      if (version !== SCHEMA_VERSION) db.exec(DROP);
      db.exec(SCHEMA);
      if (version !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function isSqliteCode(err: unknown, codes: readonly string[]): boolean {
  return err instanceof Error && "code" in err && typeof err.code === "string" && codes.includes(err.code);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
