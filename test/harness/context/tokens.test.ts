import { describe, expect, it } from "vitest";
import {
  TokenCounter,
  estimateTokens,
  estimateTokensOnce,
  isNear,
} from "../../../src/harness/context/tokens.js";
import type { ChatMessage, ToolSpec } from "../../../src/harness/providers/types.js";

const PROSE = `Switchyard is a small daemon that sits between the chat platforms you already use and an
agent you run yourself. Messages arrive from Telegram, Slack or Discord, are routed to a session,
and wait in a lane until the model is free. The agent reads its workspace files on every turn, so
editing AGENTS.md or SOUL.md changes its behaviour on the next message without a restart.

When a provider is rate limited, the router waits for the cooling key or moves to the next model in
the fallback chain, and tells the person once if the wait is long. Nothing is lost when the process
restarts: the inbox and the transcript are written to SQLite before any reply is sent, and a turn
that was cut short is resumed or reported. Costs are counted per call, with the prices of each
vendor, and a daily budget stops new calls before it is exceeded rather than after.`;

const CODE = `export class SessionLane {
  readonly #queue: Array<() => Promise<void>> = [];
  #running = false;

  constructor(private readonly options: { maxQueued: number; onDrop?: (reason: string) => void }) {}

  /** Adds a task; returns false when the lane is full and the task was dropped. */
  enqueue(task: () => Promise<void>): boolean {
    if (this.#queue.length >= this.options.maxQueued) {
      this.options.onDrop?.("queue_full");
      return false;
    }
    this.#queue.push(task);
    void this.#drain();
    return true;
  }

  async #drain(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (let task = this.#queue.shift(); task !== undefined; task = this.#queue.shift()) {
        await task().catch((err: unknown) => console.error("lane task failed", err));
      }
    } finally {
      this.#running = false;
    }
  }
}`;

const JSON_SAMPLE = JSON.stringify(
  {
    sessions: Array.from({ length: 12 }, (_, i) => ({
      key: `telegram:dm:${100_200 + i}`,
      model: i % 2 ? "anthropic/claude-sonnet-4-5" : "openai/gpt-4.1-mini",
      turns: 3 + i,
      lastActiveAt: `2025-06-${String(10 + i).padStart(2, "0")}T08:15:00.000Z`,
      usage: { inputTokens: 1_200 * i, outputTokens: 340 * i, cacheReadTokens: 0 },
      tags: ["owner", i % 3 === 0 ? "group" : "dm"],
    })),
  },
  null,
  2,
);

describe("TokenCounter (lazy tokenizer)", () => {
  // First in the file: nothing may have loaded the tokenizer yet.
  it("does not load the tokenizer until exact() is called", async () => {
    const counter = new TokenCounter();
    expect(TokenCounter.tokenizerLoaded).toBe(false);
    counter.estimate(PROSE);
    counter.estimateRequest({ system: PROSE, messages: [{ role: "user", content: "hi" }], tools: [] });
    expect(TokenCounter.tokenizerLoaded).toBe(false);
    expect(await counter.exact("hello world")).toBe(2);
    expect(TokenCounter.tokenizerLoaded).toBe(true);
  });
});

describe("estimateTokens", () => {
  it.each([
    { kind: "prose", text: PROSE },
    { kind: "code", text: CODE },
    { kind: "JSON", text: JSON_SAMPLE },
    { kind: "compact JSON", text: JSON.stringify(JSON.parse(JSON_SAMPLE)) },
  ])("is within 35% of o200k_base on $kind", async ({ text }) => {
    const exact = await new TokenCounter().exact(text);
    const estimate = estimateTokens(text);
    expect(Math.abs(estimate / exact - 1)).toBeLessThan(0.35);
  });

  it("counts CJK characters and emoji about one token each", () => {
    expect(estimateTokens("日本語のテキスト")).toBe(8);
    expect(estimateTokens("👋🎉🚀")).toBe(3);
  });

  it("counts a whitespace run once, and a single space not at all", () => {
    expect(estimateTokens("hello world")).toBe(2);
    expect(estimateTokens(`hello${" ".repeat(40)}world`)).toBe(3);
    expect(estimateTokens("hello\n\n\nworld")).toBe(3);
    expect(estimateTokens("")).toBe(0);
  });

  // No wall-clock assertion (they flake on a loaded machine; the estimate's cost is part of the
  // bench's per-turn rows): 100 KB of mixed text gets a positive, stable estimate.
  it("estimates 100 KB of mixed text", () => {
    const text = `${PROSE}\n${CODE}\n${JSON_SAMPLE}\n`.repeat(40).slice(0, 100_000);
    const first = estimateTokens(text);
    expect(first).toBeGreaterThan(10_000);
    expect(estimateTokens(text)).toBe(first);
  });
});

