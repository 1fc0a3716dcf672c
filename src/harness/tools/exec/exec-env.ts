/**
 * The environment a command gets: the base environment scrubbed down to a few harmless names.
 * Extra names (config `tools.exec.env`) pass only when they do not look like a credential or
 * belong to the gateway; the rules are one table, so what is refused and why reads in one place.
 */
import { ExecError } from "./exec-error.js";

/** Variables every command gets from the base environment (when set there). */
export const ALWAYS_PASSED_ENV = ["PATH", "HOME", "LANG", "TZ"] as const;

/** One kind of variable name that never reaches a command, and why. */
interface SecretNameRule {
  pattern: RegExp;
  why: string;
}

/**
 * Names refused in `passEnv`, checked case-insensitively against the whole name. Word parts
 * are `_`-separated, so `MONKEY` and `TOKENIZER_THREADS` pass while `GITHUB_TOKEN`,
 * `ANTHROPIC_API_KEY` and `AWS_SECRET_ACCESS_KEY` do not.
 */
export const SECRET_NAME_RULES: readonly SecretNameRule[] = [
  { pattern: /^SWITCHYARD_/i, why: "it is one of the gateway's own variables" },
  { pattern: /(?:^|_)(?:API_?|ACCESS_?|PRIVATE_?)?KEYS?(?:_|$)/i, why: "it names a key" },
  { pattern: /(?:^|_)[A-Z]*TOKENS?(?:_|$)/i, why: "it names a token" },
  { pattern: /(?:^|_)[A-Z]*SECRETS?(?:_|$)/i, why: "it names a secret" },
  { pattern: /(?:^|_)(?:[A-Z]*(?:PASSWORDS?|PASSWD|PASSPHRASE)|PASS)(?:_|$)/i, why: "it names a password" },
  { pattern: /(?:^|_)CREDENTIALS?(?:_|$)/i, why: "it names credentials" },
  { pattern: /(?:^|_)(?:AUTH|COOKIES?|SESSION_?ID|DSN)(?:_|$)/i, why: "it names an authentication value" },
  { pattern: /^(?:DATABASE_URL|MYSQL_PWD|GPG_AGENT_INFO)$/i, why: "it carries a credential" },
];

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `name` may not be passed to a command, or undefined when it may. */
export function secretNameReason(name: string): string | undefined {
  return SECRET_NAME_RULES.find((rule) => rule.pattern.test(name))?.why;
}

/**
 * Throws ExecError naming the variable when a `passEnv` entry is not a variable name
 * (`env_name_invalid`) or is refused by SECRET_NAME_RULES (`env_name_secret`). The config
 * loader can call it to fail at start-up instead of at the first command.
 */
export function checkPassEnv(passEnv: readonly string[]): void {
  for (const name of passEnv) {
    if (!VARIABLE_NAME.test(name)) {
      throw new ExecError("env_name_invalid", `${JSON.stringify(name)} is not an environment variable name`, {
        variable: name,
      });
    }
    const why = secretNameReason(name);
    if (why !== undefined) {
      throw new ExecError("env_name_secret", `the variable ${name} is never passed to commands (${why})`, {
        variable: name,
      });
    }
  }
}

/**
 * The environment of a command: PATH, HOME, LANG and TZ from `base`, plus each `passEnv` name
 * set there (checked with checkPassEnv first). HOME stays the real one; when `base` has none it
 * is `workspaceDir`, so tools that write under HOME write in the workspace. Nothing else passes:
 * no provider key, no platform token, no SWITCHYARD_* variable.
 */
export function execEnv(
  base: Readonly<Record<string, string | undefined>>,
  passEnv: readonly string[],
  workspaceDir: string,
): Record<string, string> {
  checkPassEnv(passEnv);
  const env: Record<string, string> = {};
  for (const name of [...ALWAYS_PASSED_ENV, ...passEnv]) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  env.HOME ??= workspaceDir;
  return env;
}
