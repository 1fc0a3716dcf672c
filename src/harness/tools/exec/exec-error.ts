/** The error runCommand throws when it refuses to start a command. */

/**
 * Why a command was not started:
 * - `path_outside_workspace`: the cwd, with symlinks resolved, is not inside the workspace;
 * - `cwd_not_found`: the cwd (or the workspace) does not exist or is not a folder;
 * - `env_name_invalid`: a `passEnv` entry is not a variable name;
 * - `env_name_secret`: a `passEnv` name looks like a credential or is the gateway's own;
 * - `spawn_failed`: the OS could not start `/bin/sh`.
 */
export type ExecErrorKind =
  | "path_outside_workspace"
  | "cwd_not_found"
  | "env_name_invalid"
  | "env_name_secret"
  | "spawn_failed";

/** A refusal to run a command, with a stable `kind` and what it was about. */
export class ExecError extends Error {
  readonly kind: ExecErrorKind;
  /** The folder the refusal is about, for the path kinds. */
  readonly path: string | undefined;
  /** The variable name the refusal is about, for the env kinds. */
  readonly variable: string | undefined;
  constructor(
    kind: ExecErrorKind,
    message: string,
    options: { cause?: unknown; path?: string; variable?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "ExecError";
    this.kind = kind;
    this.path = options.path;
    this.variable = options.variable;
  }
}
