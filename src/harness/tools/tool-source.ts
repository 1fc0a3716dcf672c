/**
 * A source of tools that come and go at run time (an MCP server's, listed when it starts and
 * again when it says its list changed), as opposed to the tools registered once at start.
 */
import type { ToolGroup } from "./tool-groups.js";
import type { Tool } from "./types.js";

/** Tools known only at run time; the registry asks for them on every turn. */
export interface ToolSource {
  /** Its name in logs and errors (an MCP server's name). */
  readonly name: string;
  /**
   * The tools it offers now. Return the same Tool objects while the set is unchanged: the
   * registry builds a tool's spec once per object, so requests stay byte-identical.
   */
  tools(): readonly Tool[];
  /**
   * The groups every tool it offers belongs to (e.g. `mcp:github`), known before its tools are:
   * the registry prepares the source only for a turn whose policy allows these groups.
   */
  readonly groups?: readonly ToolGroup[];
  /**
   * Gets its tools ready before a turn builds its request (an MCP server is started on first use
   * and its tools listed). Bounded by the source itself; resolves early when `signal` aborts;
   * never rejects. A source whose tools are not ready in time offers what it has (maybe none).
   */
  prepare?(signal: AbortSignal): Promise<void>;
}
