/**
 * Context management: the tiered system prompt per turn (with its cache, and rebuilt from
 * scratch), compaction of a 150k-token history with the simulator answering at once (the
 * gateway's own time beyond the model calls), and the share of input tokens read from the
 * prompt cache over a steady 50-turn chat (the simulator's prefix accounting).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Compactor } from "../src/harness/compaction.js";
import type { HookTurn } from "../src/harness/hooks.js";
import { dailyNotePath, localDate, previousDate } from "../src/harness/memory/memory-paths.js";
import { loadSkills, skillIndexText } from "../src/harness/memory/skills.js";
import { defaultTemplateDir, seedWorkspace } from "../src/harness/memory/workspace.js";
import { ModelRouter } from "../src/harness/models/model-router.js";
import { AnthropicProvider } from "../src/harness/providers/anthropic.js";
import type { ProviderEvent } from "../src/harness/providers/types.js";
import { PromptFileCache } from "../src/harness/prompt.js";
import { SystemPrompt } from "../src/harness/system-prompt.js";
import { fileTools } from "../src/harness/tools/file-tools.js";
import { ToolRegistry } from "../src/harness/tools/registry.js";
import { ModelSimulator } from "../src/simulator/model-simulator.js";
import type { TranscriptEvent, TranscriptPayload } from "../src/store/repos/transcript-repo.js";
import { startBenchGateway } from "./bench-gateway.js";
import { HttpClient } from "./http-client.js";
import { fmt, percentile, progress } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

/** Prompt assembly, compaction, cache-read share. */
export const contextBench: Benchmark = {
  id: "context",
  async run(): Promise<BenchRow[]> {
    return [...(await promptRows()), await compactionRow(), await cacheShareRow()];
  },
};

