/** The thread folds each tool call with its result; a result without its call stands alone. */
import { describe, expect, it } from "vitest";
import type { ThreadItem } from "../../src/admin/contract.js";
import { foldThread } from "../../ui/src/lib/thread.js";

describe("foldThread", () => {
  it("joins calls and results by call id, in the order the calls were made", () => {
    const thread: ThreadItem[] = [
      { kind: "user", id: 1, at: 1, sender: "ana", text: "hi" },
      { kind: "tool_call", id: 2, at: 2, callId: "a", name: "read", args: "{}" },
      { kind: "tool_call", id: 3, at: 2, callId: "b", name: "grep", args: "{}" },
      { kind: "tool_result", id: 4, at: 3, callId: "b", name: "grep", text: "x", chars: 1, isError: false },
      { kind: "tool_result", id: 5, at: 3, callId: "a", name: "read", text: "y", chars: 9000, isError: true },
      {
        kind: "tool_result",
        id: 6,
        at: 3,
        callId: "gone",
        name: "read",
        text: "z",
        chars: 1,
        isError: false,
      },
      { kind: "compaction", id: 7, at: 4, summary: "s", tokensBefore: 900 },
      { kind: "assistant", id: 8, at: 5, text: "done" },
    ];
    const folded = foldThread(thread);
    expect(folded.map((f) => `${f.kind}:${f.id}`)).toEqual([
      "user:1",
      "tool:2",
      "tool:3",
      "orphan_result:6",
      "compaction:7",
      "assistant:8",
    ]);
    const [, a, b] = folded;
    expect(a?.kind === "tool" && a.result?.id).toBe(5);
    expect(b?.kind === "tool" && b.result?.id).toBe(4);
  });

  it("leaves a call without a result open", () => {
    const folded = foldThread([{ kind: "tool_call", id: 1, at: 1, callId: "a", name: "x", args: "{}" }]);
    expect(folded[0]?.kind === "tool" && folded[0].result).toBeUndefined();
  });
});
