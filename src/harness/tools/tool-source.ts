/**
 * A source of tools that come and go at run time (an MCP server's, listed when it starts and
 * again when it says its list changed), as opposed to the tools registered once at start.
 */
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
}
