/**
 * Parallel tool calls (#26 item 6): one model turn asks for 8 read-only calls of a tool that
 * takes 20 ms; the wall time of the run (model calls in process, no network) with
 * `maxParallelTools` 1 (one after another) and 4 (the default), median of several runs.
 */
import { z } from "zod";
import { ModelRouter } from "../src/harness/models/model-router.js";
import type { ModelProvider, ModelRequest, ProviderEvent } from "../src/harness/providers/types.js";
import { runAgent } from "../src/harness/run.js";
import { ToolRegistry } from "../src/harness/tools/registry.js";
import { silentLogger } from "../src/util/logger.js";
import { fmt, median, progress, sleep } from "./stats.js";
import type { BenchRow, Benchmark } from "./types.js";

const CALLS = 8;
const TOOL_MS = 20;
const RUNS = 15;

/** Asks for CALLS reads on its first call of a run, answers on the second. */
class FanOutProvider implements ModelProvider {
  readonly id = "bench";
  readonly simulated = false;
  async *stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    if (request.messages.some((m) => m.role === "tool")) {
      yield { type: "text_delta", text: "read them all" };
      yield { type: "stop", reason: "end_turn" };
      return;
    }
    for (let i = 0; i < CALLS; i++)
      yield {
        type: "tool_call",
        call: { id: `c${i}`, name: "read_file", argumentsJson: JSON.stringify({ path: `f${i}.txt` }) },
      };
    yield { type: "stop", reason: "tool_use" };
  }
}

/** Wall time (ms) of one run with `maxParallelTools`. */
async function once(tools: ToolRegistry, maxParallelTools: number): Promise<number> {
  const t0 = performance.now();
  const result = await runAgent({
    runId: "bench",
    sessionKey: "bench",
    router: ModelRouter.single(new FanOutProvider(), "bench-model", {}),
    turn: { sessionKey: "bench", sessionId: "bench", runId: "bench", trigger: "message" },
    system: "bench",
    messages: [{ role: "user", content: "read the files" }],
    tools,
    workspaceDir: "/nonexistent",
    maxTokens: 100,
    maxToolCallsPerRun: 50,
    maxParallelTools,
    lane: {
      signal: new AbortController().signal,
      progress: () => {},
      acquireModelSlot: async () => ({ release: () => {} }),
    },
    logger: silentLogger(),
    append: async () => {},
  });
  if (result.outcome !== "answered" || result.toolCalls !== CALLS)
    throw new Error(`bench run ended ${result.outcome} after ${result.toolCalls} tool calls`);
  return performance.now() - t0;
}

/** One turn of 8 × 20 ms read-only calls: sequential vs parallel wall time (ms). */
export const parallelTools: Benchmark = {
  id: "parallel-tools",
  async run(): Promise<BenchRow[]> {
    const tools = new ToolRegistry();
    tools.register({
      name: "read_file",
      description: "A read that takes 20 ms (bench).",
      groups: ["fs"],
      parameters: z.strictObject({ path: z.string() }),
      run: async ({ path }) => {
        await sleep(TOOL_MS);
        return { content: `contents of ${path}` };
      },
    });
    const times = { 1: [] as number[], 4: [] as number[] };
    await once(tools, 4); // warm-up
    for (let i = 0; i < RUNS; i++) for (const n of [1, 4] as const) times[n].push(await once(tools, n));
    const seq = median(times[1]);
    const par = median(times[4]);
    progress(`parallel-tools: sequential ${fmt(seq, 1)} ms, parallel ${fmt(par, 1)} ms`);
    const floor = Math.ceil(CALLS / 4) * TOOL_MS;
    return [
      {
        benchmark: `One model turn of ${CALLS} read-only calls × ${TOOL_MS} ms, wall time (ms, median of ${RUNS}): maxParallelTools 1 / 4`,
        figure: `${fmt(seq, 1)} / ${fmt(par, 1)} (×${fmt(seq / par, 1)})`,
        target: `parallel < ${floor + TOOL_MS} ms`,
        met: par < floor + TOOL_MS,
        values: { sequentialMs: seq, parallelMs: par, speedup: seq / par },
      },
    ];
  },
};
