/**
 * The environment block of a turn's volatile context (#25 item 4): what the agent needs to act
 * without asking, built from state the gateway already holds — which tools are missing here and
 * why (the policy, a mode), the workspace's top level, and an assignment's work items — within a
 * character budget. The tools it has are the stable prompt's tool list; only the gaps are said
 * here. Listing the workspace reads one directory, cached while its mtime is unchanged.
 */
import { readdir, stat } from "node:fs/promises";

/** What the block is built from (each part optional). */
export interface EnvironmentFacts {
  /** Tools not offered in this turn, each with the one-line reason (the policy's, a mode's). */
  missing?: ReadonlyArray<{ name: string; reason: string }>;
  /** The workspace's top-level entries (folders end in `/`), sorted. */
  listing?: readonly string[];
  /** An assignment run's work items now. */
  workItems?: { done: number; total: number; open: readonly string[] };
  /** Extra lines from other parts of the harness (the session's mode), each one line. */
  lines?: readonly string[];
}

/** Characters of the whole block by default (≈ 300 tokens). */
export const ENVIRONMENT_MAX_CHARS = 1_200;
/** Workspace entries named before "… and N more". */
const LISTING_MAX = 30;
/** Open work items named. */
const OPEN_ITEMS_MAX = 5;

/** The block's text (`# Environment` and one line per fact), or "" when there is nothing to say. */
export function environmentBlock(facts: EnvironmentFacts, maxChars = ENVIRONMENT_MAX_CHARS): string {
  const lines: string[] = [...(facts.lines ?? [])];
  const missing = facts.missing ?? [];
  if (missing.length > 0) {
    // One line per reason: "Not available here: exec, write_file (denied by … in a group chat)".
    const byReason = new Map<string, string[]>();
    for (const m of missing) {
      const names = byReason.get(m.reason);
      if (names) names.push(m.name);
      else byReason.set(m.reason, [m.name]);
    }
    for (const [reason, names] of byReason) lines.push(`Not available here: ${names.join(", ")} (${reason})`);
  }
  const items = facts.workItems;
  if (items) {
    const open = items.open.slice(0, OPEN_ITEMS_MAX);
    const more = items.open.length - open.length;
    lines.push(
      `Work items: ${items.done}/${items.total} done${open.length > 0 ? `; open: ${open.join("; ")}${more > 0 ? `; … ${more} more (work_item_list)` : ""}` : ""}`,
    );
  }
  const listing = facts.listing ?? [];
  if (listing.length > 0) {
    const shown = listing.slice(0, LISTING_MAX);
    const more = listing.length - shown.length;
    lines.push(`Workspace top level: ${shown.join(", ")}${more > 0 ? `, … ${more} more (list_files)` : ""}`);
  }
  if (lines.length === 0) return "";
  const text = `# Environment\n\n${lines.join("\n")}`;
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/** Owns the cached top-level listing of one folder (re-read when the folder's mtime changes). */
export class TopLevelListing {
  readonly #dir: string;
  #cached: { mtimeMs: number; entries: string[] } | undefined;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * The folder's entries, sorted, folders with a trailing `/`, hidden entries (a leading dot)
   * left out; [] when the folder cannot be read. Never throws.
   */
  async entries(): Promise<readonly string[]> {
    try {
      const { mtimeMs } = await stat(this.#dir);
      if (this.#cached?.mtimeMs === mtimeMs) return this.#cached.entries;
      const dirents = await readdir(this.#dir, { withFileTypes: true });
      const entries = dirents
        .filter((d) => !d.name.startsWith("."))
        .map((d) => (d.isDirectory() ? `${d.name}/` : d.name))
        .sort();
      this.#cached = { mtimeMs, entries };
      return entries;
    } catch {
      return [];
    }
  }
}
