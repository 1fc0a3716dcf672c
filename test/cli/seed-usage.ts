/**
 * Seeds a home folder's database with committed runs and their model calls, as a gateway
 * commits them (commitTurn under a session lease), for the `usage` and `auth` command tests.
 */
import { join } from "node:path";
import type { TokenUsage } from "../../src/harness/providers/types.js";
import type { ModelCallUsage, RunTrigger } from "../../src/store/repos/run-repo.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { commitLeased, runRecord, turn } from "../contract/store/fixtures.js";

/** One run to seed: its session, what started it, and its calls. */
export interface SeedRun {
  sessionKey: string;
  trigger: RunTrigger;
  calls: ModelCallUsage[];
}

/** Token usage of `input` and `output` tokens, and cache reads and writes if given. */
export function tokens(input: number, output: number, cacheRead = 0, cacheWrite = 0): TokenUsage {
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  };
}

/** One model call by `provider:profileId` to `provider/model` at `at`. */
export function call(
  at: number,
  ref: string,
  profileId: string,
  usage: TokenUsage,
  costUsd: number,
): ModelCallUsage {
  const slash = ref.indexOf("/");
  return { at, provider: ref.slice(0, slash), model: ref.slice(slash + 1), profileId, usage, costUsd };
}

/** Opens (creating) the database of `home`. */
export function openHomeStore(home: string): Store {
  return openSqliteStore({ path: join(home, "switchyard.db") });
}

/** Commits each run (run ids run-1, run-2, …) into `home`'s database. */
export async function seedRuns(home: string, runs: readonly SeedRun[]): Promise<void> {
  const store = openHomeStore(home);
  try {
    for (const [i, r] of runs.entries()) {
      const runId = `run-${i + 1}`;
      const first = r.calls[0];
      const at = first?.at ?? 0;
      const run = runRecord(runId, {
        sessionKey: r.sessionKey,
        trigger: r.trigger,
        startedAt: at,
        provider: first?.provider ?? "none",
        model: first?.model ?? "none",
        calls: r.calls,
      });
      const committed = await commitLeased(
        store,
        turn(runId, [], { sessionKey: r.sessionKey, run, outbox: [] }),
        at,
      );
      if (!committed) throw new Error(`seedRuns: ${runId} was refused`);
    }
  } finally {
    await store.close();
  }
}
