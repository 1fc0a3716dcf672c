/**
 * Tool groups and the catalog of every built-in tool's groups. The catalog is static so the
 * configuration can name tools and groups before any tool is built (test/harness/tools/
 * tool-groups.test.ts checks it equals the `groups` the tools themselves declare).
 */

/**
 * A group of tools. `fs` holds every file tool, `fs-write` only those that change files;
 * `memory` the memory tools (and `skill`, which reads the workspace's skills); `schedule`
 * cron, wakes and heartbeat_ok; `assignment` work items, task and owner tools; `exec` command
 * tools; `web` fetch and search; `agents` sub-agents (spawn_agent, wait_agents); `mcp:<server>`
 * the tools of one MCP server.
 */
export type ToolGroup =
  | "fs"
  | "fs-write"
  | "memory"
  | "schedule"
  | "assignment"
  | "exec"
  | "web"
  | "agents"
  | `mcp:${string}`;

/** The fixed groups (every `mcp:<server>` is a group too). */
export const TOOL_GROUPS = [
  "fs",
  "fs-write",
  "memory",
  "schedule",
  "assignment",
  "exec",
  "web",
  "agents",
] as const;

/** A named set of groups, `tools.profile`. */
export type ToolProfile = "full" | "coding" | "messaging" | "minimal";

/**
 * The groups each profile offers. `full`: everything (MCP included); `coding`: files, memory,
 * schedule, assignments, exec and web; `messaging`: no files and no exec; `minimal`: memory only.
 * `"*"` stands for every group.
 */
export const TOOL_PROFILES: Readonly<Record<ToolProfile, readonly (ToolGroup | "*")[]>> = {
  full: ["*"],
  coding: ["fs", "fs-write", "memory", "schedule", "assignment", "exec", "web", "agents"],
  messaging: ["memory", "schedule", "assignment", "web", "agents"],
  minimal: ["memory"],
};

/** The groups of every built-in tool, by name (MCP tools are named at run time). */
export const TOOL_CATALOG: Readonly<Record<string, readonly ToolGroup[]>> = {
  read_file: ["fs"],
  list_files: ["fs"],
  write_file: ["fs", "fs-write"],
  edit_file: ["fs", "fs-write"],
  memory_search: ["memory"],
  memory_get: ["memory"],
  memory_write: ["memory"],
  skill: ["memory"],
  cron_add: ["schedule"],
  cron_list: ["schedule"],
  cron_remove: ["schedule"],
  schedule_wake: ["schedule"],
  list_wakes: ["schedule"],
  cancel_wake: ["schedule"],
  heartbeat_ok: ["schedule"],
  task_start: ["assignment"],
  work_item_add: ["assignment"],
  work_item_update: ["assignment"],
  work_item_list: ["assignment"],
  work_complete: ["assignment"],
  ask_owner: ["assignment"],
  request_approval: ["assignment"],
  end_run: ["assignment"],
  learn: ["assignment"],
  exec: ["exec"],
  web_fetch: ["web"],
  web_search: ["web"],
  spawn_agent: ["agents"],
  wait_agents: ["agents"],
};

/** Whether `name` is a group a rule may name as `group:<name>`. */
export function isToolGroup(name: string): name is ToolGroup {
  return (TOOL_GROUPS as readonly string[]).includes(name) || /^mcp:[A-Za-z0-9_-]+$/.test(name);
}
