/**
 * The prompt's file reads: workspace files by path, validated by (mtime, size) on every read, so
 * the system prompt (system-prompt.ts) stats its files each turn and reads them only when they
 * change — and gets the very same strings back, which it compares by identity.
 */
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";

function positiveInt(field: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`${field} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/** Outcome of reading one file through the cache. */
export type FileRead =
  | { type: "ok"; text: string }
  | { type: "missing" }
  | { type: "unreadable"; code: string };

export interface PromptFileCacheOptions {
  /** Files remembered; the least recently used is dropped past it. Default 64. */
  maxEntries?: number;
  /** Reads a file as UTF-8; default `fs.promises.readFile`. */
  readFile?: (absPath: string) => Promise<string>;
}

interface CacheEntry {
  mtimeMs: number;
  size: number;
  text: string;
}

/**
 * A small LRU of file contents keyed by path and validated by (mtimeMs, size) on every read,
 * so a busy gateway stats the bootstrap files each turn but reads them only when they change.
 */
export class PromptFileCache {
  readonly #maxEntries: number;
  readonly #readFile: (absPath: string) => Promise<string>;
  readonly #entries = new Map<string, CacheEntry>();

  constructor(options: PromptFileCacheOptions = {}) {
    this.#maxEntries = positiveInt("maxEntries", options.maxEntries ?? 64);
    this.#readFile = options.readFile ?? ((p) => readFile(p, "utf8"));
  }

  /** Reads `absPath` (following symlinks), from memory when its mtime and size are unchanged. */
  async read(absPath: string): Promise<FileRead> {
    let mtimeMs: number;
    let size: number;
    try {
      // Synchronous on purpose: a stat of a local file costs microseconds, while a threadpool
      // round trip per file is a measurable share of a turn's overhead.
      const s = statSync(absPath, { throwIfNoEntry: false });
      if (!s?.isFile()) return { type: "missing" };
      mtimeMs = s.mtimeMs;
      size = s.size;
    } catch (err) {
      return errnoRead(err);
    }
    const hit = this.#entries.get(absPath);
    if (hit && hit.mtimeMs === mtimeMs && hit.size === size) {
      this.#entries.delete(absPath);
      this.#entries.set(absPath, hit);
      return { type: "ok", text: hit.text };
    }
    let text: string;
    try {
      text = stripBom(await this.#readFile(absPath));
    } catch (err) {
      return errnoRead(err);
    }
    // Keyed by the stat taken before the read: if the file changed in between, the next stat
    // differs and the file is read again.
    this.#entries.delete(absPath);
    this.#entries.set(absPath, { mtimeMs, size, text });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    return { type: "ok", text };
  }

  /** Number of files currently remembered. */
  get size(): number {
    return this.#entries.size;
  }
}

function errnoRead(err: unknown): FileRead {
  const code = err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : "EIO";
  return code === "ENOENT" || code === "ENOTDIR" ? { type: "missing" } : { type: "unreadable", code };
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
