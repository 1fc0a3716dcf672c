/**
 * Contracts of the command runner the `exec` tool wraps: what one command is run with and what
 * comes back. Nothing here runs; see run-command.ts and command-runner.ts.
 */
import type { Clock } from "../../../util/clock.js";
import type { CappedText } from "../output-cap.js";

/** One command to run with `/bin/sh -c`, confined to a workspace. */
export interface RunCommandOptions {
  /** The shell command line, run as `/bin/sh -c <command>`. */
  command: string;
  /** Absolute path of the agent workspace; the command runs inside it. */
  workspaceDir: string;
  /**
   * Folder to run in: absolute, or relative to `workspaceDir`. After symlinks are resolved it
   * must be `workspaceDir` or a folder under it (ExecError "path_outside_workspace").
   * Default: `workspaceDir`.
   */
  cwd?: string;
  /**
   * The environment scrubbed to make the command's: only PATH, HOME, LANG, TZ and the
   * `passEnv` names are taken from it. Default `process.env` (the composition root should pass
   * the gateway's own).
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Further variable names let through (config `tools.exec.env`). A name that looks like a
   * credential or belongs to the gateway (exec-env.ts, SECRET_NAME_RULES) is refused with
   * ExecError "env_name_secret". Default none.
   */
  passEnv?: readonly string[];
  /** Time the command may run before its process group is stopped. Default 60_000. */
  timeoutMs?: number;
  /** Aborting it stops the command's process group (/stop, shutdown); the result says `aborted`. */
  signal?: AbortSignal;
  /**
   * Characters of `output`; longer output keeps its head and tail around a marker. Default
   * 16_000 (the tool results' DEFAULT_MAX_RESULT_CHARS); at least 200.
   */
  maxOutputChars?: number;
  /**
   * Time between SIGTERM to the process group and SIGKILL to whatever is left of it. Default
   * 2_000.
   */
  killGraceMs?: number;
  /** Time source for the timeout, the grace and `durationMs`. Default systemClock. */
  clock?: Clock;
  /**
   * Run inside a bubblewrap sandbox (sandbox.ts): the system read-only, the workspace writable,
   * a private /tmp holding HOME, no network unless `network`. Default: unsandboxed.
   */
  sandbox?: CommandSandbox;
  /**
   * Text written to the command's stdin, which is then closed (a command that does not read it
   * is not an error). Default: stdin is /dev/null.
   */
  stdin?: string;
  /**
   * Also keep stdout and stderr apart (`CommandResult.streams`), each capped head+tail at
   * `maxOutputChars` like `output`. Default false.
   */
  splitOutput?: boolean;
}

/** The bubblewrap sandbox around one command. */
export interface CommandSandbox {
  /** The bwrap binary (chooseSandbox found and probed it). */
  bwrapPath: string;
  /** Share the host's network. Default false. */
  network?: boolean;
  /** Folders covered by empty ones inside (the real home, the gateway's home); missing ones are skipped. */
  hide?: readonly string[];
}

/** How one command ended. */
export interface CommandResult {
  /** The shell's exit code; null when it was ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the shell (e.g. "SIGTERM"), or null when it exited. */
  signal: string | null;
  /** The command ran past `timeoutMs` and its process group was stopped. */
  timedOut: boolean;
  /** The `signal` option aborted it (or CommandRunner.killAll did) before it ended. */
  aborted: boolean;
  /**
   * stdout and stderr as one text, interleaved in the order their chunks arrived (as a terminal
   * shows `2>&1`), decoded as UTF-8 and capped head+tail at `maxOutputChars`.
   */
  output: string;
  /** Characters of the output left out by the cap (0 when nothing was cut). */
  truncatedChars: number;
  /** From spawn until the process group was gone and the output read. */
  durationMs: number;
  /** stdout and stderr apart, each capped at `maxOutputChars`; only with `splitOutput`. */
  streams?: { stdout: CappedText; stderr: CappedText };
}
