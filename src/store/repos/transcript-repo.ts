/**
 * The transcript's contract: everything a run records, per session id, in append order, and
 * who may append (the holder of the session's lease).
 */
import type { Attachment } from "../../channels/types.js";
import type { ToolCall } from "../../harness/providers/types.js";
import type { SessionFence } from "./lease-repo.js";

/** Everything a run records, in order. A tagged union, stored as JSON. */
export type TranscriptPayload =
  | {
      type: "user";
      inboxId: number;
      text: string;
      senderName: string;
      /** Set for group chats: the model is told who is speaking. */
      isGroup?: boolean;
      /** Unaddressed group messages before this one (see InboundMessage.groupContext). */
      context?: Array<{ senderName: string; text: string }>;
      /** Text of the message this one replies to (InboundMessage.replyToText), capped. */
      replyTo?: string;
      /** Files that came with it, saved in the workspace (paths relative to it). */
      attachments?: Attachment[];
    }
  | { type: "assistant"; text: string; toolCalls: ToolCall[] }
  | {
      type: "tool_result";
      toolCallId: string;
      name: string;
      content: string;
      isError: boolean;
      synthetic?: boolean;
    }
  | { type: "notice"; text: string }
  /**
   * Text the model reads as a user turn that no person wrote: the instruction of scheduled work
   * (a heartbeat, cron job, wake), or a hook's nudge to continue (`continuation`).
   */
  | { type: "trigger"; origin: TriggerOrigin; text: string }
  /**
   * Compaction: from here on the model reads `summary` in place of the events before
   * `keepFromId` (kept on disk), and the results of the tool calls in `cleared` as their notes.
   */
  | {
      type: "compaction";
      summary: string;
      keepFromId: number;
      cleared: Record<string, string>;
      tokensBefore: number;
    }
  /**
   * A just-in-time instruction (harness/jit/): before model call `call` of the run, rule `rule`
   * fired and `line` was added to that call only. A record for people (`sessions show`, the
   * control page); the model never reads it back.
   */
  | { type: "jit"; rule: string; line: string; call: number };

/** Who wrote a trigger event. */
export type TriggerOrigin = "heartbeat" | "cron" | "wake" | "subagent" | "assignment" | "continuation";

/** One recorded event of a session id. */
export interface TranscriptEvent {
  id: number;
  sessionKey: string;
  sessionId: string;
  runId: string | null;
  payload: TranscriptPayload;
  createdAt: number;
}

/**
 * A session's events in append order. The writers of one session's transcript are the run
 * holding its lease (claim, append and commitTurn carry its fence), so they are serialized by
 * the lease and a reader of one session may resume from the last id it read.
 */
export interface TranscriptRepo {
  /**
   * Appends in order if `lease.owner` is the session's lease holder under `lease.fence` (as
   * commitTurn checks it); a user event for an inbox id that already has one is skipped.
   * Returns false and writes nothing if the lease is not current.
   */
  append(
    sessionKey: string,
    sessionId: string,
    runId: string | null,
    payloads: TranscriptPayload[],
    now: number,
    lease: SessionFence,
  ): Promise<boolean>;
  /** The last `limit` events of a session id, oldest first. */
  tail(sessionKey: string, sessionId: string, limit: number): Promise<TranscriptEvent[]>;
}
