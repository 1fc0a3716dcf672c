/**
 * An assignment's runtime memory, in files a person can read and edit under
 * `projects/<id>/` in the workspace: PROGRESS.md (goal, state, work items; written by the
 * gateway), checkpoint.json (machine state), and the agent's own notes.md, session-state.md
 * and working-buffer.md. A run starts from these (the handoff), not from the transcript.
 */
import { createHash } from "node:crypto";
import {
  type Dirent,
  type Stats,
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  statSync,
} from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Assignment } from "../../store/repos/assignment-repo.js";
import { overwriteText } from "../../util/small-io.js";
import { writeFileAtomic } from "../memory/atomic-write.js";
import { describeCheck } from "./contract.js";

/** The files the agent writes, made empty (with a header) when the assignment starts. */
export const AGENT_FILES = {
  notes: "notes.md",
  sessionState: "session-state.md",
  workingBuffer: "working-buffer.md",
} as const;

/** How much of each agent file a run's handoff carries (characters): what keeps run 200 the size of run 1. */
export const HANDOFF_CHARS = { sessionState: 4_000, workingBuffer: 3_000, notesTail: 2_000 } as const;

const HEADERS: Record<keyof typeof AGENT_FILES, string> = {
  notes:
    "# Notes\n\nFindings and decisions worth keeping, newest last. The last part is handed to each run.\n",
  sessionState:
    "# Session state\n\nWhere the work stands and what comes next. Rewrite it before a run ends: the next run starts from it.\n",
  workingBuffer: "# Working buffer\n\nScratch space for the current step (drafts, partial results).\n",
};

/** The project folder of an assignment, relative to the workspace. */
export function projectDir(id: string): string {
  return `projects/${id}`;
}

/**
 * Reads and writes one workspace's project files. Synchronously, except the first making of a
 * folder: they are small, or read only in part (see util/small-io.ts for why).
 */
export class ProjectFiles {
  readonly #workspaceDir: string;
  /** Folders made (or found) by this process: a run does not make them again. */
  readonly #made = new Set<string>();
  /** Content digests by path, valid while the file's stat stamp is unchanged. */
  readonly #digests = new Map<string, { stamp: string; digest: string }>();

  constructor(workspaceDir: string) {
    this.#workspaceDir = workspaceDir;
  }

  #abs(id: string, name = ""): string {
    return path.join(this.#workspaceDir, projectDir(id), name);
  }

