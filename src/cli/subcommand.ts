/**
 * The one rule for every command's exit code: bad usage or input (a bad option, an unknown id, a
 * bad configuration or folder) is one line `switchyard <name>: <what is wrong>` and exit 2;
 * anything else is one line and exit 1. Also what the owner's subcommands (`cron`, `task`,
 * `learnings`) share: the argument parsing; the config, home and workspace they work on.
 */

import { FolderError, resolveHome, workspaceDirOf } from "../config/home.js";
import { loadConfig } from "../config/load.js";
import { ConfigError } from "../util/config-error.js";
import { plainArgsError } from "./parse-args-error.js";

/** A usage problem: exit 2; `usage` is the command's own usage line, printed after the message. */
export class UsageError extends Error {
  readonly code = "usage";
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * An id, name, key or code that names nothing (`task show t-nope`, `pairing approve telegram
 * XYZ`): bad input, exit 2. The message names `id` and says where the known ones are listed.
 */
export class UnknownIdError extends Error {
  readonly code = "unknown_id";
  constructor(
    readonly id: string,
    message: string,
  ) {
    super(message);
    this.name = "UnknownIdError";
  }
}

/** An error class a command declares as bad input (exit 2). */
export type InputErrorClass = abstract new (...args: never[]) => Error;

/**
 * Runs `body` and resolves with its exit code. A UsageError, an UnknownIdError, a FolderError or
 * one of `inputErrors` (the domain's bad-input errors) becomes one line on stderr and exit 2; a
 * ConfigError prints its issues and exits 2; anything else is one line and exit 1 (no stack).
 */
export async function runSubcommand(
  name: string | undefined,
  body: () => Promise<number>,
  inputErrors: ReadonlyArray<InputErrorClass> = [],
): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.describe()}\n`);
      return 2;
    }
    const prefix = name ? `switchyard ${name}` : "switchyard";
    const message = err instanceof Error ? err.message : String(err);
    const input =
      err instanceof UsageError ||
      err instanceof UnknownIdError ||
      err instanceof FolderError ||
      inputErrors.some((E) => err instanceof E);
    process.stderr.write(`${prefix}: ${message}\n`);
    if (err instanceof UsageError && err.usage) process.stderr.write(`${err.usage}\n`);
    return input ? 2 : 1;
  }
}

/**
 * `parse()` (node:util parseArgs), its complaint turned into a UsageError: one plain line (see
 * plainArgsError), then `usageLine`, the command's own usage line.
 */
export function parseOrUsage<T>(parse: () => T, usageLine: string): T {
  try {
    return parse();
  } catch (err) {
    throw new UsageError(plainArgsError(err), usageLine);
  }
}

/** The configuration, its file, the home folder and the workspace, as `--config` and `--home` name them. */
export function subcommandHome(v: { config?: string | undefined; home?: string | undefined }) {
  const { config, file } = loadConfig({
    ...(v.config ? { path: v.config } : {}),
    cwd: process.cwd(),
    env: process.env,
  });
  const home = resolveHome(v.home, process.env, process.cwd());
  return { config, file, home, workspaceDir: workspaceDirOf(config, home) };
}
