/**
 * Transcript events → provider messages, and transcript repair: a crash can leave an assistant
 * tool call without its result; providers reject such a history, so the next run first
 * appends a synthetic error result for each orphaned call.
 */
import type { TranscriptEvent, TranscriptPayload } from "../store/repos/transcript-repo.js";
import { formatBytes } from "../util/format-bytes.js";
import type { ChatMessage } from "./providers/types.js";

/** Result text given to a tool call that a crash or shutdown interrupted. */
export const INTERRUPTED_TOOL_RESULT =
  "error: this tool call was interrupted (the gateway stopped before it finished); its outcome is unknown. Check before repeating it.";

/**
 * Finds assistant tool calls without a result. Returns the synthetic results to append
 * (in call order) so the history is valid again.
 */
export function findOrphanedToolCalls(events: readonly TranscriptEvent[]): TranscriptPayload[] {
  const answered = new Set<string>();
  for (const e of events) if (e.payload.type === "tool_result") answered.add(e.payload.toolCallId);
  const repairs: TranscriptPayload[] = [];
  for (const e of events) {
    if (e.payload.type !== "assistant") continue;
    for (const call of e.payload.toolCalls) {
      if (answered.has(call.id)) continue;
      repairs.push({
        type: "tool_result",
        toolCallId: call.id,
        name: call.name,
        content: INTERRUPTED_TOOL_RESULT,
        isError: true,
        synthetic: true,
      });
    }
  }
  return repairs;
}

/**
 * Converts transcript events to provider messages. Tool results are placed right after the
 * assistant message that asked for them; a history cut in the middle (the tail window) is
 * trimmed to start at a user message (or a scheduled trigger), so no result appears without
 * its call. A trigger (a heartbeat's instruction) is read as a user message.
 */
export function toChatMessages(all: readonly TranscriptEvent[]): ChatMessage[] {
  // After a compaction: its summary, then the events it kept, with cleared results as notes.
  let compaction: Extract<TranscriptPayload, { type: "compaction" }> | undefined;
  for (const e of all) if (e.payload.type === "compaction") compaction = e.payload;
  const events = compaction
    ? all.filter((e) => e.payload.type !== "compaction" && e.id >= (compaction?.keepFromId ?? 0))
    : all;
  const payloads = events.map((e) => e.payload);
  const start = payloads.findIndex((p) => p.type === "user" || p.type === "trigger");
  const out: ChatMessage[] = [];
  if (compaction?.summary) {
    out.push({
      role: "user",
      content: `[Summary of the earlier conversation, compacted to save context; the full transcript is kept]\n${compaction.summary}`,
    });
    out.push({ role: "assistant", content: "Understood; I continue from that summary.", toolCalls: [] });
  }
  if (start < 0) return out;
  const cleared = compaction?.cleared ?? {};
  const results = new Map<string, Extract<TranscriptPayload, { type: "tool_result" }>>();
  for (const p of payloads) if (p.type === "tool_result") results.set(p.toolCallId, p);
  for (const p of payloads.slice(start)) {
    switch (p.type) {
      case "user":
        out.push({ role: "user", content: userContent(p) });
        break;
      case "trigger":
        out.push({ role: "user", content: p.text });
        break;
      case "assistant": {
        out.push({ role: "assistant", content: p.text, toolCalls: p.toolCalls });
        for (const call of p.toolCalls) {
          const r = results.get(call.id);
          out.push({
            role: "tool",
            toolCallId: call.id,
            name: call.name,
            content: cleared[call.id] ?? r?.content ?? INTERRUPTED_TOOL_RESULT,
            isError: r?.isError ?? true,
          });
        }
        break;
      }
      case "tool_result":
      case "notice":
      case "compaction":
      case "jit":
        // Results were placed with their call; notices and JIT records are for people, not the
        // model (a JIT line reached the one call it was meant for).
        break;
    }
  }
  return out;
}

/**
 * What the model reads for a user message. In groups it is told who speaks, and the group
 * messages it was not addressed in since its last reply come first, marked as context. A reply
 * quotes what it answers; attachments are listed with their workspace paths. Never empty:
 * providers refuse an empty text block.
 */
export function userContent(p: Extract<TranscriptPayload, { type: "user" }>): string {
  const parts: string[] = [];
  if (p.replyTo) parts.push(`[Replying to: ${quote(p.replyTo)}]`);
  if (p.text.trim() !== "") parts.push(p.text);
  for (const a of p.attachments ?? []) parts.push(`[${describeAttachment(a)}]`);
  const body = parts.length > 0 ? parts.join("\n") : "(an empty message)";
  if (!p.isGroup) return body;
  const current = `${p.senderName}: ${body}`;
  if (!p.context?.length) return current;
  const lines = p.context.map((c) => `${c.senderName}: ${c.text}`);
  return `[Chat messages since your last reply — for context]\n${lines.join("\n")}\n\n[Current message — answer this]\n${current}`;
}

function quote(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return `"${oneLine.length > 300 ? `${oneLine.slice(0, 299)}…` : oneLine}"`;
}

type Attachment = NonNullable<Extract<TranscriptPayload, { type: "user" }>["attachments"]>[number];

const ATTACHMENT_WORDS: Record<Attachment["kind"], string> = {
  image: "image",
  audio: "audio",
  video: "video",
  document: "file",
  other: "file",
};

function describeAttachment(a: Attachment): string {
  const what = ATTACHMENT_WORDS[a.kind];
  const details = [a.mimeType, a.sizeBytes !== undefined ? formatBytes(a.sizeBytes) : undefined]
    .filter((d) => d !== undefined)
    .join(", ");
  return `Attached ${what}${a.name ? ` "${a.name}"` : ""} saved in the workspace at ${a.path}${details ? ` (${details})` : ""}`;
}
