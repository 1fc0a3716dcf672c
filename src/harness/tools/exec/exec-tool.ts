/**
 * The `exec` tool: one shell command in the workspace, checked by the destructive-command guard
 * first, then run through the gateway's CommandRunner (scrubbed environment, own process group,
 * timeout, capped output). The composition root registers it only when `tools.exec.enabled`.
 */
import path from "node:path";
import { z } from "zod";
import { type CommandGuardObserver, type CommandVerdict, checkCommand } from "../command-guard.js";
import { ToolError } from "../tool-error.js";
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import { untrustedBlock } from "../untrusted.js";
import type { CommandRunner } from "./command-runner.js";
import { DEFAULT_EXEC_TIMEOUT_MS } from "./run-command.js";
import { ExecError } from "./exec-error.js";
import type { ExecApprovals } from "./exec-approvals.js";
import type { SandboxDecision } from "./sandbox-choice.js";
import type { CommandResult } from "./types.js";

/** What the `exec` tool runs commands with; the composition root fills it from the config. */
export interface ExecToolOptions {
  /** The gateway's one runner: shutdown calls its killAll. */
  runner: Pick<CommandRunner, "run">;
  /** The gateway's environment, scrubbed per command to PATH, HOME, LANG, TZ and `passEnv`. */
  env: Readonly<Record<string, string | undefined>>;
  /** Further variable names passed through (config `tools.exec.env`). Default none. */
  passEnv?: readonly string[];
  /** Time one command may run before its process group is killed. Default 60_000. */
  timeoutMs?: number;
  /** Characters of a command's output kept (head and tail). Default runCommand's (16_000). */
  maxOutputChars?: number;
  /**
   * Which sandbox applies (chooseSandbox, decided once by the caller and cached). "unavailable"
   * refuses every command with its reason. Default: unsandboxed.
   */
  sandbox?: () => Promise<SandboxDecision>;
  /** Network inside the bwrap sandbox (config `tools.exec.network`). Default false. */
  network?: boolean;
  /** Folders hidden inside the bwrap sandbox (the real home, the gateway's home). Default none. */
  hide?: readonly string[];
  /**
   * With `tools.exec.approval: ask`: where a flagged command waits for its person's `/approve`.
   * Default none: a flagged command is refused with the guard's reason.
   */
  approvals?: ExecApprovals;
  /** Told of each guard verdict (the hooks capability's record of the built-in guard). Default none. */
  onGuard?: CommandGuardObserver | undefined;
}

const execParameters = z.strictObject({
  command: z.string().min(1).describe("The shell command line, run with /bin/sh -c"),
  cwd: z
    .string()
    .optional()
    .describe("Folder to run in, relative to the workspace root (default: the workspace root)"),
});

/**
 * The `exec` tool. A command the guard blocks is not run: the result is an error carrying the
 * guard's reason, or, with `approvals` in a turn that has a sender, a request for their approval
 * (exec-approvals.ts). A cwd outside the workspace or missing is a ToolError; a non-zero exit, a
 * timeout or an abort is a result whose first line says how the command ended.
 */
export function execTool(options: ExecToolOptions): Tool<typeof execParameters> {
  return {
    name: "exec",
    groups: ["exec"],
    description:
      "Run one shell command (/bin/sh -c) in the workspace and get its exit status and output " +
      "(stdout and stderr together, long output cut in the middle). The environment holds only " +
      "PATH, HOME, LANG, TZ and configured names; no credentials. Commands that delete outside " +
      "the workspace, force-push, format disks and the like are refused with the reason" +
      (options.approvals
        ? ", or held for the person's approval: relay the request, they answer /approve or /deny."
        : "."),
    parameters: execParameters,
    async run(args, ctx) {
      const cwd = path.resolve(ctx.workspaceDir, args.cwd ?? ".");
      const started = performance.now();
      const verdict = checkCommand(args.command, {
        workspaceDir: ctx.workspaceDir,
        homeDir: options.env.HOME ?? ctx.workspaceDir,
        cwd,
      });
      options.onGuard?.(verdict, performance.now() - started);
      if (verdict.type === "block") return flagged(options, args.command, cwd, verdict, ctx);
      return execCommand(options, {
        command: args.command,
        cwd,
        workspaceDir: ctx.workspaceDir,
        signal: ctx.signal,
      });
    },
  };
}

/**
 * Runs one command the guard let through (or a person approved) the way the tool does: in the
 * sandbox that applies, through the runner, the result formatted. Throws ToolError when the
 * sandbox is required but unavailable, or the cwd is outside the workspace or missing.
 */
