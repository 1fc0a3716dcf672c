/**
 * threadItems: a transcript as the control page's thread — each tool call with its arguments,
 * results cut with their length kept, compactions and the lines people did not write marked.
 */
import { describe, expect, it } from "vitest";
import { THREAD_TEXT_MAX, threadItems } from "../../src/admin/thread.js";
import type { TranscriptEvent, TranscriptPayload } from "../../src/store/repos/transcript-repo.js";

let id = 0;
const ev = (payload: TranscriptPayload): TranscriptEvent => ({
  id: ++id,
  sessionKey: "agent:main:main",
  sessionId: "ses-1",
  runId: "run-1",
  payload,
  createdAt: 1_000 + id,
});

describe("threadItems", () => {
  it("shows messages, tool calls with arguments, cut results, compactions and notes, in order", () => {
    const long = "y".repeat(THREAD_TEXT_MAX + 500);
    const items = threadItems([
      ev({ type: "trigger", origin: "cron", text: "Write the digest" }),
      ev({ type: "user", inboxId: 1, text: "hi", senderName: "Ann" }),
      ev({
        type: "assistant",
        text: "Looking.",
        toolCalls: [{ id: "c1", name: "read_file", argumentsJson: '{"path":"a.md"}' }],
      }),
      ev({ type: "tool_result", toolCallId: "c1", name: "read_file", content: long, isError: false }),
      ev({ type: "assistant", text: "", toolCalls: [{ id: "c2", name: "list_files", argumentsJson: "{}" }] }),
      ev({ type: "compaction", summary: "Ann said hi.", keepFromId: 3, cleared: {}, tokensBefore: 9_000 }),
      ev({ type: "jit", rule: "budget", line: "Two calls left.", call: 3 }),
      ev({ type: "notice", text: "stopped by the owner" }),
    ]);
    expect(items.map((i) => i.kind)).toEqual([
      "note",
      "user",
      "assistant",
      "tool_call",
      "tool_result",
      "tool_call",
      "compaction",
      "note",
      "note",
    ]);
    expect(items[0]).toMatchObject({ type: "cron", text: "Write the digest" });
    expect(items[3]).toMatchObject({ callId: "c1", name: "read_file", args: '{"path":"a.md"}' });
    const result = items[4] as { text: string; chars: number };
    expect(result.chars).toBe(THREAD_TEXT_MAX + 500);
    expect(result.text).toHaveLength(THREAD_TEXT_MAX + 1);
    expect(result.text.endsWith("…")).toBe(true);
    expect(items[6]).toMatchObject({ summary: "Ann said hi.", tokensBefore: 9_000 });
    expect(items[7]).toMatchObject({ type: "jit", text: "budget: Two calls left." });
    expect(items[8]).toMatchObject({ type: "notice", text: "stopped by the owner" });
  });
});
