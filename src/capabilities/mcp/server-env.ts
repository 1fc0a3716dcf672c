/**
 * Where a stdio MCP server runs and with what: its program resolved on PATH (a missing one is a
 * configuration error naming the key), and a scrubbed environment — PATH, HOME, LANG and TZ
 * from the gateway's, plus the server's own `env` — so no provider key or platform token of the
 * gateway reaches it unless the configuration hands it over by name.
 */
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { ALWAYS_PASSED_ENV } from "../../harness/tools/exec/exec-env.js";

/**
 * The server's environment: PATH, HOME, LANG and TZ from `base` (HOME defaults to
 * `workspaceDir`), then its configured `own` variables, which win.
 */
export function serverEnv(
  base: Readonly<Record<string, string | undefined>>,
  own: Readonly<Record<string, string>>,
  workspaceDir: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ALWAYS_PASSED_ENV) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  env.HOME ??= workspaceDir;
  return { ...env, ...own };
}

/**
 * The absolute path of `command`: itself when it contains a slash (resolved against `cwd`), else
 * the first executable file of that name on `pathVar`. Undefined when there is none.
 */
export function resolveCommand(
  command: string,
  pathVar: string | undefined,
  cwd: string,
): string | undefined {
  if (command.includes("/")) {
    const full = path.resolve(cwd, command);
    return isExecutable(full) ? full : undefined;
  }
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const full = path.join(dir, command);
    if (isExecutable(full)) return full;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
