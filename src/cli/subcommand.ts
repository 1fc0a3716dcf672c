/**
 * The one rule for every command's exit code: bad usage or input (a bad option, an unknown id, a
 * bad configuration or folder) is one line `switchyard <name>: <what is wrong>` and exit 2;
 * anything else is one line and exit 1. Also what the owner's subcommands (`cron`, `task`,
 * `learnings`) share: the argument parsing; the config, home and workspace they work on.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";

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

/**
 * Parses `<command> list [flags]`, a command whose one action is `list`: the flags' values. A
 * bad flag, a missing or other action, or an argument after `list` is a UsageError (exit 2).
 */
export function parseListAction<const O extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: O,
  usageLine: string,
): ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>["values"] {
  const { values, positionals } = parseOrUsage(
    () => parseArgs({ args: argv, options, allowPositionals: true, strict: true }),
    usageLine,
  );
  const [action, extra] = positionals;
  if (action !== "list")
    throw new UsageError(action ? `unknown action "${action}"` : "missing action", usageLine);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, usageLine);
  return values;
}

/**
 * The configuration, its file, the home folder and the workspace, as `--config` and `--home` name
 * them. `readOnly` (default false): the command only reads, so it goes on without the `${VAR}`s
 * this shell lacks, naming them in one line on stderr (see {@link noteUnresolved}).
 */
export function subcommandHome(
  name: string,
  v: { config?: string | undefined; home?: string | undefined },
  readOnly = false,
) {
  const { config, file, unresolved } = loadConfig({
    ...(v.config ? { path: v.config } : {}),
    cwd: process.cwd(),
    env: process.env,
    lenientEnv: readOnly,
  });
  noteUnresolved(name, unresolved);
  const home = resolveHome(v.home, process.env, process.cwd());
  return { config, file, home, workspaceDir: workspaceDirOf(config, home) };
}

/**
 * One line on stderr naming the configuration's `${VAR}`s this shell lacks, which a read-only
 * command went on without (the gateway's service may have them: an environment file). Nothing
 * when there are none.
 */
export function noteUnresolved(name: string, unresolved: readonly string[]): void {
  if (unresolved.length === 0) return;
  process.stderr.write(
    `switchyard ${name}: not set in this shell: ${unresolved.join(", ")}; going on without ${unresolved.length === 1 ? "it" : "them"}\n`,
  );
}
