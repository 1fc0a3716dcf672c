/**
 * What the owner's subcommands (`cron`, `task`, `learnings`) share: bad input is one line
 * `switchyard <name>: <what is wrong>` and exit 2, anything else is thrown on (exit 1); the
 * argument parsing; the config, home and workspace they work on.
 */

import { resolveHome, workspaceDirOf } from "../config/home.js";
import { loadConfig } from "../config/load.js";

/** A usage problem: exit 2. */
export class UsageError extends Error {}

/**
 * Runs `body`; a UsageError or one of `inputErrors` (the domain's bad-input errors) becomes one
 * line on stderr and exit code 2.
 */
export async function runSubcommand(
  name: string,
  body: () => Promise<number>,
  inputErrors: ReadonlyArray<abstract new (...args: never[]) => Error>,
): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof UsageError || inputErrors.some((E) => err instanceof E)) {
      process.stderr.write(`switchyard ${name}: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
}

/** `parse()` (node:util parseArgs), its complaint turned into a UsageError followed by `usage`. */
export function parseOrUsage<T>(parse: () => T, usage: string): T {
  try {
    return parse();
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${usage}`);
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
