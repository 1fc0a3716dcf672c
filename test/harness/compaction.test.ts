/**
 * The compaction ladder over an in-memory transcript with a scripted model (our own provider
 * port): replayable results cleared to notes, large others saved to .agent-output/, a summary
 * that keeps identifiers, and a summary that fails its audit twice leaves only the cheap steps.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditSummary, identifiersIn } from "../../src/harness/compaction-text.js";
import { Compactor } from "../../src/harness/compaction.js";
import type { HookTurn } from "../../src/harness/hooks.js";
import { ModelRouter } from "../../src/harness/models/model-router.js";
import type { ModelProvider, ModelRequest, ProviderEvent } from "../../src/harness/providers/types.js";
import { toChatMessages } from "../../src/harness/transcript.js";
import type { TranscriptEvent, TranscriptPayload } from "../../src/store/repos/transcript-repo.js";

const ID = "9b1d2c3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e";

class Summarizer implements ModelProvider {
  readonly id = "scripted";
  readonly simulated = false;
  requests: ModelRequest[] = [];
  constructor(private readonly answer: (req: ModelRequest) => string) {}
  async *stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    this.requests.push(request);
    yield { type: "text_delta", text: this.answer(request) };
    yield { type: "stop", reason: "end_turn" };
  }
}

let dir: string;
let events: TranscriptEvent[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sy-compact-"));
  events = [];
  let id = 1;
  const push = (payload: TranscriptPayload) =>
    events.push({ id: id++, sessionKey: "s", sessionId: "x", runId: "r", payload, createdAt: 0 });
  push({ type: "user", inboxId: 0, text: `start project ${ID}`, senderName: "Ada" });
  for (let i = 0; i < 40; i++) {
    push({ type: "user", inboxId: i + 1, text: `step ${i}`, senderName: "Ada" });
    push({
      type: "assistant",
      text: "",
      toolCalls: [{ id: `r${i}`, name: "read_file", argumentsJson: `{"path":"f${i}"}` }],
    });
    push({
      type: "tool_result",
      toolCallId: `r${i}`,
      name: "read_file",
      content: "x".repeat(3_000),
      isError: false,
    });
    push({
      type: "assistant",
      text: "",
      toolCalls: [{ id: `q${i}`, name: "run_query", argumentsJson: "{}" }],
    });
    push({
      type: "tool_result",
      toolCallId: `q${i}`,
      name: "run_query",
      content: "y".repeat(3_000),
      isError: false,
    });
    push({ type: "assistant", text: `done ${i}`, toolCalls: [] });
  }
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function setup(answer: (req: ModelRequest) => string) {
  const provider = new Summarizer(answer);
  const compactor = new Compactor({
    router: ModelRouter.single(provider, "m"),
    load: async () => events,
    workspaceDir: dir,
    contextWindow: () => 4_000,
    keepRecentTokens: 2_000,
  });
  let id = events.length + 1;
  const turn: HookTurn = {
    sessionKey: "s",
    sessionId: "x",
    runId: "r",
    trigger: "message",
    signal: new AbortController().signal,
    acquireModelSlot: async () => ({ release() {} }),
    append: async (payloads) => {
      for (const payload of payloads)
        events.push({ id: id++, sessionKey: "s", sessionId: "x", runId: "r", payload, createdAt: 0 });
    },
  };
  return { provider, compactor, turn };
}

describe("Compactor", () => {
  it("clears replayable results, saves the others, summarizes the rest keeping identifiers", async () => {
    const { compactor, turn } = setup(
      (req) =>
        `## Goal\nproject ${ID}\n## Progress\n${"careful summary ".repeat(20)}${identifiersIn(JSON.stringify(req.messages)).join(" ")}`,
    );
    const context = { system: "sys", messages: toChatMessages(events) };
    const out = await compactor.hooks().transformContext?.(context, turn);
    const compaction = events.at(-1)?.payload;
    expect(compaction?.type).toBe("compaction");
    if (compaction?.type !== "compaction") return;
    expect(compaction.summary).toContain(ID);
    expect(compaction.cleared.r0).toMatch(
      /cleared to save context: the result of read_file\(\{"path":"f0"\}\)/,
    );
    expect(compaction.cleared.q0).toMatch(/saved to \.agent-output\/compacted-q0\.txt/);
    expect(readFileSync(join(dir, ".agent-output", "compacted-q0.txt"), "utf8")).toBe("y".repeat(3_000));
    const messages = out?.messages ?? [];
    expect(messages[0]?.content).toContain(ID);
    // The kept turns start with a user message, and every tool call is followed by its result.
    const firstKept = messages[2];
    expect(firstKept?.role).toBe("user");
    for (const [i, m] of messages.entries())
      if (m.role === "assistant")
        for (const c of m.toolCalls)
          expect(messages.slice(i + 1).some((x) => x.role === "tool" && x.toolCallId === c.id)).toBe(true);
  });

  it("a summary that fails its audit twice leaves only the cheaper steps", async () => {
    const { compactor, turn, provider } = setup(() => "");
    await compactor
      .hooks()
      .onContextOverflow?.({ system: "sys", messages: toChatMessages(events) }, {} as never, turn);
    const compaction = events.at(-1)?.payload;
    expect(compaction?.type).toBe("compaction");
    if (compaction?.type !== "compaction") return;
    expect(compaction.summary).toBe("");
    expect(Object.keys(compaction.cleared).length).toBeGreaterThan(0);
    expect(provider.requests.filter((r) => r.system.startsWith("You compact")).length).toBeGreaterThanOrEqual(
      2,
    );
    expect(existsSync(join(dir, ".agent-output"))).toBe(true);
  });

  it("under the threshold nothing happens, unless /compact asked for it", async () => {
    const { compactor, turn } = setup(
      (req) =>
        `## Goal\nproject ${ID}\n${"careful summary ".repeat(20)}${identifiersIn(JSON.stringify(req.messages)).join(" ")}`,
    );
    const small = { system: "sys", messages: toChatMessages(events.slice(0, 7)) };
    const count = events.length;
    expect(await compactor.hooks().transformContext?.(small, turn)).toBe(small);
    expect(events).toHaveLength(count);
    compactor.request("s");
    await compactor.hooks().transformContext?.(small, turn);
    expect(events.at(-1)?.payload.type).toBe("compaction");
    // Asked once: the next turn is back to the threshold rule.
    const after = events.length;
    await compactor.hooks().transformContext?.(small, turn);
    expect(events).toHaveLength(after);
  });

  it("audits summaries: empty, too short, or missing identifiers", () => {
    expect(auditSummary("", [])).toBe("the summary is empty");
    expect(auditSummary("short", [])).toMatch(/shorter than 200/);
    expect(auditSummary("x".repeat(300), [ID])).toBe(`missing ${ID}`);
    expect(auditSummary(`${"x".repeat(300)} ${ID}`, [ID])).toBeUndefined();
  });
});
