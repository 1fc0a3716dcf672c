/**
 * Store contract, runs and usage: run records as commitTurn writes them (with their attempts),
 * token usage added up per UTC day, provider and model, and the per-call usage rows commitTurn
 * writes from `run.calls`, grouped and totalled over a time range.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { TokenUsage } from "../../../src/harness/providers/types.js";
import type { ModelCallUsage, RunRecord } from "../../../src/store/repos/run-repo.js";
import type { Store } from "../../../src/store/types.js";
import { commitLeased, runRecord, type StoreContext, T0, turn } from "./fixtures.js";

const DAY = 86_400_000;

/** Token usage of `input` and `output` tokens, and cache reads and writes if given. */
function tokens(input: number, output: number, cacheRead = 0, cacheWrite = 0): TokenUsage {
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  };
}

/** One model call by `provider:profileId` to `provider/model`. */
function call(
  at: number,
  ref: string,
  profileId: string,
  usage: TokenUsage,
  costUsd: number,
): ModelCallUsage {
  const [provider = "", model = ""] = ref.split("/");
  return { at, provider, model, profileId, usage, costUsd };
}
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
      expect(await store.runs.countByOutcome()).toEqual({
        answered: 0,
        failed: 0,
        aborted: 0,
        timeout: 0,
        yielded: 0,
      });
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
      expect((await store.runs.recentOf("s1", 2)).map((r) => r.runId)).toEqual(["r2", "r3"]);
      expect(await store.runs.recentOf("s2", 10)).toEqual([]);
      expect(await store.runs.countByOutcome()).toEqual({
        answered: 1,
        failed: 2,
        aborted: 0,
        timeout: 0,
        yielded: 0,
      });
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

    it("keeps a run's attempts; its calls are read back empty (they are the usage rows)", async () => {
      const attempts = [
        { provider: "anthropic", model: "claude-a", profileId: "work", outcome: "rate_limit", waitMs: 0 },
        { provider: "anthropic", model: "claude-a", profileId: "personal", outcome: "ok", waitMs: 1500 },
      ];
      const calls = [call(T0 + 5, "anthropic/claude-a", "personal", tokens(10, 2), 0.5)];
      await commitRun(runRecord("r1", { attempts, calls }));
      expect(await store.runs.get("r1")).toEqual(runRecord("r1", { attempts, calls: [] }));
      expect((await store.runs.recent(1))[0]?.attempts).toEqual(attempts);
      expect(await store.usage.totalsSince(0)).toEqual({ calls: 1, tokens: 12, costUsd: 0.5 });
    });

    describe("usage per model call", () => {
      /**
       * s1 (a person): two calls today on two anthropic profiles, one yesterday (cron);
       * s2 (a heartbeat): one OpenAI call today; s3 (a person, a wake): two free local calls.
       */
      async function seedCalls(): Promise<void> {
        await commitRun(
          runRecord("r1", {
            sessionKey: "s1",
            calls: [
              call(T0, "anthropic/claude-a", "work", tokens(100, 10), 0.5),
              call(T0 + 1_000, "anthropic/claude-a", "personal", tokens(50, 5), 0.25),
            ],
          }),
        );
        await commitRun(
          runRecord("r2", {
            sessionKey: "s2",
            trigger: "heartbeat",
            calls: [call(T0 + 2_000, "openai/gpt-x", "default", tokens(200, 20, 10), 0.125)],
          }),
        );
        await commitRun(
          runRecord("r3", {
            sessionKey: "s1",
            trigger: "cron",
            startedAt: T0 - DAY,
            calls: [call(T0 - DAY, "anthropic/claude-a", "work", tokens(1_000, 100), 2)],
          }),
        );
        await commitRun(
          runRecord("r4", {
            sessionKey: "s3",
            calls: [call(T0 + 3_000, "ollama/llama", "default", tokens(300, 30), 0)],
          }),
        );
        await commitRun(
          runRecord("r5", {
            sessionKey: "s3",
            trigger: "wake",
            calls: [call(T0 + 4_000, "ollama/a-tiny", "gpu2", tokens(100, 10), 0)],
          }),
        );
      }

      /** key, calls, tokens (all four kinds), cost of each summary row. */
      async function summary(by: Parameters<Store["usage"]["summarize"]>[0]["by"], since = 0) {
        return (await store.usage.summarize({ since, by })).map((r) => [
          r.key,
          r.calls,
          r.usage.inputTokens + r.usage.outputTokens + r.usage.cacheReadTokens + r.usage.cacheWriteTokens,
          r.costUsd,
        ]);
      }

      it("reads nothing before any call", async () => {
        expect(await store.usage.summarize({ since: 0, by: "day" })).toEqual([]);
        expect(await store.usage.totalsSince(0)).toEqual({ calls: 0, tokens: 0, costUsd: 0 });
        expect(await store.usage.sessionTokensSince("s1", 0)).toBe(0);
        expect(await store.usage.byProfileSince(0)).toEqual([]);
      });

      it("billedTotals sums one session's calls of one origin, every day", async () => {
        await seedCalls();
        // s1: r1 (human, 165 tokens, $0.75) and r3 (cron, a day earlier, 1,100 tokens, $2).
        expect(await store.usage.billedTotals("s1", "cron")).toEqual({ tokens: 1_100, costUsd: 2 });
        expect(await store.usage.billedTotals("s1", "human")).toEqual({ tokens: 165, costUsd: 0.75 });
        expect(await store.usage.billedTotals("s1", "subagent")).toEqual({ tokens: 0, costUsd: 0 });
        expect(await store.usage.billedTotals("nobody", "human")).toEqual({ tokens: 0, costUsd: 0 });
      });

      it("groups calls by day, session, model, origin and profile: largest cost, then most tokens, then key", async () => {
        await seedCalls();
        expect(await summary("day")).toEqual([
          ["2024-01-14", 1, 1_100, 2],
          ["2024-01-15", 5, 835, 0.875],
        ]);
        expect(await summary("session")).toEqual([
          ["s1", 3, 1_265, 2.75],
          ["s2", 1, 230, 0.125],
          ["s3", 2, 440, 0],
        ]);
        expect(await summary("model")).toEqual([
          ["anthropic/claude-a", 3, 1_265, 2.75],
          ["openai/gpt-x", 1, 230, 0.125],
          ["ollama/llama", 1, 330, 0],
          ["ollama/a-tiny", 1, 110, 0],
        ]);
        // Origins: user-triggered runs are "human"; the others keep their trigger's name.
        expect(await summary("origin")).toEqual([
          ["cron", 1, 1_100, 2],
          ["human", 3, 495, 0.75],
          ["heartbeat", 1, 230, 0.125],
          ["wake", 1, 110, 0],
        ]);
        expect(await summary("profile")).toEqual([
          ["anthropic:work", 2, 1_210, 2.5],
          ["anthropic:personal", 1, 55, 0.25],
          ["openai:default", 1, 230, 0.125],
          ["ollama:default", 1, 330, 0],
          ["ollama:gpu2", 1, 110, 0],
        ]);
        // Token kinds are kept apart.
        const [gpt] = await store.usage.summarize({ since: T0 + 2_000, by: "model" });
        expect(gpt).toEqual({ key: "openai/gpt-x", calls: 1, usage: tokens(200, 20, 10), costUsd: 0.125 });
      });

      it("counts calls at or after `since` only", async () => {
        await seedCalls();
        expect(await summary("session", T0 + 1_000)).toEqual([
          ["s1", 1, 55, 0.25],
          ["s2", 1, 230, 0.125],
          ["s3", 2, 440, 0],
        ]);
        expect(await store.usage.totalsSince(T0)).toEqual({ calls: 5, tokens: 835, costUsd: 0.875 });
        expect(await store.usage.totalsSince(0)).toEqual({ calls: 6, tokens: 1_935, costUsd: 2.875 });
        expect(await store.usage.totalsSince(T0 + 5_000)).toEqual({ calls: 0, tokens: 0, costUsd: 0 });
        expect(await store.usage.sessionTokensSince("s1", T0 - DAY)).toBe(1_265);
        expect(await store.usage.sessionTokensSince("s1", T0)).toBe(165);
        expect(await store.usage.sessionTokensSince("s1", T0 + 1)).toBe(55);
        expect(await store.usage.sessionTokensSince("nobody", 0)).toBe(0);
        expect(await store.usage.byProfileSince(T0)).toEqual([
          { provider: "anthropic", profileId: "personal", calls: 1, tokens: 55, costUsd: 0.25 },
          { provider: "anthropic", profileId: "work", calls: 1, tokens: 110, costUsd: 0.5 },
          { provider: "ollama", profileId: "default", calls: 1, tokens: 330, costUsd: 0 },
          { provider: "ollama", profileId: "gpu2", calls: 1, tokens: 110, costUsd: 0 },
          { provider: "openai", profileId: "default", calls: 1, tokens: 230, costUsd: 0.125 },
        ]);
      });

      it("leaves simulated calls out of the totals the caps read (they are still listed)", async () => {
        await commitRun(
          runRecord("sim", {
            sessionKey: "s1",
            calls: [call(T0 + 1_000, "simulator/claude-x", "default", tokens(500, 50), 0)],
          }),
        );
        await commitRun(
          runRecord("real", {
            sessionKey: "s1",
            calls: [call(T0 + 2_000, "openai/gpt-x", "default", tokens(10, 1), 0.5)],
          }),
        );
        expect(await store.usage.totalsSince(0)).toEqual({ calls: 1, tokens: 11, costUsd: 0.5 });
        expect(await store.usage.sessionTokensSince("s1", 0)).toBe(11);
        expect(await summary("model")).toEqual([
          ["openai/gpt-x", 1, 11, 0.5],
          ["simulator/claude-x", 1, 550, 0],
        ]);
      });

      it("orders groups of equal cost and tokens by key; a call counts on the UTC day it was made", async () => {
        const lateRun = Date.UTC(2024, 0, 14, 23, 59, 59);
        const early = Date.UTC(2024, 0, 15, 0, 0, 1);
        await commitRun(
          runRecord("b", {
            sessionKey: "s-b",
            startedAt: lateRun,
            calls: [call(early, "x/m", "p", tokens(1, 1), 0)],
          }),
        );
        await commitRun(
          runRecord("a", {
            sessionKey: "s-a",
            startedAt: lateRun,
            calls: [call(early, "x/m", "p", tokens(1, 1), 0)],
          }),
        );
        expect(await summary("session")).toEqual([
          ["s-a", 1, 2, 0],
          ["s-b", 1, 2, 0],
        ]);
        expect(await summary("day")).toEqual([["2024-01-15", 2, 4, 0]]);
        // The day totals go by the run's start.
        expect((await store.usage.byDay(10)).map((d) => d.day)).toEqual(["2024-01-14"]);
      });

      it("a refused commit writes no usage rows", async () => {
        const run = runRecord("r1", { calls: [call(T0, "openai/gpt-x", "default", tokens(5, 5), 0.5)] });
        await commitRun(run);
        expect(await commitLeased(store, turn("r1", [], { run, outbox: [] }), T0 + 1)).toBe(false);
        expect(await store.usage.totalsSince(0)).toEqual({ calls: 1, tokens: 10, costUsd: 0.5 });
      });
    });
  });
}
