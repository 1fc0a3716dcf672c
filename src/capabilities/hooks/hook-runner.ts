/**
 * Runs one configured hook program and turns how it ended into a verdict: exit 0 allows (its
 * stdout is a note, or for beforeMessage possibly a reply), exit 2 blocks with its stderr, and
 * anything else fails closed for `before*` events and open for `after*` ones. The program runs
 * through the exec tool's CommandRunner: scrubbed environment, own process group stopped on
 * timeout or abort, output capped.
 */
import type { CommandRunner } from "../../harness/tools/exec/command-runner.js";
import { runCommand } from "../../harness/tools/exec/run-command.js";
import type { CommandResult, RunCommandOptions } from "../../harness/tools/exec/types.js";
import { type Clock, systemClock } from "../../util/clock.js";
import { type HookEntry, type HookEvent, resolveHookCommand } from "./settings.js";

/** Characters of a hook's stdout and of its stderr kept (head and tail around a marker). */
export const HOOK_OUTPUT_MAX_CHARS = 16 * 1024;
/** The exit code by which a hook blocks. */
export const HOOK_BLOCK_EXIT_CODE = 2;

/** What the hook reads on stdin: one JSON object (fields absent where the event has none). */
export interface HookInput {
  event: HookEvent;
  sessionKey: string;
  channel: string;
  /** Who sent the message the turn answers (absent for heartbeat and cron turns). */
  senderId?: string;
  /** What started the turn: "message", "heartbeat", "cron", "assignment", … */
  trigger: string;
  /** beforeMessage: the incoming text. */
  message?: string;
  /** beforeToolCall / afterToolCall: the call. */
  tool?: { name: string; arguments: unknown };
  /** afterToolCall: what the tool returned. */
  result?: { text: string; isError: boolean };
  /** beforeStop / afterReply: the answer. */
  reply?: string;
  /** The assignment's work items, when the turn belongs to one. */
  workItems?: { done: number; total: number };
}

/**
 * How a hook run ended, for the caller to act on. Every variant carries `durationMs` (spawn to
 * verdict, for metrics).
 * - `allow`: exit 0. `note`: its trimmed stdout when not empty (add it to the model's
 *   context); absent when silent. `invalidJson`: a beforeMessage hook printed something that
 *   looks like JSON but is no `{"reply": "…"}`; allowed, the caller logs it once.
 * - `reply`: a beforeMessage hook printed `{"reply": "…"}`: answer with it, no model call.
 * - `block`: exit 2 (`failed` false, `reason` its stderr), or a failure of a `before*` hook
 *   (`failed` true, `reason` "hook <command> failed: <why>"). For an afterToolCall hook a block
 *   means the reason goes to the model with the result (the tool already ran).
 * - `ignored`: an `after*` hook failed (fail open); `reason` is for the log only.
 */
export type HookVerdict =
  | { type: "allow"; note?: string; invalidJson?: string; durationMs: number }
  | { type: "reply"; text: string; durationMs: number }
  | { type: "block"; reason: string; failed: boolean; durationMs: number }
  | { type: "ignored"; reason: string; durationMs: number };

/** What a HookRunner is built with. */
export interface HookRunnerOptions {
  /** Absolute path of the workspace: relative commands resolve against it and run in it. */
  workspaceDir: string;
  /** The environment scrubbed for the hook (as for `exec`: PATH, HOME, LANG, TZ, `passEnv`). */
  env: Readonly<Record<string, string | undefined>>;
  /** Further variable names let through (as `tools.exec.env`). Default none. */
  passEnv?: readonly string[];
  /** Runs the program, so shutdown's killAll stops hooks too. Default: runCommand untracked. */
  commands?: Pick<CommandRunner, "run">;
  /** SIGTERM-to-SIGKILL grace when a hook is stopped. Default runCommand's (2_000). */
  killGraceMs?: number;
  /** Time source for timeouts and durations. Default systemClock. */
  clock?: Clock;
}

/** Runs hook programs for one workspace; owns nothing between runs. */
export class HookRunner {
  readonly #o: HookRunnerOptions;
  readonly #run: (options: RunCommandOptions) => Promise<CommandResult>;

