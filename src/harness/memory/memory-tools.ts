/**
 * The memory tools: memory_search (the index), memory_get (lines of a memory file) and
 * memory_write (today's daily note, or MEMORY.md whole or by section). They work on the index's
 * workspace, only on MEMORY.md and memory/**, and every write is atomic and re-indexed at once.
 */
import { mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { type Clock, systemClock } from "../../util/clock.js";
import { resolveInWorkspace } from "../tools/file-tools.js";
import { ToolError } from "../tools/tool-error.js";
import type { Tool, ToolOutput } from "../tools/types.js";
import { writeFileAtomic } from "./atomic-write.js";
import { appendEntry, newNote, sectionTitle, setSection } from "./memory-edits.js";
import { DEFAULT_SEARCH_LIMIT, type MemoryIndex } from "./memory-index.js";
import { MEMORY_FILE, checkTimeZone, dailyNotePath, localDate, memoryFilePath } from "./memory-paths.js";
import { decodeText, splitLines } from "./text-file.js";

/** Characters one memory_write may add. */
export const MAX_WRITE_CHARS = 8_000;
/** Hits memory_search returns at most. */
export const MAX_SEARCH_HITS = 50;
/** Lines memory_get returns without `lines`. */
export const DEFAULT_GET_LINES = 300;
/** Largest memory file memory_get and memory_write load. */
export const MAX_MEMORY_FILE_BYTES = 2 * 1024 * 1024;

/** How the memory tools date the daily note. */
export interface MemoryToolsOptions {
  /** The time "today" is taken from; default the system clock. */
  clock?: Clock;
  /** IANA zone daily notes are dated in (the person's); default "UTC". */
  /** IANA zone of daily-note dates, or a function giving it (resolved on first use: Intl's data costs megabytes). */
  timeZone?: string | (() => string);
}

/**
 * memory_search, memory_get and memory_write over `index` and its workspace. Throws a
 * RangeError naming `timeZone` when Intl does not know it.
 */
export function memoryTools(index: MemoryIndex, opts: MemoryToolsOptions = {}): Tool[] {
  const clock = opts.clock ?? systemClock;
  const given = opts.timeZone;
  // A zone given as text is checked now; one given as a function when it is first needed.
  if (typeof given === "string") checkTimeZone(given, "memoryTools timeZone");
  let resolved: string | undefined;
  const timeZone = () => {
    resolved ??= checkTimeZone(
      typeof given === "function" ? given() : (given ?? "UTC"),
      "memoryTools timeZone",
    );
    return resolved;
  };
  const locks = new KeyedLock();
  return [searchTool(index), getTool(index), writeTool(index, clock, timeZone, locks)];
}

const searchParameters = z.strictObject({
  query: z.string().min(1).max(500).describe("Words to look for; every word must match, else any"),
  limit: z
    .int()
    .min(1)
    .max(MAX_SEARCH_HITS)
    .optional()
    .describe(`Most results to return (default ${DEFAULT_SEARCH_LIMIT})`),
});

function searchTool(index: MemoryIndex): Tool<typeof searchParameters> {
  return {
    name: "memory_search",
    groups: ["memory"],
    description:
      "Search your memory (MEMORY.md and the notes in memory/, daily notes included) by words, best matches first. Each result is `path:start-end: snippet`, matches in **bold**; read the lines around a hit with memory_get.",
    parameters: searchParameters,
    async run(args, ctx) {
      const hits = await index.search(args.query, {
        limit: args.limit ?? DEFAULT_SEARCH_LIMIT,
        signal: ctx.signal,
      });
      if (hits.length === 0) {
        return { content: `no matches for ${JSON.stringify(args.query)} in ${MEMORY_FILE} or memory/` };
      }
      return { content: hits.map((h) => `${h.path}:${h.startLine}-${h.endLine}: ${h.snippet}`).join("\n") };
    },
  };
}

const getParameters = z.strictObject({
  path: z.string().min(1).describe("MEMORY.md or a file under memory/, e.g. memory/2025-03-14.md"),
  from: z.int().min(1).optional().describe("First line to return, counting from 1 (default 1)"),
  lines: z
    .int()
    .min(1)
    .max(2_000)
    .optional()
    .describe(`Number of lines to return (default ${DEFAULT_GET_LINES})`),
});

function getTool(index: MemoryIndex): Tool<typeof getParameters> {
  return {
    name: "memory_get",
    groups: ["memory"],
    description:
      "Read lines of MEMORY.md or of a file under memory/ (such as a daily note memory/YYYY-MM-DD.md). For a memory_search hit `path:12-15`, pass path, from=12, lines=4; add a few lines for context.",
    parameters: getParameters,
    run: (args) =>
      guarded(args.path, async () => {
        const rel = memoryFilePath(args.path);
        const abs = resolveInWorkspace(index.workspaceDir, rel);
        const text = await loadMemoryFile(abs, rel);
        if (text === undefined) {
          throw new ToolError(
            "not_found",
            `${rel} does not exist; memory_search finds notes by words, list_files memory shows the files`,
          );
        }
        return window(rel, text, args.from ?? 1, args.lines ?? DEFAULT_GET_LINES);
      }),
  };
}

const writeParameters = z.strictObject({
  target: z
    .enum(["daily", "memory"])
    .describe('"daily": append to today\'s note memory/YYYY-MM-DD.md; "memory": write to MEMORY.md'),
  text: z
    .string()
    .min(1)
    .max(MAX_WRITE_CHARS)
    .describe(`What to write, Markdown, at most ${MAX_WRITE_CHARS} characters`),
  section: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'target "memory" only: the ## heading whose body text replaces (the section is added when missing); without it, text is appended at the end',
    ),
});

