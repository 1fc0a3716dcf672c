/** How `switchyard sessions show` prints a compaction (where it cut, what it cleared, its summary) and a JIT line. */
import { describe, expect, it } from "vitest";
import { formatTranscriptEvent } from "../../src/cli/sessions.js";

describe("formatTranscriptEvent", () => {
  it("shows a compaction with its cut point, cleared results and summary", () => {
    const text = formatTranscriptEvent({
      id: 90,
      sessionKey: "s",
      sessionId: "x",
      runId: "r",
      createdAt: Date.UTC(2026, 10, 24, 9, 0),
      payload: {
        type: "compaction",
        summary: "## Goal\nShip it.",
        keepFromId: 71,
        cleared: { a: "note", b: "note" },
        tokensBefore: 14_200,
      },
    });
    expect(text).toMatch(
      /── compaction \(about 14200 tokens before; events before #71 summarized, 2 tool results cleared\) ──\n {2}summary: ## Goal\n/,
    );
    expect(text).toContain("Ship it.");
  });

  it("shows a JIT instruction with its rule and the model call it was added to", () => {
    const text = formatTranscriptEvent({
      id: 91,
      sessionKey: "s",
      sessionId: "x",
      runId: "r",
      createdAt: Date.UTC(2026, 10, 24, 9, 0),
      payload: { type: "jit", rule: "serial-reads", line: "read the files you need in one step", call: 4 },
    });
    expect(text).toMatch(
      /\] jit serial-reads \(before model call 4\): read the files you need in one step\n$/,
    );
  });
});
