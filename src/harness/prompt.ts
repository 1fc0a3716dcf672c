/**
 * System prompt assembly: the preamble plus the workspace bootstrap files (AGENTS.md, SOUL.md,
 * ...) in a fixed order, each capped. The output depends only on the options and the file
 * contents (no clock, no randomness), so an unchanged workspace yields byte-identical prompts
 * and provider prompt caches stay warm.
 */
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";

/** Bootstrap files injected on every turn, in this order. */
export const DEFAULT_BOOTSTRAP_FILES: readonly string[] = [
  "AGENTS.md",
  "SOUL.md",
  "USER.md",
  "IDENTITY.md",
  "TOOLS.md",
];

export interface PromptOptions {
  /** Absolute path of the agent workspace. */
  workspaceDir: string;
  /** Workspace-relative file names, injected in this order; default `DEFAULT_BOOTSTRAP_FILES`. */
  files?: readonly string[];
  /** Characters of one file injected before it is truncated; default 20_000. */
  maxCharsPerFile?: number;
  /**
   * Characters of file content injected in total; default 60_000. Files past the budget are
   * truncated harder or omitted. Headers and marker lines add a few dozen characters per file.
   */
  maxTotalChars?: number;
  /** Text placed before the workspace files (base instructions); default none. */
  preamble?: string;
  /** File read cache; default one shared by every call in the process. */
  cache?: PromptFileCache;
}

/** What happened to one bootstrap file. */
export interface PromptFileReport {
  name: string;
  /** Characters in the file as read (0 when missing). */
  rawChars: number;
  /** Characters of the file that made it into the prompt, markers not counted. */
  injectedChars: number;
  truncated: boolean;
  missing: boolean;
}

export interface AssembledPrompt {
  text: string;
  files: PromptFileReport[];
}

const HEAD_SHARE = 0.7;
const TAIL_SHARE = 0.2;
/** Below this many characters of budget a file is omitted rather than shredded. */
const MIN_FILE_BUDGET = 200;

const WORKSPACE_INTRO =
  "# Workspace files\n\n" +
  "These files from your workspace are loaded on every turn. Keep them current with edit_file " +
  "or write_file; the next turn sees the new version.";

/**
 * Builds the system prompt: `preamble`, then every file of `files` under a `## <name>` header.
 * A file longer than its cap keeps the head 70% and tail 20% of the cap around a marker line
 * that says how much was cut and that read_file shows the whole file; a missing file gets a
 * one-line `(missing)` marker. Reads go through a (path, mtimeMs, size) cache. Throws a
 * RangeError naming the option when a cap is not a positive integer.
 */
export async function assembleSystemPrompt(options: PromptOptions): Promise<AssembledPrompt> {
  const files = options.files ?? DEFAULT_BOOTSTRAP_FILES;
  const maxCharsPerFile = positiveInt("maxCharsPerFile", options.maxCharsPerFile ?? 20_000);
  let remaining = positiveInt("maxTotalChars", options.maxTotalChars ?? 60_000);
  const cache = options.cache ?? sharedCache;

  const reads = await Promise.all(files.map((name) => cache.read(path.join(options.workspaceDir, name))));
  const sections: string[] = [];
  const reports: PromptFileReport[] = [];
  files.forEach((name, i) => {
    const read = reads[i] as FileRead;
    if (read.type !== "ok") {
      const why = read.type === "missing" ? "(missing)" : `(missing: unreadable, ${read.code})`;
      sections.push(`## ${name}\n\n${why}`);
      reports.push({ name, rawChars: 0, injectedChars: 0, truncated: false, missing: true });
      return;
    }
    const content = read.text.trimEnd();
    const budget = Math.min(maxCharsPerFile, remaining);
    let body: string;
    let injectedChars: number;
    if (content.length <= budget) {
      body = content === "" ? "(empty)" : content;
      injectedChars = content.length;
    } else if (budget < MIN_FILE_BUDGET) {
      body = `[… omitted: the ${content.length} characters of ${name} exceed what is left of the limit for workspace files. Read the full file with read_file. …]`;
      injectedChars = 0;
    } else {
      const cut = truncateMiddle(content, budget, name);
      body = cut.text;
      injectedChars = cut.keptChars;
    }
    remaining = Math.max(0, remaining - injectedChars);
    sections.push(`## ${name}\n\n${body}`);
    reports.push({
      name,
      rawChars: read.text.length,
      injectedChars,
      truncated: injectedChars < content.length,
      missing: false,
    });
  });

  const parts = [options.preamble?.trimEnd(), WORKSPACE_INTRO, ...sections].filter(
    (p): p is string => p !== undefined && p !== "",
  );
  return { text: `${parts.join("\n\n")}\n`, files: reports };
}

/** Keeps the head 70% and tail 20% of `cap` with a marker line between them. */
function truncateMiddle(content: string, cap: number, name: string): { text: string; keptChars: number } {
  let headEnd = Math.floor(cap * HEAD_SHARE);
  let tailStart = content.length - Math.floor(cap * TAIL_SHARE);
  // Never split a surrogate pair: drop the lone half instead.
  if (isHighSurrogate(content.charCodeAt(headEnd - 1))) headEnd--;
  if (isLowSurrogate(content.charCodeAt(tailStart))) tailStart++;
  const head = content.slice(0, headEnd);
  const tail = content.slice(tailStart);
  const cutChars = content.length - head.length - tail.length;
  const marker = `[… ${cutChars} of ${content.length} characters of ${name} cut here. The full file can be read with read_file. …]`;
  return { text: `${head}\n${marker}\n${tail}`, keptChars: head.length + tail.length };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function positiveInt(field: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`${field} must be a positive integer (characters), got ${String(value)}`);
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

const sharedCache = new PromptFileCache();

function errnoRead(err: unknown): FileRead {
  const code = err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : "EIO";
  return code === "ENOENT" || code === "ENOTDIR" ? { type: "missing" } : { type: "unreadable", code };
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