describe("estimateTokensOnce", () => {
  it("gives estimateTokens' count for small and large texts, the same again from memory", () => {
    const small = "hello world";
    const large = "The system prompt: tools, files and rules.\n".repeat(200);
    expect(estimateTokensOnce(small)).toBe(estimateTokens(small));
    expect(estimateTokensOnce(large)).toBe(estimateTokens(large));
    expect(estimateTokensOnce(large)).toBe(estimateTokens(large));
    // Past its 16 entries it drops the oldest, not the answer.
    for (let i = 0; i < 20; i++) estimateTokensOnce(`${large}${i}`);
    expect(estimateTokensOnce(`${large}19`)).toBe(estimateTokens(`${large}19`));
    expect(estimateTokensOnce(large)).toBe(estimateTokens(large));
  });
});

describe("TokenCounter", () => {
  const tool: ToolSpec = Object.freeze({
    name: "read_file",
    description: "Read a text file from the workspace.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  });

  it("estimates a request from its system prompt, messages, tool calls and tools", () => {
    const counter = new TokenCounter();
    const messages: ChatMessage[] = [
      { role: "user", content: "What is in notes.md?" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "read_file", argumentsJson: '{"path":"notes.md"}' }],
      },
      { role: "tool", toolCallId: "c1", name: "read_file", content: PROSE, isError: false },
    ];
    const bare = counter.estimateRequest({ system: "", messages: [], tools: [] });
    const full = counter.estimateRequest({ system: PROSE, messages, tools: [tool] });
    const parts =
      estimateTokens(PROSE) * 2 +
      estimateTokens(messages[0]?.content ?? "") +
      estimateTokens(JSON.stringify(tool)) +
      estimateTokens('{"path":"notes.md"}');
    expect(bare).toBeGreaterThan(0);
    expect(full).toBeGreaterThan(parts);
    expect(full).toBeLessThan(parts + 60);
    expect(counter.estimateRequest({ system: PROSE, messages, tools: [tool] })).toBe(full);
  });

  it("moves estimates toward observed actuals, within [0.5, 2]", () => {
    const counter = new TokenCounter();
    const request = { system: PROSE, messages: [] as ChatMessage[], tools: [] };
    const first = counter.estimateRequest(request);
    const actual = Math.round(first * 1.3);
    let previous = first;
    for (let i = 0; i < 20; i++) {
      const estimate = counter.estimateRequest(request);
      counter.observe(estimate, actual);
      const next = counter.estimateRequest(request);
      expect(next).toBeGreaterThanOrEqual(previous);
      previous = next;
    }
    expect(Math.abs(previous / actual - 1)).toBeLessThan(0.02);
    expect(counter.estimate(PROSE)).toBeGreaterThan(estimateTokens(PROSE));

    for (let i = 0; i < 50; i++) counter.observe(counter.estimateRequest(request), first * 100);
    expect(counter.ratio).toBeCloseTo(2, 5);
    for (let i = 0; i < 50; i++) counter.observe(counter.estimateRequest(request), 1);
    expect(counter.ratio).toBeCloseTo(0.5, 5);
  });

  it("ignores observations that are not positive numbers", () => {
    const counter = new TokenCounter();
    counter.observe(0, 100);
    counter.observe(100, 0);
    counter.observe(Number.NaN, 100);
    counter.observe(100, Number.POSITIVE_INFINITY);
    expect(counter.ratio).toBe(1);
  });

  it("counts special-token text as plain text", async () => {
    expect(await new TokenCounter().exact("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("rejects bad options, naming the field", () => {
    expect(() => new TokenCounter({ smoothing: 0 })).toThrow(/smoothing/);
    expect(() => new TokenCounter({ initialRatio: 3 })).toThrow(/initialRatio/);
  });
});

describe("isNear", () => {
  it("is true within the margin of the threshold, on either side", () => {
    expect(isNear(95_000, 100_000)).toBe(true);
    expect(isNear(109_999, 100_000)).toBe(true);
    expect(isNear(89_000, 100_000)).toBe(false);
    expect(isNear(89_000, 100_000, 0.2)).toBe(true);
    expect(new TokenCounter().isNear(101, 100)).toBe(true);
  });
});
