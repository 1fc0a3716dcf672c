/**
 * An assignment's runtime memory, in files a person can read and edit under
 * `projects/<id>/` in the workspace: PROGRESS.md (goal, state, work items; written by the
 * gateway), checkpoint.json (machine state), and the agent's own notes.md, session-state.md
 * and working-buffer.md. A run starts from these (the handoff), not from the transcript.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Assignment } from "../../store/repos/assignment-repo.js";
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

/** Reads and writes one workspace's project files. */
export class ProjectFiles {
  readonly #workspaceDir: string;
  /** Folders made (or found) by this process: a run does not make them again. */
  readonly #made = new Set<string>();

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
   * Mirrors the assignment into PROGRESS.md and checkpoint.json. Not flushed to disk: the
   * database is the record, and these are rewritten from it at every run's end.
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
    const mirror = { durable: false };
    await writeFileAtomic(this.#abs(a.id, "PROGRESS.md"), progressText(a), mirror);
    const checkpoint = {
      id: a.id,
      state: a.state,
      stateReason: a.stateReason,
      items: a.items,
      counters: a.checkpoint,
      question: a.question,
      limits: a.limits,
    };
    await writeFileAtomic(
      this.#abs(a.id, "checkpoint.json"),
      `${JSON.stringify(checkpoint, null, 2)}\n`,
      mirror,
    );
  }

  /** Replaces session-state.md (the agent's end_run `state`). */
  async writeSessionState(id: string, text: string): Promise<void> {
    await this.ensure(id);
    // Not flushed: a power cut may leave the previous state, never half of one.
    await writeFileAtomic(this.#abs(id, AGENT_FILES.sessionState), `${text.trimEnd()}\n`, { durable: false });
  }

  /** The agent's files as the next run reads them: each capped (notes: its end). */
  async handoff(id: string): Promise<{ sessionState: string; workingBuffer: string; notes: string }> {
    const read = (name: string) => readFile(this.#abs(id, name), "utf8").catch(() => "");
    const [sessionState, workingBuffer, notes] = await Promise.all([
      read(AGENT_FILES.sessionState),
      read(AGENT_FILES.workingBuffer),
      read(AGENT_FILES.notes),
    ]);
    return {
      sessionState: head(sessionState, HANDOFF_CHARS.sessionState),
      workingBuffer: head(workingBuffer, HANDOFF_CHARS.workingBuffer),
      notes: tail(notes, HANDOFF_CHARS.notesTail),
    };
  }

  /**
   * A digest of the project folder and `extra` workspace paths (names and contents; a file over
   * 256 KB by size and modification time; the files the gateway writes itself left out): what
   * changes when work is done. A file rewritten with the same text is no change.
   */
  async fingerprint(id: string, extra: readonly string[]): Promise<string> {
    const hash = createHash("sha1");
    const walk = async (dir: string, rel: string): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries.sort((x, y) => x.name.localeCompare(y.name))) {
        if (
          e.name.startsWith(".") ||
          (rel === "" && (e.name === "PROGRESS.md" || e.name === "checkpoint.json"))
        )
          continue;
        const full = path.join(dir, e.name);
        if (e.isDirectory()) await walk(full, `${rel}${e.name}/`);
        else hash.update(`${rel}${e.name}\0${await fileDigest(full)}\n`);
      }
    };
    await walk(this.#abs(id), "");
    for (const p of extra) hash.update(`${p}\0${await fileDigest(path.resolve(this.#workspaceDir, p))}\n`);
    return hash.digest("hex");
  }
}

/** Files up to this size are compared by content. */
const DIGEST_MAX_BYTES = 256 * 1024;

/** A file's content digest ("-" when missing; size and time when large). */
async function fileDigest(abs: string): Promise<string> {
  const s = await stat(abs).catch(() => undefined);
  if (!s?.isFile()) return "-";
  if (s.size > DIGEST_MAX_BYTES) return `${s.size}:${s.mtimeMs}`;
  const bytes = await readFile(abs).catch(() => undefined);
  return bytes ? createHash("sha1").update(bytes).digest("hex") : "-";
}

function head(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max)}\n[… cut: the file is longer; read it for the rest]`;
}

function tail(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `[… earlier notes are in the file]\n${t.slice(t.length - max)}`;
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
