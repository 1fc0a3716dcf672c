/**
 * What each tool call means to the JIT rules, in one table: a read gathers, a write produces
 * something (a deliverable, a note, a command's effect), a plan call arranges work items.
 * Tools not in the table (MCP tools, schedule tools) are "other" and count as neither.
 */

/** How a JIT rule counts a tool call. */
export type JitToolKind = "read" | "write" | "plan" | "other";

/** The kind of every built-in tool the rules count. */
export const JIT_TOOL_KINDS: Readonly<Record<string, JitToolKind>> = {
  read_file: "read",
  list_files: "read",
  memory_get: "read",
  memory_search: "read",
  web_fetch: "read",
  web_search: "read",
  write_file: "write",
  edit_file: "write",
  memory_write: "write",
  exec: "write",
  work_item_add: "plan",
  work_item_list: "plan",
};

/** The kind of a call of `name`; "other" for tools the table does not name. */
export function jitToolKind(name: string): JitToolKind {
  return Object.hasOwn(JIT_TOOL_KINDS, name) ? (JIT_TOOL_KINDS[name] as JitToolKind) : "other";
}

/** Whether `path` names a plan file (PLAN.md in any folder): writing it is planning, not doing. */
export function isPlanFile(path: string): boolean {
  const base = path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
  return base.toUpperCase() === "PLAN.MD";
}
