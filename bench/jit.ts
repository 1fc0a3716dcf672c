/**
 * JIT evaluation per model call (#25 item 3): all built-in rules on a realistic assignment
 * snapshot, timed in batches (one call is below the timer's resolution). Two cases: a quiet call
 * where no rule fires (the common one) and a busy call where several fire and the cap applies.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TopLevelListing, environmentBlock } from "../src/harness/environment-context.js";
import { JitEngine } from "../src/harness/jit/jit-engine.js";
import { JitRunTracker } from "../src/harness/jit/jit-run-tracker.js";
import { seedWorkspace, defaultTemplateDir } from "../src/harness/memory/workspace.js";
import { fileTools } from "../src/harness/tools/file-tools.js";
import { ToolRegistry } from "../src/harness/tools/registry.js";
import { ToolPolicy } from "../src/harness/tools/tool-policy.js";
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

/**
 * As the loop runs it: per model call, two tool calls reported (JSON arguments parsed for their
 * paths), the snapshot built and the rules evaluated with the run's fired set; a run is 40 calls.
 */
function timeWired(engine: JitEngine): number[] {
  const args = ['{"path":"src/app.ts"}', '{"command":"npm test"}'];
  const names = ["read_file", "exec"];
  const perCallUs: number[] = [];
  // The first 100 runs warm the code up and are not counted.
  for (let b = -100; b < BATCHES / 4; b++) {
    const tracker = new JitRunTracker({ startedAtMs: 0, maxModelCalls: 40, maxToolCalls: 100 });
    const t0 = performance.now();
    for (let call = 0; call < 40; call++) {
      engine.evaluate(tracker.beforeModelCall(call * 1_000), tracker.fired);
      for (let k = 0; k < 2; k++) tracker.toolCall(names[k] as string, args[k] as string);
    }
    if (b >= 0) perCallUs.push(((performance.now() - t0) * 1000) / 40);
  }
  return perCallUs;
}

/** The environment block of a group turn: the policy over the file tools, the listing (cached), the text. */
async function timeEnvironment(): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "sy-bench-env-"));
  try {
    await seedWorkspace(defaultTemplateDir(), dir);
    const tools = new ToolRegistry({ policy: new ToolPolicy() });
    for (const t of fileTools()) tools.register(t);
    const listing = new TopLevelListing(dir);
    const ctx = { asker: { privateChat: false, groupChat: true, senderId: "u1" } };
    const once = async () =>
      environmentBlock({
        missing: tools
          .decisions(ctx)
          .filter((d) => !d.allowed)
          .map((d) => ({ name: d.tool.name, reason: d.reason ?? "" })),
        listing: await listing.entries(),
      });
    for (let i = 0; i < 500; i++) await once();
    const perTurnUs: number[] = [];
    for (let i = 0; i < BATCHES; i++) {
      const t0 = performance.now();
      await once();
      perTurnUs.push((performance.now() - t0) * 1000);
    }
    return perTurnUs;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
    const wired = timeWired(engine);
    const env = await timeEnvironment();
    return [
      {
        benchmark:
          "JIT as the loop runs it, per model call: 2 tool calls reported, snapshot built, rules evaluated (µs; 40-call runs)",
        figure: `p50 ${fmt(p(wired, 50), 3)} / p99 ${fmt(p(wired, 99), 3)}`,
        target: `< ${TARGET_US} µs`,
        met: p(wired, 99) < TARGET_US,
        values: { wiredP50Us: p(wired, 50), wiredP99Us: p(wired, 99) },
      },
      {
        benchmark:
          "Environment block per turn, group chat (policy over the file tools, cached workspace listing, text) (µs)",
        figure: `p50 ${fmt(p(env, 50), 1)} / p99 ${fmt(p(env, 99), 1)}`,
        target: "—",
        met: true,
        values: { envP50Us: p(env, 50), envP99Us: p(env, 99) },
      },
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
