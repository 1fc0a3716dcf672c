/**
 * Store contract, cron: jobs (unique names per agent, config upserts that keep an unchanged job's
 * slot), the version a scheduler watches, and the ledger: a slot is claimed once, skipped slots
 * are recorded, retries are claimed once, history is newest first; two processes claiming one
 * slot at once: one wins.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { JobSpec } from "../../../src/store/repos/cron-repo.js";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, T0 } from "./fixtures.js";

const spec = (extra: Partial<JobSpec> = {}): JobSpec => ({
  agentId: "main",
  name: "standup",
  source: "cli",
  schedule: { kind: "cron", expr: "0 9 * * 1-5", tz: "Europe/Berlin" },
  prompt: "Summarize yesterday's notes",
  sessionMode: "isolated",
  deliver: { kind: "chat", target: { channel: "telegram", accountId: "default", chatId: "42" } },
  catchUp: "one",
  timeoutMs: 600_000,
  enabled: true,
  ...extra,
});

/** Cron cases: every CronRepo method. */
export function cronContract(ctx: StoreContext): void {
  describe("cron", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("adds jobs with unique names per agent, lists, updates, removes, and moves the version", async () => {
      const v0 = await store.cron.version();
      const job = await store.cron.add(spec(), T0 + 60_000, T0);
      expect(job).toMatchObject({
        id: expect.any(Number),
        name: "standup",
        nextRunAt: T0 + 60_000,
        failing: false,
        enabled: true,
      });
      await expect(store.cron.add(spec(), T0, T0)).rejects.toMatchObject({ code: "conflict" });
      await store.cron.add(spec({ agentId: "other" }), T0, T0); // another agent may reuse the name
      expect((await store.cron.list("main")).map((j) => j.name)).toEqual(["standup"]);
      expect(await store.cron.list()).toHaveLength(2);
      expect(await store.cron.version()).toBeGreaterThan(v0);
      const v1 = await store.cron.version();
      expect(await store.cron.update(job.id, { enabled: false, prompt: "changed" }, T0 + 1)).toBe(true);
      expect(await store.cron.get(job.id)).toMatchObject({
        enabled: false,
        prompt: "changed",
        updatedAt: T0 + 1,
      });
      expect(await store.cron.version()).toBeGreaterThan(v1);
      expect(await store.cron.byName("main", "standup")).toMatchObject({ id: job.id });
      expect(await store.cron.remove(job.id)).toBe(true);
      expect(await store.cron.remove(job.id)).toBe(false);
      expect(await store.cron.get(job.id)).toBeUndefined();
    });

    it("upserts a config job: unchanged keeps its slot, changed takes the new one", async () => {
      const first = await store.cron.upsertConfig(spec({ source: "config" }), T0 + 1_000, T0);
      const again = await store.cron.upsertConfig(spec({ source: "config" }), T0 + 9_000, T0 + 5);
      expect(again).toMatchObject({ id: first.id, nextRunAt: T0 + 1_000 });
      const changed = await store.cron.upsertConfig(
        spec({ source: "config", prompt: "new" }),
        T0 + 9_000,
        T0 + 6,
      );
      expect(changed).toMatchObject({ id: first.id, prompt: "new", nextRunAt: T0 + 9_000 });
    });

    it("claims a slot once, moving the job on; the ledger and the due list follow", async () => {
      const job = await store.cron.add(spec(), T0, T0);
      expect((await store.cron.due(T0, 10)).map((j) => j.id)).toEqual([job.id]);
      expect(await store.cron.nextWake()).toBe(T0);
      const run = await store.cron.claimSlot(job.id, T0, T0 + 86_400_000, T0 + 5);
      expect(run).toMatchObject({
        jobId: job.id,
        scheduledFor: T0,
        state: "running",
        attempts: 1,
        startedAt: T0 + 5,
      });
      expect(await store.cron.claimSlot(job.id, T0, T0 + 86_400_000, T0 + 6)).toBeUndefined();
      expect(await store.cron.due(T0 + 10, 10)).toEqual([]);
      expect(await store.cron.nextWake()).toBe(T0 + 86_400_000);
      await store.cron.started(run?.id ?? 0, "run_abc");
      expect(await store.cron.staleRunning(T0 + 100)).toMatchObject([{ id: run?.id, runId: "run_abc" }]);
      await store.cron.finish(
        run?.id ?? 0,
        { state: "ok", durationMs: 1_234, tokens: 99, receipt: "m1" },
        T0 + 1_300,
      );
      expect(await store.cron.staleRunning(T0 + 100)).toEqual([]);
      expect(await store.cron.history(job.id, 10)).toMatchObject([
        { state: "ok", durationMs: 1_234, tokens: 99, receipt: "m1", finishedAt: T0 + 1_300 },
      ]);
    });

    it("two processes claiming one due slot at once: exactly one runs it", async () => {
      const other = await ctx.peer();
      const job = await store.cron.add(spec(), T0, T0);
      const MIN = 60_000;
      // Several slots in a row, so the two claims overlap on the server at least once.
      for (let slot = T0; slot < T0 + 5 * MIN; slot += MIN) {
        expect((await other.cron.due(slot, 10)).map((j) => j.id)).toEqual([job.id]);
        const claims = await Promise.all([
          store.cron.claimSlot(job.id, slot, slot + MIN, slot + 1),
          other.cron.claimSlot(job.id, slot, slot + MIN, slot + 2),
        ]);
        const won = claims.filter((c) => c !== undefined);
        expect(won).toHaveLength(1);
        expect(won[0]).toMatchObject({ jobId: job.id, scheduledFor: slot, state: "running", attempts: 1 });
        expect(await store.cron.due(slot + 10, 10)).toEqual([]);
        expect(await other.cron.get(job.id)).toMatchObject({ nextRunAt: slot + MIN });
      }
      const ledger = await other.cron.history(job.id, 10);
      expect(ledger.map((r) => r.scheduledFor)).toEqual([4, 3, 2, 1, 0].map((i) => T0 + i * MIN));
      expect(new Set(ledger.map((r) => r.id)).size).toBe(5);
    });

    it("records skipped slots once, and claims a due retry once", async () => {
      const job = await store.cron.add(spec(), T0, T0);
      expect(
        await store.cron.recordSkipped(job.id, T0, "skipped", "missed while down", T0 + 60_000, T0 + 1),
      ).toBe(true);
      expect(await store.cron.recordSkipped(job.id, T0, "skipped", "again", T0 + 60_000, T0 + 2)).toBe(false);
      const run = await store.cron.claimSlot(job.id, T0 + 60_000, T0 + 120_000, T0 + 60_000);
      await store.cron.finish(
        run?.id ?? 0,
        { state: "retry", durationMs: 10, error: "boom", retryAt: T0 + 90_000 },
        T0 + 60_010,
      );
      expect(await store.cron.dueRetries(T0 + 89_999, 10)).toEqual([]);
      expect(await store.cron.nextWake()).toBe(T0 + 90_000);
      expect((await store.cron.dueRetries(T0 + 90_000, 10)).map((r) => r.id)).toEqual([run?.id]);
      expect(await store.cron.claimRetry(run?.id ?? 0, T0 + 90_000)).toMatchObject({
        state: "running",
        attempts: 2,
      });
      expect(await store.cron.claimRetry(run?.id ?? 0, T0 + 90_001)).toBeUndefined();
      expect((await store.cron.history(job.id, 10)).map((r) => [r.scheduledFor, r.state])).toEqual([
        [T0 + 60_000, "running"],
        [T0, "skipped"],
      ]);
      // Removing a job removes its ledger.
      await store.cron.remove(job.id);
      expect(await store.cron.history(job.id, 10)).toEqual([]);
    });
  });
}
