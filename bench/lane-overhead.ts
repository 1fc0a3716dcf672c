/**
 * Row 1: the cost of the two-level lane queue itself. N trivial human tasks across S sessions
 * through a real LaneQueue + GlobalLane; each task takes one model slot and releases it.
 */
import { GlobalLane } from "../src/gateway/lanes/global-lane.js";
import { LaneQueue } from "../src/gateway/lanes/lane-queue.js";
import type { Benchmark, BenchRow } from "./types.js";
import { fmt, median, progress } from "./stats.js";

const TASKS = 100_000;
const SESSIONS = 1_000;
const ROUNDS = 3;

/** Runs `tasks` tasks over `sessions` sessions; returns the wall time in ms. */
async function runOnce(tasks: number, sessions: number): Promise<number> {
  const pool = new GlobalLane({ maxConcurrent: 4, reservedForHuman: 1 });
  const lanes = new LaneQueue({ pool });
  const done: Array<Promise<void>> = new Array(tasks);
  const start = performance.now();
  for (let i = 0; i < tasks; i++) {
    done[i] = lanes.enqueue({
      sessionKey: `bench:s${i % sessions}`,
      // Human tasks never coalesce, so every one of the N tasks really runs.
      priority: "human",
      origin: "user",
      run: async (ctx) => {
        const lease = await ctx.acquireModelSlot();
        lease.release();
      },
    }).done;
  }
  await Promise.all(done);
  const wallMs = performance.now() - start;
  if (lanes.runningCount !== 0 || pool.inUse !== 0) throw new Error("lane queue did not settle");
  return wallMs;
}

/** Lane-queue overhead per task (µs): median of 3 rounds after a warm-up round. */
export const laneOverhead: Benchmark = {
  id: "lane-overhead",
  async run(): Promise<BenchRow[]> {
    await runOnce(TASKS / 10, SESSIONS); // warm-up: JIT
    const usPerTask: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const wallMs = await runOnce(TASKS, SESSIONS);
      usPerTask.push((wallMs * 1000) / TASKS);
      progress(`lane-overhead round ${r + 1}: ${fmt(wallMs, 0)} ms for ${TASKS} tasks`);
    }
    const us = median(usPerTask);
    return [
      {
        benchmark: `Lane-queue overhead per task (µs; ${TASKS / 1000}k tasks, ${SESSIONS} sessions, 1 slot each)`,
        figure: `${fmt(us)} µs (${fmt(1e6 / us / 1000, 0)}k tasks/s)`,
        target: "—",
        values: { usPerTask: us, rounds: ROUNDS, tasks: TASKS, sessions: SESSIONS },
      },
    ];
  },
};