async function promptRows(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "sy-bench-prompt-"));
  try {
    await seedWorkspace(defaultTemplateDir(), dir);
    const tools = new ToolRegistry();
    for (const t of fileTools()) tools.register(t);
    const specs = tools.specs();
    const turn = {
      privateChat: true,
      channel: "telegram",
      chatKind: "direct" as const,
      speaker: "Ada",
      model: "anthropic/claude-x",
    };
    // As the gateway builds it (src/app/agent.ts): skills index and daily notes read every turn.
    let skills: { at: number; text: string } | undefined;
    const loaders = {
      skillsIndex: async () => {
        if (skills && performance.now() - skills.at < 5_000) return skills.text;
        skills = { at: performance.now(), text: skillIndexText((await loadSkills(dir)).skills) };
        return skills.text;
      },
      dailyNotePaths: (now: Date) => {
        const today = localDate(now.getTime(), "UTC");
        return [dailyNotePath(previousDate(today)), dailyNotePath(today)];
      },
    };
    await writeFile(
      join(dir, "memory", `${new Date().toISOString().slice(0, 10)}.md`),
      "# today\n\n- a note\n",
    );
    const cached = new SystemPrompt({ workspaceDir: dir, ...loaders });
    const warm: number[] = [];
    const cold: number[] = [];
    for (let i = 0; i < 2_200; i++) {
      const t0 = performance.now();
      await cached.build(turn, tools.specs(), new Date());
      if (i >= 200) warm.push((performance.now() - t0) * 1000);
    }
    for (let i = 0; i < 600; i++) {
      const fresh = new SystemPrompt({ workspaceDir: dir, cache: new PromptFileCache(), ...loaders });
      const t0 = performance.now();
      await fresh.build(turn, specs, new Date());
      if (i >= 100) cold.push((performance.now() - t0) * 1000);
    }
    const p50 = percentile(warm, 50);
    return [
      {
        benchmark:
          "System prompt per turn, template workspace with a daily note, unchanged files (µs; 2000 turns)",
        figure: `p50 ${fmt(p50, 1)} / p99 ${fmt(percentile(warm, 99), 1)}; rebuilt from scratch p50 ${fmt(percentile(cold, 50), 1)}`,
        target: "p50 < 100 µs",
        met: p50 < 100,
        values: { p50Us: p50, p99Us: percentile(warm, 99), coldP50Us: percentile(cold, 50) },
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function compactionRow(): Promise<BenchRow> {
  const sim = new ModelSimulator({ firstByteDelayMs: 0, chunkDelayMs: 0 });
  await sim.start();
  const dir = mkdtempSync(join(tmpdir(), "sy-bench-compact-"));
  try {
    const inner = ModelRouter.single(
      new AnthropicProvider({ apiKey: "k", baseUrl: sim.url }),
      "claude-bench",
    );
    let modelMs = 0;
    const router = {
      simulated: false,
      async *stream(...args: Parameters<ModelRouter["stream"]>): AsyncIterable<ProviderEvent> {
        const t0 = performance.now();
        for await (const e of inner.stream(...args)) yield e;
        modelMs += performance.now() - t0;
      },
    };
    sim.setDefault(() => ({ text: `## Goal\nbench\n${"A faithful summary line. ".repeat(40)}` }));
    // ~150k tokens: 600 turns of a question, a tool call and a 1k-character result.
    const events: TranscriptEvent[] = [];
    let id = 1;
    const push = (payload: TranscriptPayload) =>
      events.push({ id: id++, sessionKey: "s", sessionId: "x", runId: "r", payload, createdAt: 0 });
    for (let i = 0; i < 600; i++) {
      push({
        type: "user",
        inboxId: i,
        text: `question ${i} ${"about the logs ".repeat(20)}`,
        senderName: "Ada",
      });
      push({
        type: "assistant",
        text: "",
        toolCalls: [{ id: `c${i}`, name: "run_query", argumentsJson: `{"q":${i}}` }],
      });
      push({
        type: "tool_result",
        toolCallId: `c${i}`,
        name: "run_query",
        content: "row ".repeat(200),
        isError: false,
      });
      push({ type: "assistant", text: `answer ${i} ${"with details ".repeat(15)}`, toolCalls: [] });
    }
    const compactor = new Compactor({
      router,
      load: async () => events,
      workspaceDir: dir,
      contextWindow: () => 200_000,
      threshold: 0.5,
    });
    const turn: HookTurn = {
      sessionKey: "s",
      sessionId: "x",
      runId: "r",
      trigger: "message",
      signal: new AbortController().signal,
      acquireModelSlot: async () => ({ release() {} }),
      append: async (payloads) => {
        for (const p of payloads) push(p);
      },
    };
    const { toChatMessages } = await import("../src/harness/transcript.js");
    const context = { system: "bench", messages: toChatMessages(events) };
    const t0 = performance.now();
    const out = await compactor.hooks().onContextOverflow?.(context, {} as never, turn);
    const total = performance.now() - t0;
    const own = total - modelMs;
    progress(
      `context: compaction ${fmt(total)} ms in all, ${fmt(modelMs)} ms in model calls, ${out ? "compacted" : "NOT compacted"}`,
    );
    return {
      benchmark:
        "Compaction of a 150k-token history, simulator answering at once (gateway ms beyond the model calls)",
      figure: `${fmt(own, 1)} ms (${fmt(total, 1)} ms with ${fmt(modelMs, 1)} ms of model calls)${out ? "" : " — NOT COMPACTED"}`,
      target: "< 50 ms",
      met: own < 50 && out !== undefined,
      values: { ownMs: own, totalMs: total, modelMs },
    };
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function cacheShareRow(): Promise<BenchRow> {
  const gw = await startBenchGateway({ simulator: { firstByteDelayMs: 0, chunkDelayMs: 0 } });
  const client = new HttpClient({ maxSockets: 1, timeoutMs: 30_000 });
  try {
    for (let i = 0; i < 50; i++)
      await client.postJson(`${gw.url}/v1/chat`, { sender: "ada", text: `message ${i} about the plan` });
    const runs = await gw.running.store.runs.recent(50);
    let read = 0;
    let all = 0;
    for (const r of runs) {
      read += r.usage.cacheReadTokens;
      all += r.usage.inputTokens + r.usage.cacheReadTokens + r.usage.cacheWriteTokens;
    }
    const share = all > 0 ? read / all : 0;
    return {
      benchmark: "Cache-read share of input tokens, steady 50-turn chat (simulator prefix accounting)",
      figure: `${fmt(share * 100, 1)} % (${read} of ${all} input tokens)`,
      target: "≥ 90 %",
      met: share >= 0.9,
      values: { share, read, all },
    };
  } finally {
    client.close();
    await gw.stop();
  }
}
