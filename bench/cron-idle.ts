/**
 * Idle CPU of the BUILT daemon (`node bin/switchyard.js gateway`, simulator mode, as
 * bench/gateway-child.ts starts it) with 1,000 scheduled jobs, against the same daemon with none,
 * side by side in the same window. Each gets a fresh home whose database is made before the spawn
 * with the store API (jobs `every 1d` from buildJob: none due for a day). Both are spawned, made
 * ready (`GET /readyz`), left to settle 2 s, then their CPU time is read over the same 10 s: the
 * sum of every thread's run time in /proc/<pid>/task/<tid>/schedstat (ns), with utime+stime from
 * /proc/<pid>/stat (clock ticks) as a coarse cross-check. The scheduler's 5 s job-version check is
 * part of what is measured. Met when the jobs add under 1 ms/s to the main (JavaScript) thread
 * and none of them ran.
 */
import { join } from "node:path";
import { parseConfig } from "../src/config/load.js";
import { buildJob } from "../src/cron/jobs.js";
import { openSqliteStore } from "../src/store/sqlite/open-sqlite-store.js";
import { type GatewayChild, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient } from "./http-client.js";
import { fmt, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";
import { type CpuSample, cpuOf } from "./proc-cpu.js";

const JOBS = 1_000;
const SETTLE_MS = 2_000;
const WINDOW_MS = 10_000;
/** The target is met when the jobs cost less than this over the daemon without them. */
const MAX_EXTRA_MS_PER_S = 1;
const TICKS_PER_S = 100; // USER_HZ: Linux reports utime/stime in 1/100 s

/** Fills `home`'s database with `jobs` jobs, none due within a day. */
async function seedJobs(home: string, jobs: number): Promise<void> {
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    const now = Date.now();
    const ctx = {
      agentId: parseConfig({}, undefined).agent.id,
      source: "cli",
      now,
      defaultTz: "UTC",
      channels: new Set<string>(),
    } as const;
    for (let i = 0; i < jobs; i++) {
      const { spec, nextRunAt } = buildJob(
        { name: `job-${i}`, every: "1d", message: `job ${i}`, deliver: "none" },
        ctx,
      );
      await store.cron.add(spec, nextRunAt, now);
    }
    const stored = (await store.cron.list()).length;
    if (stored !== jobs) throw new Error(`home holds ${stored} jobs, expected ${jobs}`);
  } finally {
    await store.close();
  }
}

/** The jobs are all still there, and none has a run in its ledger (none fell due). */
async function assertNothingRan(home: string): Promise<void> {
  const store = openSqliteStore({ path: join(home, "switchyard.db"), readonly: true });
  try {
    const jobs = await store.cron.list();
    let ran = 0;
    for (const job of jobs) if ((await store.cron.history(job.id, 1)).length > 0) ran++;
    if (jobs.length !== JOBS || ran > 0)
      throw new Error(`${jobs.length} jobs, ${ran} of them ran while idle`);
  } finally {
    await store.close();
  }
}

interface Idle {
  msPerS: number;
  /** The main (JavaScript) thread alone: GC helpers and the WAL checkpointer left out. */
  mainMsPerS: number;
  ticksMsPerS: number;
}

/** Idle CPU of the daemons with 1,000 and with 0 jobs, over the same window. */
export const cronIdle: Benchmark = {
  id: "cron-idle",
  async run(): Promise<BenchRow[]> {
    const gateways: GatewayChild[] = [];
    const client = new HttpClient({ maxSockets: 2, timeoutMs: 1_000 });
    try {
      for (const jobs of [JOBS, 0])
        gateways.push(await spawnGateway({ prepareHome: (home) => seedJobs(home, jobs) }));
      for (const gw of gateways) await waitReady(gw, client);
      client.close(); // no open sockets in the daemons while they idle
      await sleep(SETTLE_MS);
      const before = gateways.map((gw) => cpuOf(gw.pid));
      const t0 = performance.now();
      await sleep(WINDOW_MS);
      const seconds = (performance.now() - t0) / 1000;
      const [withJobs, none] = gateways.map((gw, i): Idle => {
        const after = cpuOf(gw.pid);
        const start = before[i] as CpuSample;
        if (gw.child.exitCode !== null || gw.child.signalCode !== null)
          throw new Error(`gateway exited while idle:\n${gw.stderrTail()}`);
        return {
          msPerS: (after.runNs - start.runNs) / 1e6 / seconds,
          mainMsPerS: (after.mainNs - start.mainNs) / 1e6 / seconds,
          ticksMsPerS: ((after.ticks - start.ticks) * (1000 / TICKS_PER_S)) / seconds,
        };
      }) as [Idle, Idle];
      progress(
        `cron-idle: ${fmt(withJobs.msPerS, 3)} ms/s with ${JOBS} jobs, ${fmt(none.msPerS, 3)} ms/s with none ` +
          `(stat ticks: ${fmt(withJobs.ticksMsPerS, 1)} / ${fmt(none.ticksMsPerS, 1)} ms/s)`,
      );
      // Judged on the main thread: the GC helper threads' idle work swings by ±2 ms/s between runs.
      const diff = withJobs.mainMsPerS - none.mainMsPerS;
      await assertNothingRan((gateways[0] as GatewayChild).home);
      return [
        {
          benchmark: `Idle CPU of the built daemon, ${JOBS.toLocaleString("en-US")} jobs configured, none due (ms CPU per s; ${WINDOW_MS / 1000} s)`,
          figure: `${fmt(withJobs.msPerS, 2)} ms/s, main thread ${fmt(withJobs.mainMsPerS, 2)} (0 jobs, same window: ${fmt(none.msPerS, 2)}, main ${fmt(none.mainMsPerS, 2)}; main-thread difference ${diff >= 0 ? "+" : ""}${fmt(diff, 2)})`,
          target: "sleeps until the next due time",
          met: diff < MAX_EXTRA_MS_PER_S,
          values: {
            msPerS: withJobs.msPerS,
            noJobsMsPerS: none.msPerS,
            extraMsPerS: diff,
            ticksMsPerS: withJobs.ticksMsPerS,
            noJobsTicksMsPerS: none.ticksMsPerS,
            jobs: JOBS,
            windowS: seconds,
          },
        },
      ];
    } finally {
      client.close();
      for (const gw of gateways) await gw.kill();
    }
  },
};
