/**
 * Runs one shell command for the agent: `/bin/sh -c` in a folder of the workspace, with a
 * scrubbed environment, in a process group of its own that is stopped (SIGTERM, then SIGKILL)
 * on timeout or abort, and when the shell exits, so nothing it forked outlives it. Output is
 * capped head+tail while it streams. The `exec` tool wraps this; CommandRunner tracks runs.
 */
import { spawn } from "node:child_process";
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";
import { systemClock } from "../../../util/clock.js";
import { DEFAULT_MAX_RESULT_CHARS, HeadTailBuffer, MIN_RESULT_CHARS } from "../output-cap.js";
import { execEnv } from "./exec-env.js";
import { ExecError } from "./exec-error.js";
import { endGroup } from "./process-group.js";
import { SANDBOX_HOME, bwrapArgs } from "./sandbox.js";
import type { CommandResult, RunCommandOptions } from "./types.js";

/** Default `timeoutMs`. */
export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;
/** Default `killGraceMs`. */
export const DEFAULT_KILL_GRACE_MS = 2_000;
/**
 * Longest wait for the output pipes to close once the group is gone: a process that left the
 * group (setsid) may still hold them; its further output is dropped.
 */
const PIPE_DRAIN_MS = 500;

/**
 * Runs `options.command` and resolves with how it ended (see CommandResult); a non-zero exit,
 * a timeout and an abort are results, not errors. The command is `/bin/sh -c <command>` in
 * `cwd`, with stdin closed (or fed `stdin`), the environment of execEnv, and its own process group (detached).
 * On timeout or abort the group gets SIGTERM and, after `killGraceMs`, SIGKILL; when the shell
 * exits, whatever is left of its group (a background `&` child) is ended the same way. Only a
 * process that leaves the group (setsid, a daemon) escapes. Resolves after the group is gone.
 *
 * Throws ExecError before starting anything when the cwd is outside the workspace or missing,
 * when a `passEnv` name is invalid or secret-looking, or when `/bin/sh` cannot be spawned; a
 * RangeError naming the option when a number is out of range. With `sandbox`, the shell runs
 * inside bwrap (sandbox.ts), HOME is SANDBOX_HOME, and the group killed is bwrap's (it holds
 * the sandboxed processes too). An already aborted `signal`
 * resolves with `aborted` without spawning.
 */
