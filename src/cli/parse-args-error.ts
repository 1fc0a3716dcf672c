/**
 * node:util parseArgs complains in its own words ("Unknown option '--x'. To specify a positional
 * argument starting with a '-', place it at the end of the command after '--' …"). The user sees
 * one plain line instead, chosen by one table of the error's code and message.
 */

/** One way parseArgs fails: its error code, a pattern over its message, and the plain line. */
interface ArgsErrorPattern {
  code: string;
  /** The first capture group is the option or argument the message names. */
  match: RegExp;
  plain: (name: string) => string;
}

const PATTERNS: readonly ArgsErrorPattern[] = [
  {
    code: "ERR_PARSE_ARGS_UNKNOWN_OPTION",
    match: /Unknown option '([^']+)'/,
    plain: (o) => `unknown option '${o}'`,
  },
  {
    code: "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
    match: /Option '(-[^' ]+)[^']*' argument missing/,
    plain: (o) => `option '${o}' needs a value`,
  },
  {
    code: "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
    match: /Option '(-[^' ]+)[^']*' argument is ambiguous/,
    plain: (o) => `option '${o}' needs a value (for one that starts with '-', write ${o}=VALUE)`,
  },
  {
    code: "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
    match: /Option '(-[^' ]+)[^']*' does not take an argument/,
    plain: (o) => `option '${o}' takes no value`,
  },
  {
    code: "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL",
    match: /Unexpected argument '([^']*)'/,
    plain: (a) => `unexpected argument '${a}'`,
  },
];

/**
 * What a parseArgs error means, as one plain line without Node's advice (`unknown option '--x'`,
 * `option '--limit' needs a value`); any other error's message, cut to its first sentence line.
 */
export function plainArgsError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  for (const p of PATTERNS) {
    if (p.code !== code) continue;
    const found = p.match.exec(message);
    if (found) return p.plain(found[1] ?? "");
  }
  const first = message.split("\n")[0] ?? message;
  return first.replace(/\. To specify .*$/, "").replace(/\.$/, "");
}
