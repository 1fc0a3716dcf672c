/**
 * `switchyard memory search <query> [--limit N] [--json]`: the agent's memory search from the
 * terminal. It opens the same index file as the gateway (`<home>/memory-index.db`), brings it
 * up to date with the workspace's files first, and works whether or not the gateway runs.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { resolveHome, workspaceDirOf } from "../config/home.js";
import { ConfigError } from "../util/config-error.js";
import { MAX_SEARCH_LIMIT, MEMORY_INDEX_FILE, MemoryIndex } from "../harness/memory/memory-index.js";
import type { MemoryHit, MemoryWarnings } from "../harness/memory/types.js";
import { loadClientConfig } from "./find-gateway.js";
import type { CliOptions } from "./main.js";
import { readRuntimeFile } from "./runtime-file.js";
import { noteUnresolved } from "./subcommand.js";

/** Matches printed without `--limit`. */
export const MEMORY_SEARCH_DEFAULT_LIMIT = 10;

const USAGE = "usage: switchyard memory search <query> [--limit N] [--json]\n";

/** Runs `memory search <query…>`; returns the exit code (2 for a missing query or action). */
export async function runMemory(options: CliOptions, args: string[]): Promise<number> {
  const [action, ...words] = args;
  if (action !== "search") {
    const found = action === undefined ? "" : `unknown action "${action}"; `;
    process.stderr.write(`switchyard memory: ${found}${USAGE}`);
    return 2;
  }
  const query = words.join(" ").trim();
  if (query === "") {
    process.stderr.write(`switchyard memory search: no query given\n${USAGE}`);
    return 2;
  }
  const limit = options.limit ?? MEMORY_SEARCH_DEFAULT_LIMIT;
  if (limit > MAX_SEARCH_LIMIT) {
    process.stderr.write(`switchyard memory search: --limit is at most ${MAX_SEARCH_LIMIT}, got ${limit}\n`);
    return 2;
  }
  const env = process.env;
  const cwd = process.cwd();
  const home = resolveHome(options.home, env, cwd);
  const runtime = readRuntimeFile(home);
  const { config, problem, unresolved } = loadClientConfig(options, runtime, { env, cwd, lenientEnv: true });
  if (!config) throw problem ?? new ConfigError(undefined, ["no configuration"]);
  noteUnresolved("memory search", unresolved);
  const workspaceDir = workspaceDirOf(config, home);
  if (!existsSync(workspaceDir)) {
    process.stderr.write(
      `switchyard memory search: no workspace at ${workspaceDir} (the gateway creates it when it starts)\n`,
    );
    return 1;
  }
  const index = new MemoryIndex({
    workspaceDir,
    dbPath: join(home, MEMORY_INDEX_FILE),
    logger: stderrWarnings,
  });
  try {
    const hits = await index.search(query, { limit });
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ query, workspaceDir, results: hits }, null, 2)}\n`);
    } else if (hits.length === 0) {
      process.stdout.write("no matches\n");
    } else {
      process.stdout.write(formatHits(hits));
    }
    return 0;
  } finally {
    index.close();
  }
}

/** One line per hit: `path:start-end  snippet`, control characters shown as U+FFFD. */
export function formatHits(hits: readonly MemoryHit[]): string {
  return hits.map((h) => `${clean(h.path)}:${h.startLine}-${h.endLine}  ${clean(h.snippet)}\n`).join("");
}

/** Files the index skips are worth a line on stderr; they never stop the search. */
const stderrWarnings: MemoryWarnings = {
  warn(_context, message) {
    process.stderr.write(`switchyard memory: warning: ${clean(message)}\n`);
  },
};

/** What a note holds must not drive the terminal (escape sequences). */
function clean(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "\uFFFD");
}
