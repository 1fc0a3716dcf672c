/**
 * Row `cluster permits`: the time `lanes.clusterMaxConcurrent` adds to each model call on one
 * node over SQLite (a file in WAL mode, as a gateway opens it): the same calls, one after
 * another, through GlobalLane alone (cap off) and through ClusterSlotPool (cap on: a permit
 * taken and given back in the store per call). The model call itself is empty.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterPermits } from "../src/gateway/lanes/cluster-permits.js";
import { ClusterSlotPool } from "../src/gateway/lanes/cluster-slot-pool.js";
import { GlobalLane } from "../src/gateway/lanes/global-lane.js";
import type { ModelSlotPool } from "../src/gateway/lanes/types.js";
import { openSqliteStore } from "../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../src/store/types.js";
import { fmt, median, progress } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const CALLS = 5_000;
const ROUNDS = 3;

/** Wall µs per call for `CALLS` acquire/release pairs, then until the store holds no permit. */
async function round(pool: ModelSlotPool, store: Store | undefined): Promise<number> {
  const signal = new AbortController().signal;
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const lease = await pool.acquire("human", signal);
    lease.release();
  }
  // The last release's store write runs after release() returns: count it.
  while (store && Object.keys((await store.permits.census(Date.now())).permits).length > 0)
    await new Promise((r) => setImmediate(r));
  return ((performance.now() - start) * 1000) / CALLS;
}

/** Cluster-permit cost per model call (µs): cap on minus cap off, median of 3 rounds each. */
export const clusterPermitsBench: Benchmark = {
  id: "cluster-permits",
  async run(): Promise<BenchRow[]> {
    const dir = mkdtempSync(join(tmpdir(), "sy-bench-permits-"));
    const store = openSqliteStore({ path: join(dir, "state.db") });
    const permits = new ClusterPermits({ permits: store.permits, owner: "gw_bench", limit: 4 });
    try {
      const local = new GlobalLane({ maxConcurrent: 4, reservedForHuman: 1 });
      const capped = new ClusterSlotPool(local, permits);
      await round(local, undefined); // warm-up: JIT
      await round(capped, store);
      const off: number[] = [];
      const on: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        off.push(await round(local, undefined));
        on.push(await round(capped, store));
        progress(
          `cluster-permits round ${r + 1}: off ${fmt(off[r] ?? 0)} µs, on ${fmt(on[r] ?? 0)} µs per call`,
        );
      }
      const offUs = median(off);
      const onUs = median(on);
      return [
        {
          benchmark: `cluster permits: added time per model call (µs; cap on vs off, SQLite file, one node, ${CALLS / 1000}k calls)`,
          figure: `+${fmt(onUs - offUs)} µs (on ${fmt(onUs)} / off ${fmt(offUs)})`,
          target: "—",
          values: { addedUsPerCall: onUs - offUs, onUsPerCall: onUs, offUsPerCall: offUs, calls: CALLS },
        },
      ];
    } finally {
      await permits.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
