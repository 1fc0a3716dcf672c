/**
 * Store contract, runs and usage: run records as commitTurn writes them, and token usage
 * added up per UTC day, provider and model.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { RunRecord } from "../../../src/store/repos/run-repo.js";
import type { Store } from "../../../src/store/types.js";
import { commitLeased, runRecord, type StoreContext, T0, turn } from "./fixtures.js";
/** Run and usage cases: RunRepo and UsageRepo. */
export function runsContract(ctx: StoreContext): void {
  describe("runs and usage", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    async function commitRun(run: RunRecord): Promise<void> {
      expect(await commitLeased(store, turn(run.runId, [], { run, outbox: [] }), T0)).toBe(true);
    }

    it("keeps run records, newest first, and counts every outcome", async () => {
      expect(await store.runs.countByOutcome()).toEqual({ answered: 0, failed: 0, aborted: 0, timeout: 0 });
      expect(await store.runs.get("nope")).toBeUndefined();
      await commitRun(runRecord("r1", { startedAt: T0 }));
      await commitRun(
        runRecord("r2", { startedAt: T0 + 2, outcome: "failed", trigger: "cron", channel: null }),
      );
      await commitRun(
        runRecord("r3", { startedAt: T0 + 1, outcome: "failed", errorKind: "rate_limit", error: "429" }),
      );
      expect(await store.runs.get("r2")).toEqual(
        runRecord("r2", { startedAt: T0 + 2, outcome: "failed", trigger: "cron", channel: null }),
      );
      expect((await store.runs.recent(10)).map((r) => r.runId)).toEqual(["r2", "r3", "r1"]);
      expect((await store.runs.recent(1)).map((r) => r.runId)).toEqual(["r2"]);
      expect(await store.runs.countByOutcome()).toEqual({ answered: 1, failed: 2, aborted: 0, timeout: 0 });
    });

    it("adds usage up per UTC day, provider and model, newest day first", async () => {
      const day1Late = Date.UTC(2024, 0, 1, 23, 59, 59);
      const day2Early = Date.UTC(2024, 0, 2, 0, 0, 1);
      const u = (n: number) => ({
        inputTokens: n,
        outputTokens: n * 2,
        cacheReadTokens: n * 3,
        cacheWriteTokens: n * 4,
      });
      await commitRun(runRecord("a", { startedAt: day1Late, usage: u(1) }));
      await commitRun(runRecord("b", { startedAt: Date.UTC(2024, 0, 1, 0, 0, 0), usage: u(10) }));
      await commitRun(runRecord("c", { startedAt: day2Early, usage: u(100) }));
      await commitRun(runRecord("d", { startedAt: day1Late, usage: u(1000), model: "gpt-other" }));
      await commitRun(
        runRecord("e", { startedAt: day1Late, usage: u(7), provider: "anthropic", model: "claude" }),
      );
      expect(await store.usage.byDay(10)).toEqual([
        { day: "2024-01-02", provider: "openai", model: "gpt-test", usage: u(100), runs: 1 },
        { day: "2024-01-01", provider: "anthropic", model: "claude", usage: u(7), runs: 1 },
        { day: "2024-01-01", provider: "openai", model: "gpt-other", usage: u(1000), runs: 1 },
        { day: "2024-01-01", provider: "openai", model: "gpt-test", usage: u(11), runs: 2 },
      ]);
      expect(await store.usage.byDay(1)).toHaveLength(1);
    });
  });
}
