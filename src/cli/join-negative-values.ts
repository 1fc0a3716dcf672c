/**
 * `--port -1`: node:util parseArgs reads `-1` as a short option and fails with "argument is
 * ambiguous". A person typing a negative number means a value; joined as `--port=-1`, it reaches
 * the option's own check, which then says what is expected.
 */

/** Looks like a negative number: `-1`, `-0.5`, `-.5`, `-1e3`. */
const NEGATIVE_NUMBER = /^-(?:\d|\.\d)/;

/**
 * `argv` with every `--name <negative number>` pair joined into `--name=<negative number>`.
 * Arguments after `--` are left alone; so is `--name=value`. For a boolean option the joined
 * form is an error, as the separate one was.
 */
export function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (arg.startsWith("--") && !arg.includes("=") && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}
