/**
 * Scheduled jobs, in process, through the real CronScheduler, the gateway's lanes (buildLanes
 * with the default config: 4 model slots, 1 reserved for people) and a real SQLite store (a temp
 * file opened as the gateway opens it: WAL, checkpoints in a worker). Jobs are made by buildJob
 * (`every 1h`, deliver none) and stored with one shared first slot, so they all fall due at once.
 *
 * - Overhead per due job: 1,000 jobs due at one instant of a ManualClock; runJob returns at once
 *   (no model call). From the timer that finds them due until the scheduler is idle (every slot
 *   claimed, enqueued, started, its outcome recorded): this process's CPU (process.cpuUsage, all
 *   threads) and wall time, divided by 1,000. Median of 5 rounds after a warm-up, fresh store each.
 * - A person's wait for a model slot during a storm of 500 jobs falling due (wall clock), each run
 *   holding a slot ~5 ms, by bench/human-wait.ts's method: case A (reserved slot free) 10 probes 30
 *   ms apart once the storm began; case B (all 4 slots busy: 3 jobs, then a long human run) a probe
 *   at once, 10 fresh storms. A probe is a human lane task: enqueue → slot grant, the job slot
 *   releases in between, and the longest event-loop stall of its storm so far.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildLanes } from "../src/app/harness.js";
import { parseConfig } from "../src/config/load.js";
import { buildJob } from "../src/cron/jobs.js";
import { CronScheduler, type CronSchedulerOptions } from "../src/cron/scheduler.js";
import type { LaneTaskContext } from "../src/gateway/lanes/types.js";
import { GatewayMetrics } from "../src/gateway/metrics.js";
import { openSqliteStore } from "../src/store/sqlite/open-sqlite-store.js";
import type { CronJob } from "../src/store/repos/cron-repo.js";
import type { Store } from "../src/store/types.js";
import { type Clock, ManualClock, systemClock } from "../src/util/clock.js";
import { silentLogger } from "../src/util/logger.js";
import { fmt, median, percentile, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const config = parseConfig({}, undefined);
const JOBS = 1_000;
const ROUNDS = 5;
const DUE_IN_MS = 1_000;
const STORM = 500;
const HOLD_MS = 5;
const PROBES = 10;
const PROBE_SPACING_MS = 30;
/** Jobs are stored due this far ahead: the scheduler is running (its timer armed) before they are due. */
const STORM_LEAD_MS = 400;
const LIMIT_MS = 30_000;
const NONE: ReadonlySet<string> = new Set();
/** Temp folders of open stores: removed on exit too (the runner's watchdog exits without finally). */
const dirs = new Set<string>();
process.on("exit", () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A temp store holding `count` jobs whose first slot is `dueAt`. */
async function jobStore(count: number, dueAt: number, now: number) {
  const dir = mkdtempSync(join(tmpdir(), "sy-bench-cron-"));
  dirs.add(dir);
  const path = join(dir, "switchyard.db");
  const store = openSqliteStore({ path, checkpointInWorker: true, logger: silentLogger() });
  const close = async (): Promise<void> => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
  };
  const ctx = { agentId: config.agent.id, source: "cli", now, defaultTz: "UTC", channels: NONE } as const;
  try {
    for (let i = 0; i < count; i++) {
      const { spec } = buildJob({ name: `job-${i}`, every: "1h", message: `job ${i}`, deliver: "none" }, ctx);
      await store.cron.add(spec, dueAt, now);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { store, close };
}

/** The gateway's lanes and a scheduler over `store`, as src/app/cron.ts wires them. */
function wire(store: Store, clock: Clock, runJob: CronSchedulerOptions["runJob"]) {
  const { pool, lanes } = buildLanes(config, systemClock, new GatewayMetrics(), silentLogger());
  const sessionKeyOf = async (job: CronJob) => `agent:${config.agent.id}:cron:${job.id}`;
  const scheduler = new CronScheduler({ store, lanes, clock, logger: silentLogger(), sessionKeyOf, runJob });
  return { pool, lanes, scheduler };
}

type Round = { cpuUs: number; wallUs: number };
/** 1,000 jobs fall due on a ManualClock; the figures per job, from the timer to idle. */
async function overheadRound(): Promise<Round> {
  const clock = new ManualClock();
  const db = await jobStore(JOBS, clock.now() + DUE_IN_MS, clock.now());
  let called = 0;
  const { lanes, scheduler } = wire(db.store, clock, async () => {
    called++;
    return { ok: true, tokens: 0 };
  });
  try {
    await scheduler.start(); // nothing due yet: one timer, armed for the shared slot
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await clock.advanceAsync(DUE_IN_MS);
    // After each batch of 100 the scheduler arms a 0 ms timer: fire it, with time standing still.
    while (called < JOBS && performance.now() - t0 < LIMIT_MS) await clock.advanceAsync(0);
    await scheduler.idle();
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (called !== JOBS) throw new Error(`runJob called ${called} times, expected ${JOBS}`);
    let ok = 0;
    for (const job of await db.store.cron.list())
      if ((await db.store.cron.history(job.id, 1))[0]?.state === "ok") ok++;
    if (ok !== JOBS) throw new Error(`${ok} of ${JOBS} slots recorded ok`);
    return { cpuUs: (cpu.user + cpu.system) / JOBS, wallUs: (wallMs * 1000) / JOBS };
  } finally {
    scheduler.stop();
    await lanes.drain(1_000);
    await db.close();
  }
}

async function overhead(): Promise<BenchRow> {
  await overheadRound(); // warm-up: JIT
  const rounds: Round[] = [];
  for (let r = 1; r <= ROUNDS; r++) {
    const round = await overheadRound();
    rounds.push(round);
    progress(`cron overhead round ${r}: ${fmt(round.cpuUs, 1)} µs CPU, ${fmt(round.wallUs, 1)} µs wall/job`);
  }
  const cpuUs = median(rounds.map((r) => r.cpuUs));
  const wallUs = median(rounds.map((r) => r.wallUs));
  return {
    benchmark: `Scheduler overhead per due job (µs; ${JOBS.toLocaleString("en-US")} jobs due at once, SQLite file store, runJob instant; median of ${ROUNDS})`,
    figure: `${fmt(cpuUs, 1)} µs CPU / ${fmt(wallUs, 1)} µs wall (rounds: ${rounds.map((r) => fmt(r.cpuUs, 0)).join(", ")} µs CPU)`,
    target: "< 1 ms",
    met: cpuUs < 1_000 && wallUs < 1_000,
    values: { cpuUsPerJob: cpuUs, wallUsPerJob: wallUs, jobs: JOBS, rounds: ROUNDS },
  };
}

type Probe = { waitMs: number; releases: number; stallMs: number }; // stall: the storm's longest so far

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** `promise`, or an error naming `what` after LIMIT_MS (a storm that never fills fails, not hangs). */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not after ${LIMIT_MS} ms`)), LIMIT_MS);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** 500 jobs due soon (wall clock) under a running scheduler; each run holds a slot ~5 ms. */
async function startStorm() {
  const now = Date.now();
  const db = await jobStore(STORM, now + STORM_LEAD_MS, now);
  const loop = monitorEventLoopDelay({ resolution: 1 }); // its max: the longest stall of the loop
  const began = deferred();
  const saturated = deferred(); // every slot background work may take is taken
  const unblock = deferred();
  let releases = 0;
  let humans = 0;
  const all: Array<Promise<unknown>> = [];
  const w = wire(db.store, systemClock, async (_job, _run, ctx) => {
    began.resolve();
    const lease = await ctx.acquireModelSlot();
    if (w.pool.inUse >= w.pool.maxConcurrent - config.lanes.reservedForHuman) saturated.resolve();
    await sleep(HOLD_MS);
    releases++;
    lease.release();
    return { ok: true, tokens: 0 };
  });
  const human = (run: (ctx: LaneTaskContext) => Promise<void>): Promise<void> => {
    const sessionKey = `bench:human${++humans}`;
    const { done } = w.lanes.enqueue({ sessionKey, priority: "human", origin: "user", run });
    all.push(done);
    return done;
  };
  try {
    if (Date.now() > now + STORM_LEAD_MS - 50)
      throw new Error(`storing ${STORM} jobs took over ${STORM_LEAD_MS - 50} ms`);
    await w.scheduler.start();
  } catch (err) {
    await db.close();
    throw err;
  }
  loop.enable();
  return {
    pool: w.pool,
    began: began.promise,
    saturated: saturated.promise,
    /** A human run that holds a slot until close (case B's 4th slot); resolves once it holds it. */
    block(): Promise<void> {
      const held = deferred();
      const done = human(async (ctx) => {
        const lease = await ctx.acquireModelSlot();
        held.resolve();
        await unblock.promise;
        lease.release();
      });
      return Promise.race([held.promise, done]);
    },
    /** One human task whose model call is instant: enqueue → grant, and the releases between. */
    async probe(): Promise<Probe> {
      let grantedAt = Number.NaN;
      let releasesAtGrant = 0;
      const releasesAtEnqueue = releases;
      const enqueuedAt = performance.now();
      await human(async (ctx) => {
        const lease = await ctx.acquireModelSlot();
        grantedAt = performance.now();
        releasesAtGrant = releases;
        lease.release();
      });
      const stallMs = loop.max / 1e6;
      return { waitMs: grantedAt - enqueuedAt, releases: releasesAtGrant - releasesAtEnqueue, stallMs };
    },
    /** Stops the scheduler, drops the remaining runs, waits for all to settle, closes the store. */
    async close(): Promise<void> {
      loop.disable();
      w.scheduler.stop();
      const drained = w.lanes.drain(0); // refuses what a tick still under way enqueues
      unblock.resolve();
      w.lanes.abortAll("shutdown");
      await drained;
      await w.scheduler.idle();
      await Promise.allSettled(all);
      await db.close();
    },
  };
}

async function reservedFree(): Promise<Probe[]> {
  const storm = await startStorm();
  const probes: Probe[] = [];
  try {
    await within(storm.began, "storm start");
    for (let p = 0; p < PROBES; p++) {
      await sleep(PROBE_SPACING_MS);
      const { inUse } = storm.pool;
      if (inUse < 3 || storm.pool.waiting().background === 0)
        throw new Error(`pool not saturated at probe ${p}: ${inUse} in use, none waiting`);
      probes.push(await within(storm.probe(), "probe"));
    }
  } finally {
    await storm.close();
  }
  return probes;
}

/** As human-wait: 3 job runs hold their slots, a long human run takes the 4th, then the probe. */
async function allBusy(): Promise<Probe[]> {
  const probes: Probe[] = [];
  for (let p = 0; p < PROBES; p++) {
    const storm = await startStorm();
    try {
      await within(storm.saturated, "3 slots taken by jobs");
      await within(storm.block(), "blocker holding the 4th slot");
      if (storm.pool.inUse !== storm.pool.maxConcurrent)
        throw new Error(`pool not full: ${storm.pool.inUse} in use`);
      probes.push(await within(storm.probe(), "probe"));
    } finally {
      await storm.close();
    }
  }
  return probes;
}

function row(name: string, probes: Probe[], target: string, maxReleases: number): BenchRow {
  const waits = probes.map((p) => p.waitMs);
  const [p50, max] = [percentile(waits, 50), percentile(waits, 100)];
  const releases = Math.max(...probes.map((p) => p.releases));
  const stallMs = Math.max(...probes.map((p) => p.stallMs));
  progress(`cron storm, ${name}: p50 ${fmt(p50, 3)} / max ${fmt(max, 3)} ms, stall ${fmt(stallMs, 1)} ms`);
  return {
    benchmark: `Human's wait for 1st model slot, storm of ${STORM} due cron jobs (ms, ${PROBES} probes): ${name}`,
    figure: `p50 ${fmt(p50, 3)} / max ${fmt(max, 3)}; ${maxReleases === 0 ? `${releases} releases` : `≤ ${releases} release`} between; event loop stalled ≤ ${fmt(stallMs, 1)} ms`,
    target,
    met: releases <= maxReleases,
    values: { p50Ms: p50, maxMs: max, maxReleasesBetween: releases, maxLoopStallMs: stallMs },
  };
}

async function storm(): Promise<BenchRow[]> {
  const free = row("reserved slot free", await reservedFree(), "at once (0 releases)", 0);
  const full = row("all 4 slots busy", await allBusy(), `within one slot release (${HOLD_MS} ms holds)`, 1);
  return [free, full];
}

/** Scheduler overhead per due job, and a person's wait during a storm of due jobs. */
export const cronBench: Benchmark = {
  id: "cron",
  async run(): Promise<BenchRow[]> {
    return [await overhead(), ...(await storm())];
  },
};
