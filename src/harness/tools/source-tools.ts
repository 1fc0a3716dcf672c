/**
 * The run-time half of a ToolRegistry: the tool sources (MCP servers) and the entries of the
 * tools they offer now. A tool's entry is built once per Tool object (a WeakMap), so a source
 * that returns the same objects keeps every request byte-identical; a tool whose name is taken
 * (by a registered tool or an earlier source's) or whose schema is unusable is skipped with one
 * warning per Tool object.
 */
import type { ToolSource } from "./tool-source.js";
import { type ToolEntry, toolEntry } from "./tool-entry.js";
import type { Tool } from "./types.js";

/** The tool sources of one registry and the entries of their current tools. */
export class SourceTools {
  readonly #sources: ToolSource[] = [];
  /** Per Tool object: its entry, or null when it can never be offered (an unusable schema). */
  readonly #entries = new WeakMap<Tool, ToolEntry | null>();
  readonly #warned = new WeakSet<Tool>();
  readonly #warn: (message: string) => void;

  constructor(warn: (message: string) => void) {
    this.#warn = warn;
  }

  /** Adds a source; throws when one of the same name is already there. */
  add(source: ToolSource): void {
    if (this.#sources.some((s) => s.name === source.name))
      throw new Error(`tool source "${source.name}" is already added`);
    this.#sources.push(source);
  }

  /** The sources, in the order added. */
  get sources(): readonly ToolSource[] {
    return this.#sources;
  }

  /**
   * The entries of every source's current tools, in source order, without those whose name
   * `taken` says is a registered tool's (or an earlier source tool's).
   */
  entries(taken: (name: string) => boolean): ToolEntry[] {
    if (this.#sources.length === 0) return [];
    const out: ToolEntry[] = [];
    const seen = new Set<string>();
    for (const source of this.#sources) {
      for (const tool of source.tools()) {
        if (taken(tool.name) || seen.has(tool.name)) {
          this.#warnOnce(
            tool,
            `tool "${tool.name}" of ${source.name} is skipped: a tool of that name exists`,
          );
          continue;
        }
        const entry = this.#entryOf(tool, source);
        if (!entry) continue;
        seen.add(tool.name);
        out.push(entry);
      }
    }
    return out;
  }

  #entryOf(tool: Tool, source: ToolSource): ToolEntry | null {
    const known = this.#entries.get(tool);
    if (known !== undefined) return known;
    let entry: ToolEntry | null;
    try {
      entry = toolEntry(tool);
    } catch (err) {
      entry = null;
      this.#warnOnce(tool, `tool "${tool.name}" of ${source.name} is skipped: ${(err as Error).message}`);
    }
    this.#entries.set(tool, entry);
    return entry;
  }

  #warnOnce(tool: Tool, message: string): void {
    if (this.#warned.has(tool)) return;
    this.#warned.add(tool);
    this.#warn(message);
  }
}