function writeTool(
  index: MemoryIndex,
  clock: Clock,
  timeZone: () => string,
  locks: KeyedLock,
): Tool<typeof writeParameters> {
  return {
    name: "memory_write",
    groups: ["memory"],
    description: `Write to memory. target "daily" appends text to today's daily note (memory/YYYY-MM-DD.md, created with its date header). target "memory" with section replaces the body of that "## section" of MEMORY.md (or adds the section): include everything the section should keep. target "memory" without section appends to the end of MEMORY.md. At most ${MAX_WRITE_CHARS} characters per call. Never write secrets.`,
    parameters: writeParameters,
    async run(args) {
      if (args.text.trim() === "")
        throw new ToolError("invalid_arguments", "text is blank: nothing to write");
      if (args.text.length > MAX_WRITE_CHARS) {
        throw new ToolError(
          "invalid_arguments",
          `text has ${args.text.length} characters; memory_write takes at most ${MAX_WRITE_CHARS} per call. Write less, or split it over several calls.`,
        );
      }
      if (args.target === "daily" && args.section !== undefined) {
        throw new ToolError(
          "invalid_arguments",
          'section applies to target "memory" only; daily notes are appended to',
        );
      }
      const rel = args.target === "daily" ? dailyNotePath(localDate(clock.now(), timeZone())) : MEMORY_FILE;
      const title = args.section === undefined ? undefined : sectionTitle(args.section);
      if (args.section !== undefined && title === undefined) {
        throw new ToolError(
          "invalid_arguments",
          `section must be a heading title on one line, such as "Lessons", got ${JSON.stringify(args.section)}`,
        );
      }
      return guarded(rel, async () => {
        const abs = resolveInWorkspace(index.workspaceDir, rel);
        const said = await locks.run(abs, async () => {
          await mkdir(path.dirname(abs), { recursive: true });
          const current = await loadMemoryFile(abs, rel);
          const chars = args.text.trim().length;
          if (args.target === "daily") {
            const date = path.basename(rel, ".md");
            await writeFileAtomic(
              abs,
              current === undefined ? newNote(date, args.text) : appendEntry(current, args.text),
            );
            return `appended ${chars} characters to ${rel}${current === undefined ? " (created)" : ""}`;
          }
          if (title === undefined) {
            await writeFileAtomic(
              abs,
              current === undefined ? newNote(MEMORY_FILE, args.text) : appendEntry(current, args.text),
            );
            return `appended ${chars} characters to ${rel}${current === undefined ? " (created)" : ""}`;
          }
          const edit = setSection(current ?? `# ${MEMORY_FILE}\n`, title, args.text);
          await writeFileAtomic(abs, edit.text);
          return edit.replaced
            ? `replaced the body of "## ${title}" in ${rel} (${chars} characters)`
            : `added section "## ${title}" to ${rel} (${chars} characters)`;
        });
        // The write stands whatever happens here: a search that finds the index stale (closed
        // at shutdown, say) refreshes it then.
        await index.update([rel]).catch(() => undefined);
        return { content: said };
      });
    },
  };
}

