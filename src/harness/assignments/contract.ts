/**
 * An assignment's contract: required outputs the harness checks itself, never trusting the
 * model's word — a file exists, a file contains a pattern, a command exits 0 (only when the
 * operator allows command checks). Unmet checks become a gap report the next turn reads.
 */
import { spawn } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { ContractCheck } from "../../store/repos/assignment-repo.js";
import { AssignmentInputError } from "./errors.js";

/** At most this many checks, and this long a path, pattern or command. */
const MAX_CHECKS = 20;
const MAX_FIELD = 1_000;
/** A file read for a pattern is read up to this size. */
const MAX_READ_BYTES = 4 * 1024 * 1024;

/**
 * Validates checks as given (CLI, a tool): paths relative and inside the workspace, patterns
 * that compile, commands only when `allowCommands`. Throws AssignmentInputError naming the
 * check (`contract.N.field: …`).
 */
export function validateContract(
  checks: readonly ContractCheck[],
  options: { allowCommands: boolean },
): ContractCheck[] {
  if (checks.length > MAX_CHECKS)
    throw new AssignmentInputError(`contract: at most ${MAX_CHECKS} checks (got ${checks.length})`);
  return checks.map((c, i) => {
    const at = `contract.${i}`;
    if (c.kind === "command") {
      if (!options.allowCommands)
        throw new AssignmentInputError(
          `${at}.command: command checks are off (the agent has no exec tool); set assignments.commandChecks: true to allow them`,
        );
      const command = c.command.trim();
      if (command === "" || command.length > MAX_FIELD)
        throw new AssignmentInputError(`${at}.command: expected a command of 1 to ${MAX_FIELD} characters`);
      return { kind: "command", command };
    }
    const file = workspacePath(c.path, `${at}.path`);
    if (c.kind === "file_exists") return { kind: "file_exists", path: file };
    if (c.pattern === "" || c.pattern.length > MAX_FIELD)
      throw new AssignmentInputError(`${at}.pattern: expected a pattern of 1 to ${MAX_FIELD} characters`);
    try {
      new RegExp(c.pattern, "m");
    } catch (err) {
      throw new AssignmentInputError(
        `${at}.pattern: not a valid regular expression (${(err as Error).message.split(": ").at(-1)})`,
      );
    }
    return { kind: "file_contains", path: file, pattern: c.pattern };
  });
}

/** A workspace-relative path, normalized; throws for an absolute one or one that leaves it. */
function workspacePath(p: string, field: string): string {
  const trimmed = p.trim();
  if (trimmed === "" || trimmed.length > MAX_FIELD)
    throw new AssignmentInputError(`${field}: expected a path of 1 to ${MAX_FIELD} characters`);
  if (path.isAbsolute(trimmed))
    throw new AssignmentInputError(`${field}: expected a path relative to the workspace, got "${trimmed}"`);
  const normal = path.posix.normalize(trimmed.replaceAll("\\", "/"));
  if (normal === ".." || normal.startsWith("../"))
    throw new AssignmentInputError(`${field}: "${trimmed}" is outside the workspace`);
  return normal;
}

/** What checking needs. */
export interface CheckOptions {
  workspaceDir: string;
  allowCommands: boolean;
  /** A command check is killed after this long (default 2 minutes). */
  commandTimeoutMs?: number;
  signal?: AbortSignal;
}

/** The unmet checks, one line each (empty: the contract is met). */
export async function contractGaps(checks: readonly ContractCheck[], o: CheckOptions): Promise<string[]> {
  const gaps: string[] = [];
  for (const c of checks) {
    const gap = await checkOne(c, o);
    if (gap) gaps.push(gap);
  }
  return gaps;
}

async function checkOne(c: ContractCheck, o: CheckOptions): Promise<string | undefined> {
  if (c.kind === "command") {
    if (!o.allowCommands) return `command \`${c.command}\`: not run (command checks are off)`;
    return runCheckCommand(c.command, o);
  }
  const abs = path.resolve(o.workspaceDir, c.path);
  const info = await stat(abs).catch(() => undefined);
  if (!info?.isFile()) return `${c.path}: the file does not exist yet`;
  if (c.kind === "file_exists") return undefined;
  if (info.size > MAX_READ_BYTES) return `${c.path}: too large to check for /${c.pattern}/ (over 4 MB)`;
  const text = await readFile(abs, "utf8").catch(() => "");
  return new RegExp(c.pattern, "m").test(text) ? undefined : `${c.path}: does not contain /${c.pattern}/ yet`;
}

function runCheckCommand(command: string, o: CheckOptions): Promise<string | undefined> {
  return new Promise((resolve) => {
    // Its own process group, so a timeout ends everything the command started, not only the shell.
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: o.workspaceDir,
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 16_384) stderr += chunk.toString("utf8");
    });
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, o.commandTimeoutMs ?? 120_000);
    o.signal?.addEventListener("abort", kill, { once: true });
    const done = (gap: string | undefined) => {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", kill);
      resolve(gap);
    };
    child.on("error", (err) => done(`command \`${command}\`: ${err.message}`));
    child.on("close", (code) => {
      if (code === 0 && !timedOut) return done(undefined);
      const tail = stderr.trim().split("\n").at(-1)?.slice(0, 200) ?? "";
      const why = timedOut ? "timed out" : code === null ? "killed" : `exit ${code}`;
      done(`command \`${command}\`: ${why}${tail ? ` (${tail})` : ""}`);
    });
  });
}

/** The gap report the model reads (empty string when there are no gaps). */
export function gapReport(gaps: readonly string[]): string {
  if (gaps.length === 0) return "";
  return `The contract is not met yet (checked by the gateway):\n${gaps.map((g) => `- ${g}`).join("\n")}`;
}

/** The workspace paths the checks name (their outputs). */
export function contractPaths(checks: readonly ContractCheck[]): string[] {
  return checks.flatMap((c) => ("path" in c ? [c.path] : []));
}

/** One line per check, for `task show` and the handoff. */
export function describeCheck(c: ContractCheck): string {
  if (c.kind === "file_exists") return `file ${c.path} exists`;
  if (c.kind === "file_contains") return `file ${c.path} contains /${c.pattern}/`;
  return `command \`${c.command}\` exits 0`;
}
