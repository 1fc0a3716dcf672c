/**
 * The scheduler against the real SQLite store (in memory) on a manual clock, with a lane queue
 * that runs each task at once and a scripted job runner: slots claimed once (also by a second
 * scheduler on the same store, as after a restart), catch-up after downtime, the retry backoff,
 * one-shots, changes from another process, interrupted runs, and one timer however many jobs.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildJob } from "../../src/cron/jobs.js";
import { CronScheduler, type JobOutcome } from "../../src/cron/scheduler.js";
import { GlobalLane } from "../../src/gateway/lanes/global-lane.js";
import { LaneQueue } from "../../src/gateway/lanes/lane-queue.js";
import type { LaneQueueEvent } from "../../src/gateway/lanes/types.js";
import type { LaneTask } from "../../src/gateway/lanes/types.js";
import type { CronJob } from "../../src/store/repos/cron-repo.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";

const MIN = 60_000;
let store: Store;
let clock: ManualClock;
const schedulers: CronScheduler[] = [];

beforeEach(() => {
  store = openSqliteStore({ path: ":memory:" });
  clock = new ManualClock(Date.parse("2026-11-24T10:00:00Z"));
});

afterEach(async () => {
  for (const s of schedulers.splice(0)) s.stop();
  await store.close();
});

/** Runs every enqueued task at once; records which job slots ran. */
function scheduler(outcomes: Array<JobOutcome> = [], extra: { reloadMs?: number } = {}) {
  const ran: Array<{ job: string; slot: number; attempt: number; at: number }> = [];
  const s = new CronScheduler({
    store,
    clock,
    logger: silentLogger(),
    ...extra,
    lanes: {
      enqueue: <T>(task: LaneTask<T>) => {
        const ctx = {
          signal: new AbortController().signal,
          progress: () => {},
          acquireModelSlot: async () => ({ release() {} }),
        };
        return { id: 1, coalesced: false, done: task.run(ctx as never) } as never;
      },
    },
    sessionKeyOf: (job) => `agent:main:cron:${job.id}`,
    runJob: async (job, run) => {
      ran.push({ job: job.name, slot: run.scheduledFor, attempt: run.attempts, at: clock.now() });
      return outcomes.shift() ?? { ok: true, tokens: 10 };
    },
  });
  schedulers.push(s);
  return { s, ran };
}

async function addJob(input: Record<string, unknown>): Promise<CronJob> {
  const { spec, nextRunAt } = buildJob(
    { name: "job", message: "do it", deliver: "none", ...input } as never,
    { agentId: "main", source: "cli", now: clock.now(), defaultTz: "UTC", channels: new Set() },
  );
  return store.cron.add(spec, nextRunAt, clock.now());
}

/** Moves the clock forward in steps, letting the scheduler's timers and awaits run. */
async function advance(ms: number, step = MIN, ...all: CronScheduler[]) {
  for (let left = ms; left > 0; left -= step) {
    await clock.advanceAsync(Math.min(step, left));
    for (const s of all) await s.idle();
  }
}