export async function execCommand(
  options: ExecToolOptions,
  run: { command: string; cwd: string; workspaceDir: string; signal: AbortSignal },
): Promise<ToolOutput> {
  const sandbox = await options.sandbox?.();
  if (sandbox?.type === "unavailable") throw new ToolError("failed", `not run: ${sandbox.why}`);
  let result: CommandResult;
  try {
    result = await options.runner.run({
      command: run.command,
      workspaceDir: run.workspaceDir,
      cwd: run.cwd,
      env: options.env,
      passEnv: options.passEnv ?? [],
      signal: run.signal,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.maxOutputChars !== undefined ? { maxOutputChars: options.maxOutputChars } : {}),
      ...(sandbox?.type === "bwrap"
        ? {
            sandbox: {
              bwrapPath: sandbox.bwrapPath,
              network: options.network ?? false,
              hide: options.hide ?? [],
            },
          }
        : {}),
    });
  } catch (err) {
    throw toToolError(err);
  }
  return {
    content: formatResult(result, options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS, run.command),
    isError: result.exitCode !== 0,
  };
}

/**
 * A command the guard flagged: refused with the guard's reason, or, with approval by asking,
 * filed and not run now: in an assignment's run as a question to its owner (the run pauses), in
 * a chat turn (it has a sender) for that sender's `/approve`.
 */
function flagged(
  options: ExecToolOptions,
  command: string,
  cwd: string,
  verdict: Extract<CommandVerdict, { type: "block" }>,
  ctx: ToolContext,
): ToolOutput {
  const approvals = options.approvals;
  const senderId = ctx.asker?.senderId;
  // The reason names the rule and the safer alternative in one paragraph.
  if (approvals === undefined) return { content: verdict.reason, isError: true };
  if (ctx.trigger === "assignment" && ctx.toolCallId !== undefined) {
    // The owner is asked like request_approval asks: the run pauses, their answer decides.
    approvals.request({
      sessionKey: ctx.sessionKey,
      senderId: null,
      toolCallId: ctx.toolCallId,
      command,
      cwd,
      rule: verdict.rule,
    });
    return {
      content: `Approval needed: run \`${command}\`? The command guard flagged it (${verdict.rule}).\nReply yes to run it once as it is, or no.`,
      requiresHuman: true,
    };
  }
  if (senderId === undefined)
    return {
      content: `${verdict.reason}
(Not asked: no person takes part in this run to approve it.)`,
      isError: true,
    };
  const request = approvals.request({
    sessionKey: ctx.sessionKey,
    senderId,
    command,
    cwd,
    rule: verdict.rule,
  });
  return {
    content:
      `Not run yet: the command guard flagged it (${verdict.rule}) and needs the person's approval. ` +
      `Tell them what the command does and ask them to reply \`/approve ${request.id}\` (in Slack: \`approve ${request.id}\`) to run it once exactly as it is, ` +
      `or \`/deny ${request.id}\`; the approval expires in ${approvals.ttlMinutes} min. ` +
      `Do not run it another way meanwhile.\n${verdict.reason}`,
    isError: false,
  };
}

/**
 * The first line says how the command ended; the output follows inside an untrusted block
 * named `exec <command>` (the command cut to 80 characters), since it came from outside.
 */
export function formatResult(result: CommandResult, timeoutMs: number, command = ""): string {
  let status: string;
  if (result.timedOut) status = `timed out after ${timeoutMs} ms; its processes were killed`;
  else if (result.aborted) status = "stopped (the turn was aborted); its processes were killed";
  else if (result.signal !== null) status = `killed by ${result.signal}`;
  else status = `exit code ${result.exitCode ?? "unknown"}`;
  const output = result.output === "" ? "(no output)" : result.output;
  return `${status}\n${untrustedBlock(`exec ${shorten(command)}`, output).text}`;
}

/** A command on one line, at most 80 characters. */
function shorten(command: string): string {
  const line = command.replace(/\s+/g, " ").trim();
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`;
}

function toToolError(err: unknown): unknown {
  if (!(err instanceof ExecError)) return err;
  if (err.kind === "path_outside_workspace")
    return new ToolError("path_outside_workspace", err.message, { cause: err });
  if (err.kind === "cwd_not_found") return new ToolError("not_found", err.message, { cause: err });
  return new ToolError("failed", err.message, { cause: err });
}
