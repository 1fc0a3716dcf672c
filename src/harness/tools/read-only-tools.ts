/**
 * The built-in tools that only look: they read files, memory, skills, schedules, work items or
 * the web, and change nothing. Plan mode offers them (modes/plan-mode.ts) and a turn may run
 * several of them at once (parallel-plan.ts). A tool source's tools are named
 * `<server>__<tool>` (never one of these), and a registered name is unique, so a name here
 * always means the built-in tool.
 */

/** Built-in tools without side effects, by name. */
export const READ_ONLY_TOOL_NAMES: ReadonlySet<string> = new Set([
  "read_file",
  "list_files",
  "memory_search",
  "memory_get",
  "skill",
  "cron_list",
  "list_wakes",
  "work_item_list",
  "web_fetch",
  "web_search",
]);