  /** See HookRunnerOptions for the defaults. */
  constructor(options: HookRunnerOptions) {
    this.#o = options;
    const commands = options.commands;
    this.#run = commands ? (o) => commands.run(o) : runCommand;
  }

  /**
   * Runs `hook` for `input.event` with `input` as JSON on stdin and decides (see HookVerdict).
   * Never throws: a program that cannot be started is a failure like any other. `signal`
   * stops the program (a failure: "stopped").
   */
  async run(hook: HookEntry, input: HookInput, signal?: AbortSignal): Promise<HookVerdict> {
    const clock = this.#o.clock ?? systemClock;
    const started = clock.now();
    let result: CommandResult;
    try {
      result = await this.#run({
        command: commandLine(resolveHookCommand(hook.command, this.#o.workspaceDir), hook.args),
        workspaceDir: this.#o.workspaceDir,
        env: this.#o.env,
        passEnv: this.#o.passEnv ?? [],
        timeoutMs: hook.timeoutMs,
        maxOutputChars: HOOK_OUTPUT_MAX_CHARS,
        stdin: `${JSON.stringify(input)}\n`,
        splitOutput: true,
        ...(signal && { signal }),
        ...(this.#o.killGraceMs !== undefined && { killGraceMs: this.#o.killGraceMs }),
        clock,
      });
    } catch (err) {
      return failure(
        input.event,
        hook,
        err instanceof Error ? err.message : String(err),
        clock.now() - started,
      );
    }
    const durationMs = result.durationMs;
    const stdout = result.streams?.stdout.text ?? "";
    const stderr = result.streams?.stderr.text ?? "";
    if (result.timedOut)
      return failure(input.event, hook, `timed out after ${hook.timeoutMs} ms`, durationMs);
    if (result.aborted) return failure(input.event, hook, "stopped", durationMs);
    if (result.exitCode === 0) return allowed(input.event, stdout.trim(), durationMs);
    if (result.exitCode === HOOK_BLOCK_EXIT_CODE) {
      const reason = stderr.trim() || `hook ${hook.command} blocked this (exit 2, no reason given)`;
      return { type: "block", reason, failed: false, durationMs };
    }
    const why =
      result.exitCode === null ? `ended by ${result.signal ?? "a signal"}` : `exit ${result.exitCode}`;
    const firstLine = stderr.trim().split("\n", 1)[0] ?? "";
    return failure(input.event, hook, firstLine ? `${why}: ${firstLine}` : why, durationMs);
  }
}

/** Whether a failure of a hook at `event` blocks (before*: fail closed) or is ignored (after*). */
export function failsClosed(event: HookEvent): boolean {
  return event.startsWith("before");
}

function failure(event: HookEvent, hook: HookEntry, why: string, durationMs: number): HookVerdict {
  const reason = `hook ${hook.command} failed: ${why}`;
  return failsClosed(event)
    ? { type: "block", reason, failed: true, durationMs }
    : { type: "ignored", reason, durationMs };
}

/** Exit 0: silent, a note, or for beforeMessage a reply (stdout `{"reply": "…"}`). */
function allowed(event: HookEvent, out: string, durationMs: number): HookVerdict {
  if (out === "") return { type: "allow", durationMs };
  if (event !== "beforeMessage" || !out.startsWith("{")) return { type: "allow", note: out, durationMs };
  let parsed: unknown;
  try {
    parsed = JSON.parse(out);
  } catch {
    return { type: "allow", invalidJson: out, durationMs };
  }
  const reply =
    typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>).reply : undefined;
  if (typeof reply === "string" && reply.trim() !== "") return { type: "reply", text: reply, durationMs };
  return { type: "allow", invalidJson: out, durationMs };
}

/** `exec <program> <args…>` for /bin/sh, every word single-quoted (no expansion of any kind). */
function commandLine(program: string, args: readonly string[]): string {
  return ["exec", ...[program, ...args].map(quote)].join(" ");
}

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
