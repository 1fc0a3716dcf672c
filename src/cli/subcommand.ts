/**
 * What the owner's subcommands (`cron`, `task`, `learnings`) share: bad input is one line
 * `switchyard <name>: <what is wrong>` and exit 2, anything else is thrown on (exit 1).
 */

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