describe("CronScheduler", () => {
  it("runs an interval job at each slot and records every run in the ledger", async () => {
    const job = await addJob({ every: "30m" });
    const { s, ran } = scheduler();
    await s.start();
    await advance(95 * MIN, MIN, s);
    expect(ran.map((r) => (r.slot - job.createdAt) / MIN)).toEqual([30, 60, 90]);
    expect((await store.cron.history(job.id, 10)).map((r) => r.state)).toEqual(["ok", "ok", "ok"]);
  });

  it("a slot is run once though two schedulers (a restart, a second gateway) see it due", async () => {
    await addJob({ every: "10m" });
    const a = scheduler();
    const b = scheduler();
    await a.s.start();
    await b.s.start();
    await advance(10 * MIN, MIN, a.s, b.s);
    await Promise.all([a.s.tick(), b.s.tick()]);
    expect(a.ran.length + b.ran.length).toBe(1);
  });

  it("after downtime runs once for every missed slot (catchUp: one), or records them skipped", async () => {
    const one = await addJob({ name: "one", every: "10m" });
    const skip = await addJob({ name: "skip", every: "10m", catchUp: "skip" });
    clock.advance(55 * MIN); // the gateway was down: five slots of each passed
    const { s, ran } = scheduler();
    await s.start();
    await s.idle();
    expect(ran.map((r) => r.job)).toEqual(["one"]);
    expect(ran[0]?.slot).toBe(one.createdAt + 50 * MIN); // the last missed slot stands for all
    expect(await store.cron.history(skip.id, 10)).toMatchObject([
      { state: "skipped", note: "5 slot(s) missed while the gateway was down (catchUp: skip)" },
    ]);
    // And both go on from now: the next slot after the downtime.
    expect((await store.cron.get(one.id))?.nextRunAt).toBe(one.createdAt + 60 * MIN);
  });

  it("retries a failing slot after 30 s, 1 m, 5 m, 15 m and 60 m, then marks the job failing", async () => {
    const job = await addJob({ cron: "0 12 * * *" });
    const fail: JobOutcome = { ok: false, transient: true, error: "model down" };
    const { s, ran } = scheduler(Array.from({ length: 6 }, () => fail));
    await s.start();
    await advance(2 * 60 * MIN + 90 * MIN, 15_000, s); // 12:00 plus every retry
    const gaps = ran.slice(1).map((r, i) => (r.at - (ran[i]?.at ?? 0)) / 1000);
    expect(gaps).toEqual([30, 60, 300, 900, 3600]);
    expect(ran.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await store.cron.get(job.id)).toMatchObject({ failing: true, consecutiveFailures: 1 });
    expect(await store.cron.history(job.id, 5)).toMatchObject([
      { state: "failed", attempts: 6, error: "model down" },
    ]);
  });

  it("a one-shot runs once, retries a transient failure 3 times, and is done", async () => {
    const job = await addJob({ at: "in 20m" });
    const fail: JobOutcome = { ok: false, transient: true, error: "429" };
    const { s, ran } = scheduler([fail, fail]);
    await s.start();
    await advance(25 * MIN, 15_000, s);
    expect(ran.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(await store.cron.get(job.id)).toMatchObject({ nextRunAt: null, failing: false });
    await advance(24 * 60 * MIN, 60 * MIN, s);
    expect(ran).toHaveLength(3);
  });

  it("picks up a job added by another process within the reload interval, with one timer for 1,000 jobs", async () => {
    for (let i = 0; i < 1_000; i++) await addJob({ name: `j${i}`, every: `${60 + i}m` });
    const { s, ran } = scheduler([], { reloadMs: 5_000 });
    await s.start();
    expect(clock.pendingTimers).toBe(1); // sleeps until the next due time (or the reload check)
    await addJob({ name: "late", at: "in 2m" }); // e.g. `switchyard cron add` in another process
    await advance(3 * MIN, 5_000, s);
    expect(ran.map((r) => r.job)).toEqual(["late"]);
  });

  it("redoes an attempt a stopped gateway left running, once it is past the job's timeout", async () => {
    const job = await addJob({ every: "1h", timeout: "10m" });
    await store.cron.claimSlot(job.id, job.nextRunAt ?? 0, (job.nextRunAt ?? 0) + 60 * MIN, clock.now());
    clock.advance(11 * MIN);
    const { s, ran } = scheduler();
    await s.start();
    await s.idle();
    expect(ran).toMatchObject([{ job: "job", attempt: 2 }]);
    expect(await store.cron.history(job.id, 5)).toMatchObject([{ state: "ok", attempts: 2 }]);
  });

  it("a person's message during a storm of 500 due jobs waits at most one slot release", async () => {
    for (let i = 0; i < 500; i++) await addJob({ name: `storm${i}`, at: "in 1m" });
    let backgroundGrants = 0;
    const events: LaneQueueEvent[] = [];
    const lanes = new LaneQueue({
      pool: new GlobalLane({ maxConcurrent: 4, reservedForHuman: 1, clock }),
      onEvent: (e) => events.push(e),
      clock,
    });
    const s = new CronScheduler({
      store,
      clock,
      logger: silentLogger(),
      lanes,
      sessionKeyOf: (job) => `agent:main:cron:${job.id}`,
      runJob: async (_job, _run, ctx) => {
        const slot = await ctx.acquireModelSlot();
        backgroundGrants++;
        await clock.sleep(5); // each run holds a model slot for 5 ms
        slot.release();
        return { ok: true, tokens: 1 };
      },
    });
    schedulers.push(s);
    await s.start();
    await clock.advanceAsync(MIN); // all 500 due at once: background runs fill every slot they may
    await clock.advanceAsync(12); // the storm is under way
    // The scheduler claims in batches, yielding between: let it get well into the storm.
    const started = () => events.filter((e) => e.type === "started").length;
    for (let i = 0; i < 1_000 && started() < 100; i++) await new Promise((r) => setImmediate(r));
    await clock.advanceAsync(12);
    expect(backgroundGrants).toBeGreaterThan(3); // slots have been changing hands
    expect(started()).toBeGreaterThanOrEqual(100);
    const before = backgroundGrants;
    let humanStarted = -1;
    const human = lanes.enqueue({
      sessionKey: "agent:main:telegram:dm:42",
      priority: "human",
      origin: "user",
      run: async (ctx) => {
        const slot = await ctx.acquireModelSlot();
        humanStarted = backgroundGrants;
        slot.release();
      },
    });
    while (humanStarted < 0) await clock.advanceAsync(1);
    await human.done;
    // The reserved slot takes the person at once: at most one background grant in between.
    expect(humanStarted - before).toBeLessThanOrEqual(1);
    await clock.advanceAsync(5 * 500);
    await s.idle();
    expect((await store.cron.list()).every((j) => j.nextRunAt === null)).toBe(true);
  });

  it("the watchdog reports a due run that has not started within a minute, once", async () => {
    await addJob({ every: "1h" });
    const late: number[] = [];
    const s = new CronScheduler({
      store,
      clock,
      logger: silentLogger(),
      lanes: { enqueue: () => ({ id: 1, coalesced: false, done: new Promise(() => {}) }) as never }, // never starts
      sessionKeyOf: (job) => `agent:main:cron:${job.id}`,
      runJob: async () => ({ ok: true, tokens: 0 }),
      onLateStart: (_job, lateMs) => late.push(lateMs),
    });
    schedulers.push(s);
    await s.start();
    // (Not `advance`: it waits for runs to finish, and this one never starts.)
    const step = async (ms: number, every: number) => {
      for (let left = ms; left > 0; left -= every) {
        await clock.advanceAsync(every);
        await s.tick();
      }
    };
    await step(60 * MIN, MIN); // due at 60 min: claimed, but its lane never starts it
    expect(late).toEqual([]);
    await step(3 * MIN, 5_000);
    expect(late).toHaveLength(1);
    expect(late[0]).toBeGreaterThan(MIN);
  });

  it("at start, finishes a run whose turn was committed before the stop instead of running it again", async () => {
    const job = await addJob({ every: "1h", timeout: "10m" });
    const run = await store.cron.claimSlot(
      job.id,
      job.nextRunAt ?? 0,
      (job.nextRunAt ?? 0) + 60 * MIN,
      clock.now(),
    );
    await store.cron.started(run?.id ?? 0, "run_committed");
    // The turn's commit (a cron turn answers no inbox row) landed before the stop.
    const { commitLeased, turn } = await import("../contract/store/fixtures.js");
    expect(await commitLeased(store, turn("run_committed", [], { outbox: [] }), clock.now())).toBe(true);
    clock.advance(11 * MIN);
    const { s, ran } = scheduler();
    await s.start();
    await s.idle();
    expect(ran).toEqual([]);
    expect(await store.cron.history(job.id, 5)).toMatchObject([{ state: "ok", attempts: 1 }]);
  });

  it("wakesDue runs the wakes due now, and not those due later", async () => {
    const woke: number[] = [];
    const s = new CronScheduler({
      store,
      clock,
      logger: silentLogger(),
      lanes: {
        enqueue: <T>(task: LaneTask<T>) =>
          ({
            id: 1,
            coalesced: false,
            done: task.run({ signal: new AbortController().signal } as never),
          }) as never,
      },
      sessionKeyOf: (job) => `agent:main:cron:${job.id}`,
      runJob: async () => ({ ok: true, tokens: 1 }),
      runWake: async (wake) => {
        woke.push(wake.id);
      },
    });
    schedulers.push(s);
    await s.start();
    const limits = { maxPending: 5, minGapMs: 0 };
    const now = await store.wakes.add(
      { sessionKey: "agent:main:task:t1", dueAt: clock.now(), reason: "go", target: null },
      limits,
      clock.now(),
    );
    await store.wakes.add(
      { sessionKey: "agent:main:task:t2", dueAt: clock.now() + MIN, reason: "later", target: null },
      limits,
      clock.now(),
    );
    await s.wakesDue();
    await s.idle();
    expect(woke).toEqual([now.status === "created" ? now.wake.id : -1]);
    expect(await store.wakes.list("agent:main:task:t2")).toHaveLength(1);
  });
});