/** Lines `from`… of `text`, with a footer saying where they are when that is not all of it. */
function window(rel: string, text: string, from: number, count: number): ToolOutput {
  const lines = splitLines(text);
  if (lines.length === 0) return { content: `(${rel} is empty)` };
  if (from > lines.length) {
    throw new ToolError(
      "invalid_arguments",
      `from ${from} is past the end of ${rel}, which has ${lines.length} lines`,
    );
  }
  const last = Math.min(lines.length, from - 1 + count);
  const slice = lines.slice(from - 1, last).join("\n");
  if (from === 1 && last === lines.length) return { content: slice };
  const more = last < lines.length ? `; continue with from=${last + 1}` : "";
  return { content: `${slice}\n\n[${rel} lines ${from}–${last} of ${lines.length}${more}]` };
}

/** The file as text (invalid UTF-8 as U+FFFD), or undefined when it does not exist. */
async function loadMemoryFile(abs: string, rel: string): Promise<string | undefined> {
  const s = await stat(abs).catch((err: unknown) => {
    if (isErrno(err, "ENOENT")) return undefined;
    throw err;
  });
  if (s === undefined) return undefined;
  if (s.isDirectory()) throw new ToolError("failed", `${rel} is a folder, not a file`);
  if (s.size > MAX_MEMORY_FILE_BYTES) {
    throw new ToolError(
      "failed",
      `${rel} is over ${MAX_MEMORY_FILE_BYTES / (1024 * 1024)} MB; read it in parts with read_file`,
    );
  }
  const decoded = decodeText(await readFile(abs));
  if (decoded.type === "binary") throw new ToolError("failed", `${rel} looks like a binary file, not text`);
  return decoded.text;
}

/** Runs the body of a tool on `rel`, turning file system errors into ToolErrors. */
async function guarded(rel: string, body: () => Promise<ToolOutput>): Promise<ToolOutput> {
  try {
    return await body();
  } catch (err) {
    throw toToolError(err, rel);
  }
}

/** fs error codes → what the model is told; anything else becomes "failed" with its message. */
const FS_ERRORS: Record<string, { code: ToolError["code"]; say: (rel: string) => string }> = {
  ENOENT: { code: "not_found", say: (rel) => `${rel} does not exist` },
  ENOTDIR: { code: "failed", say: (rel) => `${rel}: part of the path is a file, not a folder` },
  EISDIR: { code: "failed", say: (rel) => `${rel} is a folder, not a file` },
  EACCES: { code: "failed", say: (rel) => `permission denied for ${rel}` },
  EPERM: { code: "failed", say: (rel) => `permission denied for ${rel}` },
  ENOSPC: { code: "failed", say: () => "the disk is full" },
};

function toToolError(err: unknown, rel: string): Error {
  if (err instanceof ToolError) return err;
  const errno = err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : undefined;
  const known = errno === undefined ? undefined : FS_ERRORS[errno];
  if (known) return new ToolError(known.code, known.say(rel), { cause: err });
  // Not a file system error (an abort, a closed index): the boundary reports it as it is.
  return err instanceof Error ? err : new Error(String(err));
}

/** Runs tasks one at a time per key: two writes to one note must not interleave read and write. */
class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && "code" in err && err.code === code;
}
