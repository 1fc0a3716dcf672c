/**
 * A transcript folded for reading: each tool call joined with its result (by call id), so the
 * thread shows one foldable block per call; a result whose call is not in view stands alone.
 */
import type { ThreadItem } from "../../../src/admin/contract.js";

type Call = Extract<ThreadItem, { kind: "tool_call" }>;
type Result = Extract<ThreadItem, { kind: "tool_result" }>;

/** One entry of the folded thread. */
export type FoldedItem =
  | Exclude<ThreadItem, Call | Result>
  | { kind: "tool"; id: number; at: number; call: Call; result?: Result }
  | { kind: "orphan_result"; id: number; at: number; result: Result };

/** Folds `thread` (oldest first); keeps its order, placing each call where it was made. */
export function foldThread(thread: readonly ThreadItem[]): FoldedItem[] {
  const out: FoldedItem[] = [];
  const open = new Map<string, Extract<FoldedItem, { kind: "tool" }>>();
  for (const item of thread) {
    if (item.kind === "tool_call") {
      const tool = { kind: "tool" as const, id: item.id, at: item.at, call: item };
      open.set(item.callId, tool);
      out.push(tool);
    } else if (item.kind === "tool_result") {
      const tool = open.get(item.callId);
      if (tool && !tool.result) {
        (tool as { result?: Result }).result = item;
        open.delete(item.callId);
      } else out.push({ kind: "orphan_result", id: item.id, at: item.at, result: item });
    } else out.push(item);
  }
  return out;
}
