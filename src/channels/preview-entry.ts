/** What StreamingPreviews keeps of one preview (preview.ts), and the key previews are found by. */
import type { TimerHandle } from "../util/clock.js";
import type { PreviewTarget } from "./preview.js";

/** One live preview: its message, the text it should show, and its edit state. */
export interface PreviewEntry {
  /** Set once the preview message exists. */
  id: string | undefined;
  /** Everything streamed so far. */
  text: string;
  /** What the message shows now ("" when unknown: a preview adopted from an earlier process). */
  shown: string;
  createdAt: number;
  lastEditAt: number;
  timer: TimerHandle | undefined;
  /** The send or edit in flight; edits are chained on it, so they never overlap. */
  inflight: Promise<void>;
  /** The final text is being put in place: no more partial edits. */
  closed: boolean;
  /** It shows a status (`status`), not streamed text: the turn's first delta replaces it. */
  status: boolean;
}

/** The key of a turn's preview: its chat, topic and the message it answers. */
export function previewKey(target: PreviewTarget): string {
  return `${target.chatId}:${target.threadId ?? ""}:${target.replyTo ?? ""}`;
}
