/**
 * The next-run computation (`nextCronTime`, #23's rewrite: local-calendar day matching, a per-day
 * UTC offset, DST transition days) on the 416 sequences of test/cron/next-runs.table.ts: every
 * row's runs computed one after another from its start, the whole table 20 times after a
 * warm-up. Figures: µs per computed run (p50 and p99 over rounds of the table, and the slowest
 * single call), and whether every run matched the table (the oracle-checked data).
 */
import { nextCronTime } from "../src/cron/schedule.js";
import { NEXT_RUNS } from "../test/cron/next-runs.table.js";
import { fmt, percentile } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const ROUNDS = 20;

/** One pass over the table: calls made, mismatches, the slowest call (µs), the pass's µs. */
function pass(): { calls: number; wrong: number; slowestUs: number; us: number } {
  let calls = 0;
  let wrong = 0;
  let slowestUs = 0;
  const start = process.hrtime.bigint();
  for (const [expr, tz, from, runs] of NEXT_RUNS) {
    let after = Date.parse(from);
    for (const expected of runs) {
      const t0 = process.hrtime.bigint();
      const next = nextCronTime(expr, tz, after);
      const us = Number(process.hrtime.bigint() - t0) / 1_000;
      if (us > slowestUs) slowestUs = us;
      calls++;
      if (next !== Date.parse(expected)) wrong++;
      if (next === undefined) break;
      after = next;
    }
  }
  return { calls, wrong, slowestUs, us: Number(process.hrtime.bigint() - start) / 1_000 };
}

/** The next-run benchmark (see the file header). */
export const cronNext: Benchmark = {
  id: "cron-next",
  async run(): Promise<BenchRow[]> {
    pass(); // warm-up: the Intl formatters of each zone are built once
    const perCall: number[] = [];
    let slowestUs = 0;
    let wrong = 0;
    let calls = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const r = pass();
      perCall.push(r.us / r.calls);
      slowestUs = Math.max(slowestUs, r.slowestUs);
      wrong += r.wrong;
      calls = r.calls;
    }
    const p50 = percentile(perCall, 50);
    const p99 = percentile(perCall, 99);
    return [
      {
        benchmark: `Next cron run across DST changes (µs per run; ${NEXT_RUNS.length} sequences, ${calls} runs, 6 zones, ${ROUNDS} rounds)`,
        figure: `p50 ${fmt(p50)} / p99 ${fmt(p99)} per run; slowest call ${fmt(slowestUs)}; ${wrong === 0 ? "all match the oracle table" : `${wrong} runs DIFFER from the oracle table`}`,
        // Within the scheduler's budget per due job (< 1 ms in all, the "cron" row), which
        // computes one next run per job it runs.
        target: "p99 < 1,000 µs (the per-job budget), all matching",
        met: p99 < 1_000 && wrong === 0,
        values: { p50Us: p50, p99Us: p99, slowestUs, wrong },
      },
    ];
  },
};
