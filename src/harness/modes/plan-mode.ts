/**
 * The rules of plan mode, pure but for resolving a path: which tools it offers (those that only
 * look, or only talk to the owner, plus write_file to the session's PLAN.md), where that file is
 * (the assignment's project folder, else the workspace root), and the one line a refused call
 * gets. mode-tools.ts applies them to a turn's tools; mode-context.ts tells the model.
 */
import path from "node:path";
import { realpathSync } from "node:fs";
import { isAssignmentSession } from "../assignments/assignments.js";
import { projectDir } from "../assignments/project-files.js";
import { resolveInWorkspace } from "../tools/file-tools.js";
import type { ToolGroup } from "../tools/tool-groups.js";
import { READ_ONLY_TOOL_NAMES } from "../tools/read-only-tools.js";

/** The plan file's name. */
export const PLAN_FILE = "PLAN.md";

/** The one tool plan mode offers that writes, and only to the plan file. */
export const PLAN_WRITE_TOOL = "write_file";

/**
 * The built-in tools plan mode offers besides write_file: they read (READ_ONLY_TOOL_NAMES: files,
 * memory, skills, schedules, work items, the web) or talk to the owner and end the run (ask_owner,
 * request_approval — how an assignment gets its plan approved —, end_run, heartbeat_ok); none
 * changes files, memory, schedules or work items. exec, MCP tools and every other tool are
 * neither offered nor run.
 */
export const PLAN_MODE_TOOLS: ReadonlySet<string> = new Set([
  ...READ_ONLY_TOOL_NAMES,
  "ask_owner",
  "request_approval",
  "end_run",
  "heartbeat_ok",
]);

/** The plan file of a session, relative to the workspace: `projects/<id>/PLAN.md` for an assignment, else `PLAN.md`. */
export function planFilePath(sessionKey: string): string {
  if (!isAssignmentSession(sessionKey)) return PLAN_FILE;
  const id = sessionKey.slice(sessionKey.lastIndexOf(":") + 1);
  return `${projectDir(id)}/${PLAN_FILE}`;
}

/**
 * Whether plan mode offers a tool: one of PLAN_MODE_TOOLS or write_file, and not of a group that
 * runs things elsewhere (exec, an MCP server's), whatever its name.
 */
export function offeredInPlanMode(name: string, groups: readonly ToolGroup[]): boolean {
  if (groups.some((g) => g === "exec" || g.startsWith("mcp:"))) return false;
  return name === PLAN_WRITE_TOOL || PLAN_MODE_TOOLS.has(name);
}

/**
 * Whether `relPath` (a write_file `path`) is the plan file itself, resolved as the file tools
 * resolve it: the same real path as `planPath` in the workspace, reached without a symbolic link
 * (a PLAN.md linking to another file is not the plan file). A path the file tools refuse is not.
 */
export function isPlanFileWrite(workspaceDir: string, relPath: string, planPath: string): boolean {
  try {
    const target = resolveInWorkspace(workspaceDir, relPath);
    return target === path.join(realpathSync.native(workspaceDir), planPath);
  } catch {
    return false;
  }
}

/**
 * The result text of a call plan mode refused (one line): what was not run, the rule, and how
 * the mode ends (`/execute`, or for an assignment the owner's approval of the plan).
 */
export function planModeRefusal(what: string, sessionKey: string): string {
  const leave = isAssignmentSession(sessionKey)
    ? "the owner approving the plan (request_approval) leaves plan mode"
    : "/execute leaves plan mode";
  return `${what} was not run — plan mode: only read-only tools and write_file to ${planFilePath(sessionKey)}; ${leave}`;
}
