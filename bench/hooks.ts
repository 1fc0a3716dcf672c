/**
 * Command hooks per tool call (#25 item 1): the loop's hook step around one tool call (the
 * turn's composed beforeToolCall, the tool, afterToolCall) with no hooks configured — the hooks
 * capability then adds no TurnHooks, so nothing is called — against one beforeToolCall hook of
 * `true`, which adds one spawn through the exec runner (scrubbed environment, own process group).
 */
import { CommandHooks } from "../src/capabilities/hooks/command-hooks.js";
import { hookMetrics, HookOutcomes } from "../src/capabilities/hooks/hook-outcomes.js";
import { HookRunner } from "../src/capabilities/hooks/hook-runner.js";
import { hookSettings } from "../src/capabilities/hooks/settings.js";
import { type HookTurn, type TurnHooks, composeHooks } from "../src/harness/hooks.js";
import type { ToolCall } from "../src/harness/providers/types.js";
import { systemClock } from "../src/util/clock.js";
import { silentLogger } from "../src/util/logger.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmt, percentile, progress } from "./stats.js";
import type { BenchRow, Benchmark } from "./types.js";

const SPAWNS = 300;
const BATCHES = 2_000;
const PER_BATCH = 200;

const call: ToolCall = { id: "c1", name: "read_file", argumentsJson: '{"path":"notes.md"}' };

/** The hooks a turn gets from the capability for `raw` settings (none without entries). */
function turnHooks(raw: Record<string, unknown>, home: string): TurnHooks {
  const settings = hookSettings.parse(raw);
  const commands = new CommandHooks({
    settings,
    runner: new HookRunner({ workspaceDir: home, env: { PATH: process.env.PATH }, clock: systemClock }),
    outcomes: new HookOutcomes({ home, metrics: hookMetrics(), clock: systemClock, logger: silentLogger() }),
    messagesOf: async () => [],
    logger: silentLogger(),
    now: () => systemClock.now(),
  });
  return composeHooks(commands.any ? [commands.hooks()] : []);
}

/** The loop's step for one call: the hooks around a tool that answers at once. */
async function step(hooks: TurnHooks, turn: HookTurn): Promise<void> {
  const blocked = await hooks.beforeToolCall?.(call, turn);
  let out = blocked ? { content: blocked.block, isError: true } : { content: "file text", isError: false };
  if (hooks.afterToolCall) out = await hooks.afterToolCall(call, out, turn);
  if (out.isError) throw new Error(`hook bench: the call was refused: ${out.content}`);
}

/** Hook cost per tool call: none configured vs a beforeToolCall hook of `true`. */
export const hooksBench: Benchmark = {
  id: "hooks",
  async run(): Promise<BenchRow[]> {
    const home = mkdtempSync(join(tmpdir(), "sy-bench-hooks-"));
    try {
      const turn: HookTurn = {
        sessionKey: "bench",
        sessionId: "ses",
        runId: "run",
        trigger: "message",
        signal: new AbortController().signal,
      };
      const none = turnHooks({}, home);
      for (let i = 0; i < BATCHES; i++) await step(none, turn);
      const noneUs: number[] = [];
      for (let b = 0; b < BATCHES; b++) {
        const t0 = performance.now();
        for (let i = 0; i < PER_BATCH; i++) await step(none, turn);
        noneUs.push(((performance.now() - t0) * 1000) / PER_BATCH);
      }
      const withTrue = turnHooks({ beforeToolCall: [{ command: "true" }] }, home);
      for (let i = 0; i < 20; i++) await step(withTrue, turn);
      const trueMs: number[] = [];
      for (let i = 0; i < SPAWNS; i++) {
        const t0 = performance.now();
        await step(withTrue, turn);
        trueMs.push(performance.now() - t0);
      }
      const p = percentile;
      progress(`hooks: none p50 ${fmt(p(noneUs, 50), 3)} µs, true p50 ${fmt(p(trueMs, 50))} ms`);
      return [
        {
          benchmark: `Hook step around one tool call, no hooks configured (µs; p50/p99 of ${BATCHES} batches of ${PER_BATCH})`,
          figure: `p50 ${fmt(p(noneUs, 50), 3)} / p99 ${fmt(p(noneUs, 99), 3)}`,
          target: "no hook called (unchanged)",
          values: { p50Us: p(noneUs, 50), p99Us: p(noneUs, 99) },
        },
        {
          benchmark: `Hook step around one tool call, one beforeToolCall hook \`true\` (ms; p50/p99 of ${SPAWNS}): the added spawn`,
          figure: `p50 ${fmt(p(trueMs, 50))} / p99 ${fmt(p(trueMs, 99))}`,
          target: "—",
          values: { p50Ms: p(trueMs, 50), p99Ms: p(trueMs, 99) },
        },
      ];
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  },
};