  /** Makes the folder and the agent's files that are missing (once per process and assignment). */
  async ensure(id: string): Promise<void> {
    if (this.#made.has(id)) return;
    await mkdir(this.#abs(id), { recursive: true });
    for (const [key, name] of Object.entries(AGENT_FILES) as Array<[keyof typeof AGENT_FILES, string]>)
      await writeFile(this.#abs(id, name), HEADERS[key], { flag: "wx" }).catch(
        (err: NodeJS.ErrnoException) => {
          if (err.code !== "EEXIST") throw err;
        },
      );
    this.#made.add(id);
  }

  /**
   * Mirrors the assignment into PROGRESS.md and checkpoint.json: views of the database, written
   * in place at every run's end (not atomically: see overwriteText) and again for every open
   * assignment when the gateway starts, which heals one a crash left half written.
   */
  async write(a: Assignment): Promise<void> {
    try {
      await this.#write(a);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      this.#made.delete(a.id); // the folder was removed meanwhile: make it again
      await this.#write(a);
    }
  }

  async #write(a: Assignment): Promise<void> {
    await this.ensure(a.id);
    overwriteText(this.#abs(a.id, "PROGRESS.md"), progressText(a));
    const checkpoint = {
      id: a.id,
      state: a.state,
      stateReason: a.stateReason,
      items: a.items,
      counters: a.checkpoint,
      question: a.question,
      limits: a.limits,
    };
    overwriteText(this.#abs(a.id, "checkpoint.json"), `${JSON.stringify(checkpoint, null, 2)}\n`);
  }

  /** Replaces session-state.md (the agent's end_run `state`). */
  async writeSessionState(id: string, text: string): Promise<void> {
    await this.ensure(id);
    // Not flushed: a power cut may leave the previous state, never half of one.
    await writeFileAtomic(this.#abs(id, AGENT_FILES.sessionState), `${text.trimEnd()}\n`, { durable: false });
  }

  /**
   * The agent's files as the next run reads them: each capped (notes: its end). Only the part
   * shown is read, however large the file has grown.
   */
  async handoff(id: string): Promise<{ sessionState: string; workingBuffer: string; notes: string }> {
    const { sessionState, workingBuffer, notesTail } = HANDOFF_CHARS;
    return {
      sessionState: head(
        readPart(this.#abs(id, AGENT_FILES.sessionState), "start", sessionState),
        sessionState,
      ),
      workingBuffer: head(
        readPart(this.#abs(id, AGENT_FILES.workingBuffer), "start", workingBuffer),
        workingBuffer,
      ),
      notes: tail(readPart(this.#abs(id, AGENT_FILES.notes), "end", notesTail), notesTail),
    };
  }

  /**
   * A digest of the project folder and `extra` workspace paths (names and contents; a file over
   * 256 KB by size and modification time; the files the gateway writes itself left out): what
   * changes when work is done. A file rewritten with the same text is no change.
   */
  async fingerprint(id: string, extra: readonly string[]): Promise<string> {
    const hash = createHash("sha1");
    let seen = 0;
    const walk = (dir: string, rel: string): void => {
      if (seen > FINGERPRINT_MAX_FILES) return; // a tree that large is not walked on the event loop
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries.sort((x, y) => x.name.localeCompare(y.name))) {
        if (
          e.name.startsWith(".") ||
          (rel === "" && (e.name === "PROGRESS.md" || e.name === "checkpoint.json"))
        )
          continue;
        const full = path.join(dir, e.name);
        if (e.isDirectory()) walk(full, `${rel}${e.name}/`);
        else if (++seen <= FINGERPRINT_MAX_FILES) hash.update(`${rel}${e.name}\0${this.#digest(full)}\n`);
        else return;
      }
    };
    walk(this.#abs(id), "");
    hash.update(`files\0${seen}\n`); // past the cap: only that there are more
    for (const p of extra) hash.update(`${p}\0${this.#digest(path.resolve(this.#workspaceDir, p))}\n`);
    return hash.digest("hex");
  }

  /**
   * A file's content digest ("-" when missing; size and time when large), read again only when
   * its stat stamp changed. A file changed within {@link RACY_MS} of the look is not remembered:
   * a second write in the same timestamp tick, of the same size, would look unchanged (git's
   * "racy clean" problem).
   */
  #digest(abs: string): string {
    let s: Stats | undefined;
    try {
      s = statSync(abs, { throwIfNoEntry: false });
    } catch {
      return "-";
    }
    if (!s?.isFile()) return "-";
    if (s.size > DIGEST_MAX_BYTES) return `${s.size}:${s.mtimeMs}`;
    const stamp = `${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.ino}`;
    const known = this.#digests.get(abs);
    if (known?.stamp === stamp) return known.digest;
    let digest: string;
    try {
      digest = createHash("sha1").update(readFileSync(abs)).digest("hex");
    } catch {
      return "-";
    }
    if (Date.now() - Math.max(s.mtimeMs, s.ctimeMs) > RACY_MS) {
      if (this.#digests.size >= DIGEST_CACHE_ENTRIES) this.#digests.clear();
      this.#digests.set(abs, { stamp, digest });
    }
    return digest;
  }
}

/** Files up to this size are compared by content. */
const DIGEST_MAX_BYTES = 256 * 1024;
/** Files the fingerprint reads; past it, the walk stops: only that there are more counts. */
const FINGERPRINT_MAX_FILES = 2_000;
/** Digests remembered (all dropped when full: a bound, not an LRU). */
const DIGEST_CACHE_ENTRIES = 10_000;
/** How old a file's last change must be for its digest to be remembered. */
const RACY_MS = 2_000;

/**
 * Part of a text file: its first or last `maxChars` characters' worth of bytes (a UTF-16 unit
 * is at most 3 bytes of UTF-8), and whether the file holds more. "" when it cannot be read.
 */
function readPart(abs: string, from: "start" | "end", maxChars: number): { text: string; more: boolean } {
  let fd: number;
  try {
    fd = openSync(abs, "r");
  } catch {
    return { text: "", more: false };
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, maxChars * 3 + 16);
    const position = from === "start" ? 0 : size - length;
    const buffer = Buffer.allocUnsafe(length);
    let bytes = buffer.subarray(0, readSync(fd, buffer, 0, length, position));
    // Read from the middle of the file: skip the rest of a character cut at the start.
    let skip = 0;
    while (position > 0 && skip < 3 && skip < bytes.length && ((bytes[skip] ?? 0) & 0xc0) === 0x80) skip++;
    bytes = bytes.subarray(skip);
    return { text: bytes.toString("utf8"), more: length < size };
  } catch {
    return { text: "", more: false };
  } finally {
    closeSync(fd);
  }
}

function head({ text, more }: { text: string; more: boolean }, max: number): string {
  const t = text.trim();
  return t.length <= max && !more
    ? t
    : `${t.slice(0, max)}\n[… cut: the file is longer; read it for the rest]`;
}

function tail({ text, more }: { text: string; more: boolean }, max: number): string {
  const t = text.trim();
  return t.length <= max && !more
    ? t
    : `[… earlier notes are in the file]\n${t.slice(Math.max(0, t.length - max))}`;
}

const STATUS_MARK: Record<Assignment["items"][number]["status"], string> = {
  open: "[ ]",
  in_progress: "[~]",
  blocked: "[!]",
  done: "[x]",
  dropped: "[-]",
};

/** PROGRESS.md: what a person opens to see where the assignment stands. */
export function progressText(a: Assignment): string {
  const done = a.items.filter((i) => i.status === "done").length;
  const lines = [
    `# ${a.id}: ${firstLine(a.goal, 100)}`,
    "",
    `State: ${a.state}${a.stateReason ? ` (${a.stateReason})` : ""}`,
    `Runs: ${a.checkpoint.runs} · model calls: ${a.checkpoint.turns} · tokens: ${a.checkpoint.tokens} · cost: $${a.checkpoint.costUsd.toFixed(4)}`,
    a.checkpoint.lastDirective
      ? `Last run ended: ${a.checkpoint.lastDirective.directive} (${a.checkpoint.lastDirective.reason})`
      : "Not run yet.",
    "",
    "## Goal",
    "",
    a.goal,
    "",
    `## Work items (${done}/${a.items.length} done)`,
    "",
    ...(a.items.length === 0
      ? ["(none yet)"]
      : a.items.map(
          (i) => `- ${STATUS_MARK[i.status]} #${i.id} ${i.title}${i.notes ? ` — ${i.notes}` : ""}`,
        )),
  ];
  if (a.contract.length > 0)
    lines.push("", "## Contract", "", ...a.contract.map((c) => `- ${describeCheck(c)}`));
  if (a.checkpoint.summary) lines.push("", "## Summary", "", a.checkpoint.summary);
  return `${lines.join("\n")}\n`;
}

export function firstLine(text: string, max: number): string {
  const line = text.split("\n")[0]?.trim() ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
