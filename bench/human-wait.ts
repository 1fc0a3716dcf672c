/**
 * Row 4: how long a human waits for its first model slot while 500 background runs are queued.
 * Real LaneQueue + GlobalLane (maxConcurrent 4, reservedForHuman 1); each background run holds a
 * slot for a ~5 ms timer, 500 distinct sessions. A probe is a human task; it measures
 * enqueue → slot grant and counts the slot releases in between.
 *
 * - Case A, reserved slot free: background work saturates its 3 slots; 10 probes, 30 ms apart.
 * - Case B, all 4 slots busy: 3 background runs plus a long human run hold every slot (the pool
 *   is full only in that moment: after a release, non-human work may not refill past 3 in use);
 *   the probe arrives at once, 10 fresh trials.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { GlobalLane } from "../src/gateway/lanes/global-lane.js";
import { LaneQueue } from "../src/gateway/lanes/lane-queue.js";
import { fmt, percentile, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const BACKGROUND = 500;
const HOLD_MS = 5;
const PROBES = 10;
const PROBE_SPACING_MS = 30;

interface Probe {
  waitMs: number;
  releases: number;
}

/** A fresh queue with 500 background runs (and optionally a blocking human run) enqueued. */
class Workload {
  readonly pool = new GlobalLane({ maxConcurrent: 4, reservedForHuman: 1 });
  readonly lanes = new LaneQueue({ pool: this.pool });
  releases = 0;
  readonly #all: Array<Promise<unknown>> = [];
  #unblock: () => void = () => {};
  #probes = 0;

  constructor(blockReserved: boolean) {
    for (let i = 0; i < BACKGROUND; i++) {
      this.#track(
        this.lanes.enqueue({
          sessionKey: `bench:bg${i}`,
          priority: "background",
          origin: "cron",
          run: async (ctx) => {
            const lease = await ctx.acquireModelSlot();
            await sleep(HOLD_MS);
            this.releases++;
            lease.release();
          },
        }).done,
      );
    }
    if (blockReserved) {
      const blocked = new Promise<void>((resolve) => {
        this.#unblock = resolve;
      });
      this.#track(
        this.lanes.enqueue({
          sessionKey: "bench:blocker",
          priority: "human",
          origin: "user",
          run: async (ctx) => {
            const lease = await ctx.acquireModelSlot();
            await blocked;
            lease.release();
          },
        }).done,
      );
    }
  }

  /** Enqueues one human probe whose model call is instant; resolves with its admission figures. */
  async probe(): Promise<Probe> {
    let grantedAt = Number.NaN;
    let releasesAtGrant = 0;
    const releasesAtEnqueue = this.releases;
    const enqueuedAt = performance.now();
    await this.lanes.enqueue({
      sessionKey: `bench:human${++this.#probes}`,
      priority: "human",
      origin: "user",
      run: async (ctx) => {
        const lease = await ctx.acquireModelSlot();
        grantedAt = performance.now();
        releasesAtGrant = this.releases;
        lease.release();
      },
    }).done;
    return { waitMs: grantedAt - enqueuedAt, releases: releasesAtGrant - releasesAtEnqueue };
  }

  /** Drops the remaining work and waits for every run to settle. */
  async close(): Promise<void> {
    this.#unblock();
    this.lanes.abortAll("shutdown");
    await Promise.allSettled(this.#all);
  }

  #track(done: Promise<unknown>): void {
    this.#all.push(done);
  }
}

async function reservedFree(): Promise<Probe[]> {
  const w = new Workload(false);
  const probes: Probe[] = [];
  try {
    for (let p = 0; p < PROBES; p++) {
      await sleep(PROBE_SPACING_MS);
      const { inUse } = w.pool;
      if (inUse < 3 || w.pool.waiting().background === 0) {
        throw new Error(`pool not saturated at probe ${p}: ${inUse} in use, none waiting`);
      }
      probes.push(await w.probe());
    }
  } finally {
    await w.close();
  }
  return probes;
}

async function allBusy(): Promise<Probe[]> {
  const probes: Probe[] = [];
  for (let p = 0; p < PROBES; p++) {
    const w = new Workload(true);
    try {
      await nextTurn(); // let every run reach its model call
      if (w.pool.inUse !== w.pool.maxConcurrent) throw new Error(`pool not full: ${w.pool.inUse} in use`);
      probes.push(await w.probe());
    } finally {
      await w.close();
    }
  }
  return probes;
}

function summary(probes: Probe[]): { p50: number; max: number; maxReleases: number } {
  const waits = probes.map((p) => p.waitMs);
  return {
    p50: percentile(waits, 50),
    max: percentile(waits, 100),
    maxReleases: Math.max(...probes.map((p) => p.releases)),
  };
}

/** Human's wait for its first model call under 500 queued background runs. */
export const humanWait: Benchmark = {
  id: "human-wait",
  async run(): Promise<BenchRow[]> {
    const free = summary(await reservedFree());
    progress(`human-wait, reserved slot free: p50 ${fmt(free.p50, 3)} ms, max ${fmt(free.max, 3)} ms`);
    const full = summary(await allBusy());
    progress(`human-wait, all slots busy: p50 ${fmt(full.p50, 3)} ms, max ${fmt(full.max, 3)} ms`);
    const name = `Human's wait for 1st model slot, ${BACKGROUND} background runs queued (ms, ${PROBES} probes)`;
    return [
      {
        benchmark: `${name}: reserved slot free`,
        figure: `p50 ${fmt(free.p50, 3)} / max ${fmt(free.max, 3)}; ${free.maxReleases} releases between`,
        target: "at once (0 releases)",
        met: free.maxReleases === 0,
        values: { p50Ms: free.p50, maxMs: free.max, maxReleasesBetween: free.maxReleases },
      },
      {
        benchmark: `${name}: all 4 slots busy`,
        figure: `p50 ${fmt(full.p50, 3)} / max ${fmt(full.max, 3)}; ≤ ${full.maxReleases} release between`,
        target: `within one slot release (${HOLD_MS} ms holds)`,
        met: full.maxReleases <= 1,
        values: { p50Ms: full.p50, maxMs: full.max, maxReleasesBetween: full.maxReleases },
      },
    ];
  },
};