export async function runCommand(options: RunCommandOptions): Promise<CommandResult> {
  const clock = options.clock ?? systemClock;
  const timeoutMs = positiveInt("timeoutMs", options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS, 1);
  const graceMs = positiveInt("killGraceMs", options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, 0);
  const maxChars = positiveInt(
    "maxOutputChars",
    options.maxOutputChars ?? DEFAULT_MAX_RESULT_CHARS,
    MIN_RESULT_CHARS,
  );
  const workspace = await realFolder(options.workspaceDir, options.workspaceDir);
  const cwd = await resolveCwd(workspace, options.cwd);
  const env = execEnv(options.env ?? process.env, options.passEnv ?? [], workspace);
  const { signal, sandbox } = options;
  let program = "/bin/sh";
  let args = ["-c", options.command];
  if (sandbox !== undefined) {
    program = sandbox.bwrapPath;
    args = bwrapArgs({
      command: options.command,
      workspaceDir: workspace,
      cwd,
      network: sandbox.network ?? false,
      hide: await existingFolders(sandbox.hide ?? []),
    });
    env.HOME = SANDBOX_HOME;
  }
  if (signal?.aborted) return notStarted();

  const started = clock.now();
  const child = spawn(program, args, {
    cwd,
    env,
    detached: true,
    stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (options.stdin !== undefined) {
    // EPIPE when the command exits without reading it all: not an error of the run.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(options.stdin);
  }
  const output = new HeadTailBuffer(maxChars);
  const split = options.splitOutput
    ? { stdout: new HeadTailBuffer(maxChars), stderr: new HeadTailBuffer(maxChars) }
    : undefined;
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const exited = new Promise<{ code: number | null; signal: string | null } | Error>((resolve) => {
    child.once("exit", (code, sig) => resolve({ code, signal: sig }));
    child.once("error", (err) => resolve(err));
  });
  // Both are pipes (stdio above); the stdin choice only widens their type.
  const { stdout, stderr } = child as typeof child & { stdout: Readable; stderr: Readable };
  collect(stdout, output, split?.stdout);
  collect(stderr, output, split?.stderr);

  let stopped: "timeout" | "aborted" | undefined;
  let exitedYet = false;
  let ending: Promise<void> | undefined;
  const pid = child.pid;
  const endAll = (): Promise<void> => {
    ending ??= pid === undefined ? Promise.resolve() : endGroup(pid, graceMs, clock);
    return ending;
  };
  const stop = (why: "timeout" | "aborted"): void => {
    if (stopped !== undefined || exitedYet) return;
    stopped = why;
    endAll().catch(() => undefined);
  };
  const timer = clock.setTimeout(() => stop("timeout"), timeoutMs);
  const onAbort = (): void => stop("aborted");
  signal?.addEventListener("abort", onAbort, { once: true });
  const drain = new AbortController();
  try {
    const outcome = await exited;
    exitedYet = true;
    if (outcome instanceof Error) {
      throw new ExecError("spawn_failed", `could not start ${program}: ${outcome.message}`, {
        cause: outcome,
      });
    }
    // The shell is gone; a background child still in its group would outlive the command.
    await endAll();
    await Promise.race([closed, clock.sleep(PIPE_DRAIN_MS, drain.signal).catch(() => undefined)]);
    const capped = output.capped();
    return {
      exitCode: outcome.code,
      signal: outcome.signal,
      timedOut: stopped === "timeout",
      aborted: stopped === "aborted",
      output: capped.text,
      truncatedChars: capped.omittedChars,
      durationMs: clock.now() - started,
      ...(split && { streams: { stdout: split.stdout.capped(), stderr: split.stderr.capped() } }),
    };
  } finally {
    clock.clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    drain.abort();
    stdout.destroy();
    stderr.destroy();
  }
}

/**
 * Decodes a pipe as UTF-8 (a character split across chunks stays whole) into `output` and, when
 * given, into `own` (this stream alone).
 */
function collect(stream: Readable, output: HeadTailBuffer, own: HeadTailBuffer | undefined): void {
  const decoder = new StringDecoder("utf8");
  const push = (text: string): void => {
    output.push(text);
    own?.push(text);
  };
  stream.on("data", (chunk: Buffer) => push(decoder.write(chunk)));
  stream.on("end", () => push(decoder.end()));
  // A destroyed or failed pipe ends the output; the exit status still tells what happened.
  stream.on("error", () => undefined);
}

/** The working folder: `cwd` (relative to the workspace, or absolute) resolved and confined. */
async function resolveCwd(workspace: string, cwd: string | undefined): Promise<string> {
  if (cwd === undefined) return workspace;
  const real = await realFolder(path.resolve(workspace, cwd), cwd);
  const relative = path.relative(workspace, real);
  if (relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    throw new ExecError("path_outside_workspace", `the folder ${cwd} is outside the workspace ${workspace}`, {
      path: cwd,
    });
  }
  return real;
}

/** The real paths of those of `folders` that exist and are folders. */
async function existingFolders(folders: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const folder of folders) {
    try {
      const real = await realpath(folder);
      if ((await stat(real)).isDirectory()) found.push(real);
    } catch {
      // gone or unreadable: nothing to hide
    }
  }
  return found;
}

/** `folder` with symlinks resolved; ExecError "cwd_not_found" naming `shown` when it is no folder. */
async function realFolder(folder: string, shown: string): Promise<string> {
  try {
    const real = await realpath(folder);
    if ((await stat(real)).isDirectory()) return real;
  } catch (err) {
    throw new ExecError("cwd_not_found", `the folder ${shown} does not exist`, { cause: err, path: shown });
  }
  throw new ExecError("cwd_not_found", `${shown} is not a folder`, { path: shown });
}

function notStarted(): CommandResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: true,
    output: "",
    truncatedChars: 0,
    durationMs: 0,
  };
}

function positiveInt(field: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`RunCommandOptions.${field} must be an integer ≥ ${min}, got ${String(value)}`);
  }
  return value;
}
