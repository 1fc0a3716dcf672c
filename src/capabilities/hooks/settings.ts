/**
 * `hooks` in the configuration: programs run at fixed points of a turn (hook-runner.ts decides
 * from their exit code). This is the settings fragment (config/schema.ts places it at `hooks`)
 * and the start-up check of the commands (the hooks module turns its problems into a
 * ConfigError).
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { isToolGroup } from "../../harness/tools/tool-groups.js";
import { section } from "../../util/zod-sections.js";

/** Default `timeoutMs` of one hook. */
export const DEFAULT_HOOK_TIMEOUT_MS = 5_000;
/** Longest `timeoutMs` accepted: a hook holds up the turn it runs in. */
export const MAX_HOOK_TIMEOUT_MS = 600_000;

/** The points of a turn a hook can run at. */
export const HOOK_EVENTS = [
  "beforeMessage",
  "beforeToolCall",
  "afterToolCall",
  "beforeStop",
  "afterReply",
] as const;

/** One of HOOK_EVENTS. */
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** A `tools` entry: a tool name, `group:<group>` (mcp:<server> included) or `mcp:*` (every MCP tool). */
const toolRule = z.string().superRefine((rule, ctx) => {
  if (rule === "mcp:*" || rule === "") {
    if (rule === "")
      ctx.addIssue({ code: "custom", message: "is empty (a tool name, group:<name> or mcp:*)" });
    return;
  }
  if (rule.startsWith("group:") && !isToolGroup(rule.slice("group:".length)))
    ctx.addIssue({
      code: "custom",
      message: `unknown tool group "${rule.slice("group:".length)}" (known: fs, fs-write, memory, schedule, assignment, exec, web, mcp:<server>)`,
    });
});

const hookFields = {
  /** The program: a path (relative to the workspace, or absolute) or a bare name looked up on PATH. */
  command: z.string().min(1),
  /** Arguments passed as they are (no shell). Default none. */
  args: z.array(z.string()).default([]),
  /** Time it may run before its process group is stopped (then: a failure). Default 5000. */
  timeoutMs: z.number().int().min(1).max(MAX_HOOK_TIMEOUT_MS).default(DEFAULT_HOOK_TIMEOUT_MS),
};

const plainHook = z.strictObject(hookFields);
/** beforeToolCall / afterToolCall entries may name the tools they apply to. */
const toolHook = z.strictObject({
  ...hookFields,
  /** Tool names, `group:<name>` or `mcp:*`; absent: every tool. */
  tools: z.array(toolRule).optional(),
});
/** afterReply entries may run without delaying anything. */
const replyHook = z.strictObject({
  ...hookFields,
  /** Run without waiting for it (delivery is never delayed). Default false. */
  async: z.boolean().default(false),
});

/** A list that YAML null (every entry commented out) leaves empty. */
function hookList<T extends z.ZodType>(entry: T) {
  return z.preprocess((value) => value ?? [], z.array(entry));
}

/**
 * `hooks`: per event, the programs run in order. Each gets one JSON object on stdin; exit 0
 * allows (stdout, if any, is a note for the model), 2 blocks (stderr is the reason), anything
 * else fails closed before and open after (hook-runner.ts).
 */
export const hookSettings = section({
  beforeMessage: hookList(plainHook),
  beforeToolCall: hookList(toolHook),
  afterToolCall: hookList(toolHook),
  beforeStop: hookList(plainHook),
  afterReply: hookList(replyHook),
});

/** The parsed `hooks` section. */
export type HookSettings = z.output<typeof hookSettings>;
/** One parsed hook entry of any event (`tools` and `async` only where the event allows them). */
export type HookEntry = z.output<typeof toolHook> & { async?: boolean };

/**
 * Whether a hook with `tools` applies to a call of tool `name` in `groups` (TOOL_CATALOG's, or
 * `mcp:<server>` for an MCP tool). No `tools`: every tool.
 */
export function hookAppliesToTool(
  tools: readonly string[] | undefined,
  name: string,
  groups: readonly string[],
): boolean {
  if (tools === undefined) return true;
  return tools.some((rule) => {
    if (rule === "mcp:*") return groups.some((g) => g.startsWith("mcp:"));
    if (rule.startsWith("group:")) return groups.includes(rule.slice("group:".length));
    return rule === name;
  });
}

/**
 * Where `command` is run from: a path (it holds a `/`) resolved against `workspaceDir`; a bare
 * name as it is (the shell finds it on PATH).
 */
export function resolveHookCommand(command: string, workspaceDir: string): string {
  return command.includes("/") ? path.resolve(workspaceDir, command) : command;
}

/**
 * Problems with the hook commands, one line each naming `hooks.<event>[i].command`: a path
 * (relative to `workspaceDir`) or a bare name (looked up on `env.PATH`) that is no file, or a
 * file that is not executable. Empty when every command can run. Never throws.
 */
export async function checkHookCommands(
  settings: HookSettings,
  workspaceDir: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string[]> {
  const problems: string[] = [];
  for (const event of HOOK_EVENTS) {
    for (const [i, hook] of settings[event].entries()) {
      const problem = await commandProblem(hook.command, workspaceDir, env.PATH ?? "");
      if (problem) problems.push(`hooks.${event}[${i}].command: ${problem}`);
    }
  }
  return problems;
}

/** Why `command` cannot run, or undefined when it can. */
async function commandProblem(
  command: string,
  workspaceDir: string,
  pathList: string,
): Promise<string | undefined> {
  if (command.includes("/")) {
    const file = resolveHookCommand(command, workspaceDir);
    const shown = path.isAbsolute(command) ? command : `${command} (${file})`;
    switch (await executable(file)) {
      case "ok":
        return undefined;
      case "missing":
        return `${shown} does not exist`;
      case "not-file":
        return `${shown} is not a file`;
      case "not-executable":
        return `${shown} is not executable (chmod +x it)`;
    }
  }
  for (const dir of pathList.split(path.delimiter)) {
    if (dir === "") continue;
    if ((await executable(path.join(dir, command))) === "ok") return undefined;
  }
  return `${command} was not found on PATH`;
}

async function executable(file: string): Promise<"ok" | "missing" | "not-file" | "not-executable"> {
  try {
    if (!(await stat(file)).isFile()) return "not-file";
  } catch {
    return "missing";
  }
  try {
    await access(file, constants.X_OK);
    return "ok";
  } catch {
    return "not-executable";
  }
}
