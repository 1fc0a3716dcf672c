/**
 * JIT evaluation per model call (#25 item 3): all built-in rules on a realistic assignment
 * snapshot, timed in batches (one call is below the timer's resolution). Two cases: a quiet call
 * where no rule fires (the common one) and a busy call where several fire and the cap applies.
 */
import { JitEngine } from "../src/harness/jit/jit-engine.js";
import type { JitSnapshot, JitToolCall } from "../src/harness/jit/types.js";
import { fmt, percentile, progress } from "./stats.js";
import type { BenchRow, Benchmark } from "./types.js";

const BATCHES = 2_000;
const PER_BATCH = 200;
const TARGET_US = 20;

/** The last 8 tool calls of a working assignment run: reads, an edit, a test run, an update. */
const recentCalls: JitToolCall[] = [
  { name: "read_file", modelCall: 10, paths: ["src/app.ts"] },
  { name: "read_file", modelCall: 10, paths: ["src/routes.ts"] },
  { name: "edit_file", modelCall: 11, paths: ["src/routes.ts"] },
  { name: "exec", modelCall: 12, paths: [] },
  { name: "read_file", modelCall: 13, paths: ["test/routes.test.ts"] },
  { name: "edit_file", modelCall: 14, paths: ["test/routes.test.ts"] },
  { name: "exec", modelCall: 15, paths: [] },
  { name: "work_item_update", modelCall: 16, paths: [] },
];

const quiet: JitSnapshot = {
  modelCall: 17,
  maxModelCalls: 40,
  maxToolCalls: 100,
  toolCallsMade: 24,
  toolCounts: {
    read_file: 9,
    list_files: 2,
    edit_file: 5,
    write_file: 1,
    exec: 4,
    work_item_update: 2,
    work_item_list: 1,
  },
  readsSinceLastWrite: 0,
  recentCalls,
  workItems: { done: 2, total: 6, callsSinceTouched: 0 },
  compactions: 1,
  modelCallsSinceCompaction: 6,
  minutesInRun: 7,
};

/** Near the limit, twice compacted, reading one file per call without writing. */
const busy: JitSnapshot = {
  ...quiet,
  modelCall: 35,
  toolCallsMade: 60,
  readsSinceLastWrite: 11,
  recentCalls: [
    ...recentCalls.slice(0, 5),
    { name: "read_file", modelCall: 32, paths: ["a.ts"] },
    { name: "read_file", modelCall: 33, paths: ["b.ts"] },
    { name: "read_file", modelCall: 34, paths: ["c.ts"] },
  ],
  workItems: { done: 2, total: 6, callsSinceTouched: 12 },
  compactions: 2,
};

/** µs per evaluation, one figure per batch of `PER_BATCH` (after a warm-up). */
function time(engine: JitEngine, snapshot: JitSnapshot): { perCallUs: number[]; lines: number } {
  let lines = 0;
  const run = () => {
    // A fresh per-run set each call, so once-rules are evaluated every time (the worst case).
    lines = engine.evaluate(snapshot, new Set()).length;
  };
  for (let i = 0; i < BATCHES * 10; i++) run();
  const perCallUs = new Array<number>(BATCHES);
  for (let b = 0; b < BATCHES; b++) {
    const t0 = performance.now();
    for (let i = 0; i < PER_BATCH; i++) run();
    perCallUs[b] = ((performance.now() - t0) * 1000) / PER_BATCH;
  }
  return { perCallUs, lines };
}

/** JIT evaluation cost per model call (µs). */
export const jitBench: Benchmark = {
  id: "jit",
  async run(): Promise<BenchRow[]> {
    const engine = new JitEngine();
    const q = time(engine, quiet);
    const b = time(engine, busy);
    if (q.lines !== 0 || b.lines !== 2)
      throw new Error(`jit bench snapshots drifted: ${q.lines} quiet / ${b.lines} busy lines`);
    const p = (v: number[], n: number) => percentile(v, n);
    progress(`jit: quiet p50 ${fmt(p(q.perCallUs, 50), 3)} µs, busy p50 ${fmt(p(b.perCallUs, 50), 3)} µs`);
    return [
      {
        benchmark: `JIT evaluation per model call, all ${engine.ruleIds.length} built-in rules on an assignment snapshot (µs; p50/p99 of ${BATCHES} batches of ${PER_BATCH}): quiet call (no line) / busy call (5 rules match, capped at 2 lines)`,
        figure: `quiet p50 ${fmt(p(q.perCallUs, 50), 3)} / p99 ${fmt(p(q.perCallUs, 99), 3)}; busy p50 ${fmt(p(b.perCallUs, 50), 3)} / p99 ${fmt(p(b.perCallUs, 99), 3)}`,
        target: `< ${TARGET_US} µs`,
        met: p(q.perCallUs, 99) < TARGET_US && p(b.perCallUs, 99) < TARGET_US,
        values: {
          quietP50Us: p(q.perCallUs, 50),
          quietP99Us: p(q.perCallUs, 99),
          busyP50Us: p(b.perCallUs, 50),
          busyP99Us: p(b.perCallUs, 99),
        },
      },
    ];
  },
};
