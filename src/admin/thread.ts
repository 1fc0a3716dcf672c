/**
 * A session's transcript as the control page shows it: person and agent messages, each tool
 * call with its arguments, results cut to a readable length, compactions, scheduled-work
 * instructions, JIT lines and notices. Pure: events in, items out.
 */
import type { TranscriptEvent } from "../store/repos/transcript-repo.js";
import type { ThreadItem } from "./contract.js";

/** Longest argument or result text sent to the page, in characters. */
export const THREAD_TEXT_MAX = 2_000;

function cut(text: string, max = THREAD_TEXT_MAX): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The transcript events, oldest first, as thread items (one event may give several). */
export function threadItems(events: readonly TranscriptEvent[]): ThreadItem[] {
  const items: ThreadItem[] = [];
  for (const e of events) {
    const { id, createdAt: at, payload: p } = e;
    switch (p.type) {
      case "user":
        items.push({ kind: "user", id, at, sender: p.senderName, text: p.text });
        break;
      case "assistant":
        if (p.text !== "") items.push({ kind: "assistant", id, at, text: p.text });
        for (const call of p.toolCalls)
          items.push({
            kind: "tool_call",
            id,
            at,
            callId: call.id,
            name: call.name,
            args: cut(call.argumentsJson),
          });
        break;
      case "tool_result":
        items.push({
          kind: "tool_result",
          id,
          at,
          callId: p.toolCallId,
          name: p.name,
          text: cut(p.content),
          chars: p.content.length,
          isError: p.isError,
        });
        break;
      case "compaction":
        items.push({ kind: "compaction", id, at, summary: cut(p.summary), tokensBefore: p.tokensBefore });
        break;
      case "trigger":
        items.push({ kind: "note", id, at, type: p.origin, text: cut(p.text) });
        break;
      case "jit":
        items.push({ kind: "note", id, at, type: "jit", text: `${p.rule}: ${cut(p.line)}` });
        break;
      case "notice":
        items.push({ kind: "note", id, at, type: "notice", text: cut(p.text) });
        break;
      default: {
        const unknown = p as { type?: unknown };
        items.push({ kind: "note", id, at, type: String(unknown.type), text: cut(JSON.stringify(p)) });
      }
    }
  }
  return items;
}
