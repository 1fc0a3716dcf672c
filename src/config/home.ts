/**
 * The home folder (database, workspace, logs) and the agent workspace: created owner-only, and
 * checked before anything opens a file in them, so a bad `--home` is one plain line and exit 2
 * instead of a stack trace from whichever stream touched it first.
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Config } from "./schema.js";

/** Where state lives: `--home`, then SWITCHYARD_HOME, then ~/.switchyard. */
export function resolveHome(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  if (flag) return resolve(cwd, flag);
  if (env.SWITCHYARD_HOME) return resolve(cwd, env.SWITCHYARD_HOME);
  return join(homedir(), ".switchyard");
}

/** Where the agent workspace is: `agent.workspace` (relative to the home folder), else `<home>/workspace`. */
export function workspaceDirOf(config: Config, home: string): string {
  return config.agent.workspace ? resolve(home, config.agent.workspace) : join(home, "workspace");
}

/** A folder the gateway needs is not usable; `describe()` is the one line to print. */
export class FolderError extends Error {
  readonly code = "bad_folder";
  constructor(
    readonly path: string,
    readonly role: string,
    problem: string,
  ) {
    super(`${role} ${path} ${problem}`);
    this.name = "FolderError";
  }
}

/**
 * Makes sure `path` is a folder this process can write, creating it (and its parents) with
 * mode 0700 when it is missing. `role` names it in the error ("home folder", "workspace").
 * Writing is tried for real: permission bits do not stop root, a read-only file system does.
 */
export function ensureWritableFolder(path: string, role: string, hint: string): void {
  const kind = kindOf(path);
  if (kind === "other") throw new FolderError(path, role, `is a file, not a folder: ${hint}`);
  if (kind === "missing") {
    try {
      mkdirSync(path, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new FolderError(path, role, `cannot be created (${reason(err)}): ${hint}`);
    }
  }
  const probe = join(path, `.write-check-${process.pid}`);
  try {
    writeFileSync(probe, "", { mode: 0o600 });
    rmSync(probe, { force: true });
  } catch (err) {
    throw new FolderError(path, role, `is not writable (${reason(err)}): ${hint}`);
  }
}

function kindOf(path: string): "folder" | "other" | "missing" {
  try {
    return statSync(path).isDirectory() ? "folder" : "other";
  } catch {
    // ENOENT, or ENOTDIR (a parent is a file): creating it says what is wrong.
    return "missing";
  }
}

const REASONS: Readonly<Record<string, string>> = {
  ENOTDIR: "a folder on its path is a file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "read-only file system",
  ENOSPC: "the disk is full",
  EDQUOT: "disk quota exceeded",
};

function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ? (REASONS[e.code] ?? e.code) : e.message;
}
