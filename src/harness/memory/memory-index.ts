/**
 * Full-text search over the agent's memory files: MEMORY.md and every memory/**\/*.md (daily
 * notes included) cut into small chunks of lines, in a SQLite FTS5 table ranked with bm25. The
 * index is derived data in its own database file; the files stay the truth. Before each search
 * it compares every file's (mtime, size) with what it indexed and re-reads only what changed,
 * so notes a person edits by hand are found on the next search.
 */
import type { Dirent } from "node:fs";
import { readFile, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import type { Database } from "better-sqlite3";
import { type Clock, systemClock } from "../../util/clock.js";
import { chunkMarkdown } from "./markdown-chunks.js";
import { ftsExpression, queryTerms } from "./fts-query.js";
import { type FileUpdate, applyUpdates, forgetOtherWorkspace, openIndexDatabase } from "./memory-index-db.js";
import { MemoryIndexError } from "./memory-index-error.js";
import { MEMORY_DIR, MEMORY_FILE, isInsideDir } from "./memory-paths.js";
import { decodeText } from "./text-file.js";
import type { MemoryHit, MemoryRefreshStats, MemorySearchOptions, MemoryWarnings } from "./types.js";

/** The index file's name in the home folder: `<home>/memory-index.db`. */
export const MEMORY_INDEX_FILE = "memory-index.db";
/** Hits a search returns without `limit`. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Largest `limit` a search accepts. */
export const MAX_SEARCH_LIMIT = 100;
/** Files larger than this are left out of the index (with a warning). */
export const MAX_INDEXED_FILE_BYTES = 2 * 1024 * 1024;
/** Files indexed at most; the rest (in walk order) are left out with one warning per scan. */
export const MAX_INDEXED_FILES = 5_000;
/** A file modified this recently may change again within its mtime's resolution: re-read it next time. */
const RACY_WINDOW_MS = 3_000;
/** Changed files read and written per transaction. */
const BATCH_FILES = 32;
/** Names the template's explanation of the folder, not a note: never a search result. */
const NOT_INDEXED = new Set([`${MEMORY_DIR}/README.md`]);

/** Where the index lives and what it indexes. */
export interface MemoryIndexOptions {
  /** The agent workspace whose MEMORY.md and memory/**\/*.md are indexed. */
  workspaceDir: string;
  /**
   * The index database (its folder is created with mode 0700, the file with 0600; WAL), or
   * `":memory:"`. Usually `<home>/memory-index.db` ({@link MEMORY_INDEX_FILE}). A file that is
   * not a usable SQLite database is deleted and rebuilt: it holds nothing the files do not.
   */
  dbPath: string;
  /** Where skipped files (binary, too large, unreadable) and invalid UTF-8 are reported; default nowhere. */
  logger?: MemoryWarnings;
  /** Tells a file modified too recently for its mtime to be trusted; default the system clock. */
  clock?: Clock;
  /** How long a write waits for another process's lock on the index; default 5000 ms. */
  busyTimeoutMs?: number;
}

interface FoundFile {
  abs: string;
  mtimeMs: number;
  size: number;
}

interface HitRow {
  path: string;
  start_line: number;
  end_line: number;
  snippet: string;
  rank: number;
}

/**
 * The memory search index of one workspace. Searches and refreshes of one instance run one at a
 * time, in call order; several processes may share the database file (WAL, busy timeout).
 */
export class MemoryIndex {
  readonly #workspaceDir: string;
  readonly #logger: MemoryWarnings | undefined;
  readonly #clock: Clock;
  /** Opened on first use: a gateway that never searches its memory pays nothing for it. */
  #db: Database | undefined;
  /** When the last freshness scan started (0: never). */
  #scannedAt = 0;
  readonly #dbPath: string;
  readonly #busyTimeoutMs: number;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * Opens (creating or rebuilding) the index database. Throws a TypeError for bad options and
   * MemoryIndexError `unavailable` when the file cannot be opened.
   */
  constructor(options: MemoryIndexOptions) {
    if (typeof options.workspaceDir !== "string" || options.workspaceDir === "") {
      throw new TypeError(
        `MemoryIndexOptions.workspaceDir must be a folder path, got ${JSON.stringify(options.workspaceDir)}`,
      );
    }
    if (typeof options.dbPath !== "string" || options.dbPath.trim() === "") {
      throw new TypeError(
        `MemoryIndexOptions.dbPath must be a file path or ":memory:", got ${JSON.stringify(options.dbPath)}`,
      );
    }
    const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new TypeError(
        `MemoryIndexOptions.busyTimeoutMs must be a whole number of milliseconds >= 0, got ${busyTimeoutMs}`,
      );
    }
    this.#workspaceDir = path.resolve(options.workspaceDir);
    this.#logger = options.logger;
    this.#clock = options.clock ?? systemClock;
    this.#dbPath = options.dbPath;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** The workspace folder indexed, absolute. */
  get workspaceDir(): string {
    return this.#workspaceDir;
  }

  /**
   * Brings the index up to date with the files: new files and files whose mtime or size
   * changed are re-read, deleted ones dropped; for unchanged files this costs one stat each.
   * Never throws for a file it cannot read (it is skipped with a warning).
   */
  refresh(signal?: AbortSignal): Promise<MemoryRefreshStats> {
    return this.#enqueue(() => this.#scan(signal, new Set()));
  }

  /**
   * Re-reads the given workspace-relative files now whatever their mtime says (after a write
   * of ours, which may keep the size and land within the mtime's resolution), then refreshes
   * the rest as {@link refresh} does.
   */
  async update(paths: readonly string[], signal?: AbortSignal): Promise<void> {
    await this.#enqueue(() => this.#scan(signal, new Set(paths)));
  }

  /**
   * The chunks best matching `query`, best first, after a refresh. Each whitespace-separated
   * term is searched for as a quoted phrase (FTS5 syntax in it is plain text); chunks holding
   * every term are returned, or, when none does, chunks holding any. A query without letters or
   * digits matches nothing. Throws a RangeError for a bad `limit`, MemoryIndexError `closed`
   * after close(), and the signal's reason when it aborts.
   */
  async search(query: string, options: MemorySearchOptions = {}): Promise<MemoryHit[]> {
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      throw new RangeError(`search limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}, got ${limit}`);
    }
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const stale = this.#clock.now() - this.#scannedAt >= (options.maxStalenessMs ?? 0);
    if (stale || this.#scannedAt === 0) await this.refresh(options.signal);
    const all = this.#query(ftsExpression(terms, "AND") ?? "", limit);
    if (all.length > 0 || terms.length === 1) return all;
    return this.#query(ftsExpression(terms, "OR") ?? "", limit);
  }

  /** Closes the database; later calls fail with MemoryIndexError `closed`. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db?.close();
  }

  #enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #open(): Database {
    if (this.#closed) throw new MemoryIndexError("closed", "the memory index is closed");
    this.#db ??= openIndexDatabase(this.#dbPath, this.#busyTimeoutMs, this.#logger);
    return this.#db;
  }

  #query(match: string, limit: number): MemoryHit[] {
    const rows = this.#open()
      .prepare<[string, number], HitRow>(
        `SELECT c.path, c.start_line, c.end_line,
                snippet(chunks_fts, 0, '**', '**', '…', 24) AS snippet, bm25(chunks_fts) AS rank
         FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
         WHERE chunks_fts MATCH ? ORDER BY rank, c.path, c.start_line LIMIT ?`,
      )
      .all(match, limit);
    return rows.map((r) => ({
      path: r.path,
      startLine: r.start_line,
      endLine: r.end_line,
      snippet: r.snippet.replace(/\s+/g, " ").trim(),
      score: -r.rank,
    }));
  }

  async #scan(signal: AbortSignal | undefined, force: ReadonlySet<string>): Promise<MemoryRefreshStats> {
    this.#open();
    this.#scannedAt = this.#clock.now();
    signal?.throwIfAborted();
    const root = await realpath(this.#workspaceDir).catch(() => undefined);
    const found = root === undefined ? new Map<string, FoundFile>() : await this.#listFiles(root, signal);
    const db = this.#open();
    if (root !== undefined) forgetOtherWorkspace(db, root);
    const known = new Map(
      db
        .prepare<[], { path: string; mtime_ms: number | null; size: number }>(
          "SELECT path, mtime_ms, size FROM files",
        )
        .all()
        .map((r) => [r.path, r] as const),
    );
    const stats: MemoryRefreshStats = { indexed: 0, removed: 0, unchanged: 0, skipped: 0 };
    const changed: [string, FoundFile][] = [];
    for (const [rel, file] of found) {
      const row = known.get(rel);
      if (!force.has(rel) && row?.mtime_ms === file.mtimeMs && row.size === file.size) stats.unchanged++;
      else changed.push([rel, file]);
    }
    const removed = [...known.keys()].filter((rel) => !found.has(rel));
    stats.removed = removed.length;
    if (removed.length > 0) applyUpdates(this.#open(), [], removed);
    for (let i = 0; i < changed.length; i += BATCH_FILES) {
      signal?.throwIfAborted();
      const batch = changed.slice(i, i + BATCH_FILES);
      const read = await Promise.all(batch.map(([rel, file]) => this.#read(rel, file)));
      const updates: FileUpdate[] = [];
      const gone: string[] = [];
      for (const [j, update] of read.entries()) {
        if (update === "gone") gone.push(batch[j]?.[0] ?? "");
        else {
          updates.push(update);
          if (update.skipped) stats.skipped++;
          else stats.indexed++;
        }
      }
      applyUpdates(this.#open(), updates, gone);
    }
    return stats;
  }

  /** Reads and chunks one file; a file it cannot use is recorded with no chunks (and reported). */
  async #read(rel: string, file: FoundFile): Promise<FileUpdate | "gone"> {
    // Trusting an mtime this fresh could miss a same-size edit within its resolution.
    const trusted = this.#clock.now() - file.mtimeMs >= RACY_WINDOW_MS;
    const update: FileUpdate = {
      path: rel,
      mtimeMs: trusted ? file.mtimeMs : null,
      size: file.size,
      chunks: [],
      skipped: true,
    };
    if (file.size > MAX_INDEXED_FILE_BYTES) {
      this.#warn(rel, `not indexed: larger than ${MAX_INDEXED_FILE_BYTES / (1024 * 1024)} MB`);
      return update;
    }
    let bytes: Buffer;
    try {
      bytes = await readFile(file.abs);
    } catch (err) {
      if (isErrno(err, "ENOENT")) return "gone";
      this.#warn(rel, `not indexed: cannot be read (${errorText(err)})`);
      return update;
    }
    const decoded = decodeText(bytes);
    if (decoded.type === "binary") {
      this.#warn(rel, "not indexed: a binary file, not text");
      return update;
    }
    if (!decoded.validUtf8) this.#warn(rel, "is not valid UTF-8: indexed with replacement characters");
    return { ...update, chunks: chunkMarkdown(decoded.text), skipped: false };
  }

  /** MEMORY.md and the *.md files under memory/ (hidden names and memory/README.md left out). */
  async #listFiles(root: string, signal: AbortSignal | undefined): Promise<Map<string, FoundFile>> {
    const found = new Map<string, FoundFile>();
    const memoryFile = await statInside(root, path.join(root, MEMORY_FILE));
    if (memoryFile) found.set(MEMORY_FILE, memoryFile);
    const dir = await realpath(path.join(root, MEMORY_DIR)).catch(() => undefined);
    if (dir !== undefined && isInsideDir(root, dir)) await this.#walk(root, dir, MEMORY_DIR, found, signal);
    if (found.size > MAX_INDEXED_FILES) {
      this.#warn(
        MEMORY_DIR,
        `holds over ${MAX_INDEXED_FILES} files; only the first ${MAX_INDEXED_FILES} are indexed`,
      );
      return new Map([...found].slice(0, MAX_INDEXED_FILES));
    }
    return found;
  }

  async #walk(
    root: string,
    dir: string,
    rel: string,
    found: Map<string, FoundFile>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    signal?.throwIfAborted();
    if (found.size > MAX_INDEXED_FILES) return;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // gone, or not a folder: nothing to index there
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const files: [string, string][] = [];
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue; // our temp files, editors' swap files, .git
      const childRel = `${rel}/${entry.name}`;
      const abs = path.join(dir, entry.name);
      // Linked folders are not followed (no cycles, no escapes); linked files are, when inside.
      if (entry.isDirectory()) await this.#walk(root, abs, childRel, found, signal);
      else if (/\.md$/i.test(entry.name) && !NOT_INDEXED.has(childRel)) files.push([childRel, abs]);
    }
    const stats = await Promise.all(files.map(([, abs]) => statInside(root, abs)));
    for (const [i, file] of stats.entries()) {
      const childRel = files[i]?.[0];
      if (file && childRel !== undefined) found.set(childRel, file);
    }
  }

  #warn(rel: string, message: string): void {
    this.#logger?.warn({ path: rel, workspaceDir: this.#workspaceDir }, `memory index: ${rel} ${message}`);
  }
}

/** The file's stat when `abs` (followed if a link) is a regular file inside `root`; else undefined. */
async function statInside(root: string, abs: string): Promise<FoundFile | undefined> {
  try {
    const s = await stat(abs);
    if (!s.isFile()) return undefined;
    const real = await realpath(abs);
    if (!isInsideDir(root, real)) return undefined;
    return { abs: real, mtimeMs: s.mtimeMs, size: s.size };
  } catch {
    return undefined;
  }
}

function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && "code" in err && err.code === code;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
