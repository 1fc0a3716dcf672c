/**
 * Transcript → provider messages: repair of tool calls a crash left without results, the tail
 * window trimmed to start at a user message, and what the model reads for a user message.
 */
import { describe, expect, it } from "vitest";
import {
  INTERRUPTED_TOOL_RESULT,
  findOrphanedToolCalls,
  toChatMessages,
  userContent,
} from "../../src/harness/transcript.js";
import type { TranscriptEvent, TranscriptPayload } from "../../src/store/repos/transcript-repo.js";

let nextId = 0;
function events(...payloads: TranscriptPayload[]): TranscriptEvent[] {
  return payloads.map((payload) => ({
    id: ++nextId,
    sessionKey: "k",
    sessionId: "s",
    runId: "r",
    payload,
    createdAt: 0,
  }));
}

const user = (text: string, over: Partial<Extract<TranscriptPayload, { type: "user" }>> = {}) =>
  ({ type: "user", inboxId: ++nextId, text, senderName: "Ann", ...over }) as const;
const call = (id: string, name = "read_file") => ({ id, name, argumentsJson: "{}" });

describe("findOrphanedToolCalls", () => {
  it("gives every call without a result a synthetic error result, in call order", () => {
    const tail = events(
      user("hi"),
      { type: "assistant", text: "", toolCalls: [call("a"), call("b", "list_files"), call("c")] },
      { type: "tool_result", toolCallId: "b", name: "list_files", content: "x", isError: false },
    );
    expect(findOrphanedToolCalls(tail)).toEqual([
      {
        type: "tool_result",
        toolCallId: "a",
        name: "read_file",
        content: INTERRUPTED_TOOL_RESULT,
        isError: true,
        synthetic: true,
      },
      {
        type: "tool_result",
        toolCallId: "c",
        name: "read_file",
        content: INTERRUPTED_TOOL_RESULT,
        isError: true,
        synthetic: true,
      },
    ]);
    expect(
      findOrphanedToolCalls(events(user("hi"), { type: "assistant", text: "ok", toolCalls: [] })),
    ).toEqual([]);
  });
});

describe("toChatMessages", () => {
  it("starts at the first user message and puts each result right after its call", () => {
    const tail = events(
      { type: "tool_result", toolCallId: "old", name: "read_file", content: "cut off", isError: false },
      { type: "assistant", text: "cut off", toolCalls: [] },
      user("question"),
      { type: "assistant", text: "let me look", toolCalls: [call("t1")] },
      { type: "notice", text: "for people only" },
      { type: "tool_result", toolCallId: "t1", name: "read_file", content: "file body", isError: false },
      { type: "assistant", text: "answer", toolCalls: [] },
    );
    expect(toChatMessages(tail)).toEqual([
      { role: "user", content: "question" },
      { role: "assistant", content: "let me look", toolCalls: [call("t1")] },
      { role: "tool", toolCallId: "t1", name: "read_file", content: "file body", isError: false },
      { role: "assistant", content: "answer", toolCalls: [] },
    ]);
    expect(toChatMessages(events({ type: "notice", text: "x" }))).toEqual([]);
  });
});

describe("userContent", () => {
  it("is the text of a direct message", () => {
    expect(userContent(user("hello"))).toBe("hello");
  });

  it("quotes what a reply answers and lists attachments with their workspace paths", () => {
    const content = userContent(
      user("what about this?", {
        replyTo: "The meeting   is on\nTuesday",
        attachments: [
          {
            kind: "image",
            path: "inbox/telegram/42/7-photo.jpg",
            mimeType: "image/jpeg",
            sizeBytes: 150_000,
          },
          { kind: "document", path: "inbox/telegram/42/7-report.pdf", name: "report.pdf" },
        ],
      }),
    );
    expect(content).toBe(
      [
        '[Replying to: "The meeting is on Tuesday"]',
        "what about this?",
        "[Attached image saved in the workspace at inbox/telegram/42/7-photo.jpg (image/jpeg, 146.5 KB)]",
        '[Attached file "report.pdf" saved in the workspace at inbox/telegram/42/7-report.pdf]',
      ].join("\n"),
    );
  });

  it("is never empty: a photo without a caption still says what arrived", () => {
    expect(userContent(user("", { attachments: [{ kind: "audio", path: "inbox/v.ogg" }] }))).toBe(
      "[Attached audio saved in the workspace at inbox/v.ogg]",
    );
    expect(userContent(user("  "))).toBe("(an empty message)");
  });

  it("names the speaker in groups and gives earlier unaddressed messages as context", () => {
    expect(userContent(user("hi all", { isGroup: true }))).toBe("Ann: hi all");
    expect(
      userContent(
        user("@bot what do you think?", {
          isGroup: true,
          context: [
            { senderName: "Bob", text: "lunch at 12?" },
            { senderName: "Cy", text: "or 1" },
          ],
        }),
      ),
    ).toBe(
      "[Chat messages since your last reply — for context]\nBob: lunch at 12?\nCy: or 1\n\n[Current message — answer this]\nAnn: @bot what do you think?",
    );
  });
});
