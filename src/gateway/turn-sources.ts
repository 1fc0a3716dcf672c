/**
 * What starts a turn, as data the turn runner needs: which inbox rows it answers (claimed in one
 * step), what is recorded first, where replies go and which answer is delivered. A message and a
 * heartbeat differ only here; the turn runner runs both the same way.
 */
import type { ChatTarget } from "../channels/types.js";
import type { ChatContext, TurnTrigger } from "../harness/agent-session.js";
import { heartbeatDelivery, heartbeatTriggerText } from "../harness/heartbeat.js";
import type { InboxRecord } from "../store/repos/inbox-repo.js";
import type { SessionFence } from "../store/repos/lease-repo.js";
import type { RunTrigger } from "../store/repos/run-repo.js";
import type { TranscriptPayload } from "../store/repos/transcript-repo.js";
import type { Store } from "../store/types.js";
import type { ToolRegistry } from "../harness/tools/registry.js";
import type { Asker } from "../harness/tools/types.js";
import type { SubagentEnd } from "../store/repos/subagent-repo.js";
import { chatTargetOf } from "./replies.js";

/** A turn's work, claimed and ready to run. */
export interface PreparedTurn {
  trigger: TurnTrigger;
  /** What the run record calls it ("recovery" for a message claimed again after a crash). */
  runTrigger: RunTrigger;
  /** Recorded before the context is loaded (a heartbeat's instruction). */
  inputs: TranscriptPayload[];
  /** Inbox rows the turn answers; steer mode adds to it while the turn runs. */
  inboxIds: number[];
  /** Where replies go; null: nowhere (the turn only updates the transcript). */
  target: ChatTarget | null;
  replyTo?: string;
  recipientId?: string;
  /** A direct chat: recorded as the session's last target (where heartbeats report). */
  lastTarget?: ChatTarget;
  /** Messages queued meanwhile join the turn at tool boundaries. */
  steer: boolean;
  /**
   * A person is waiting: typing is shown, live text streamed, and a failure is told in the chat.
   * False for background work, whose failures are only logged and recorded.
   */
  interactive: boolean;
  /**
   * The chat as the prompt describes it. Private (MEMORY.md and daily notes are loaded): a
   * direct chat on a platform or the console, and the agent's own background work; never a
   * group, and never the HTTP API (any client with the token may use it).
   */
  chat: ChatContext;
  /** The text of the final answer that is delivered; null: deliver nothing. */
  deliver(answer: string): string | null;
  /** Tools offered this turn instead of the session's (an assignment's run adds its own). */
  tools?: ToolRegistry;
  /**
   * A sub-agent child's turn: its short prompt and tools (TurnSpec.helper), the parent's asker
   * and chat for the tool policy (the child delivers nothing itself), its own tool-call bound,
   * and its end, computed from the answer (or the failure) and committed with the turn.
   */
  subagent?: {
    helper: { tools: readonly string[] };
    asker: Asker;
    policyTarget: ChatTarget | null;
    maxToolCallsPerRun: number;
    /** The session its usage counts against: the top-level session that spawned it. */
    billTo: string;
    end(answer: string | null, error: string | null): Promise<SubagentEnd>;
  };
}

/** The session a turn runs in, as the runner has claimed it. */
export interface TurnClaim {
  store: Store;
  sessionKey: string;
  sessionId: string;
  runId: string;
  /** The session lease the turn runs under; claims are fenced by it. */
  lease: SessionFence;
  now: number;
}

/** Prepares a turn; undefined when there is nothing to do (another turn took the messages). */
export interface TurnSource {
  readonly trigger: TurnTrigger;
  prepare(claim: TurnClaim): Promise<PreparedTurn | undefined>;
}

/**
 * The next turn of a session's queued messages: its oldest one, or all of them with
 * `collectAll`; with `steer`, messages queued while it runs join it at each tool boundary.
 */
export function messageTurn(mode: { collectAll: boolean; steer: boolean }): TurnSource {
  return {
    trigger: "message",
    async prepare({ store, sessionKey, sessionId, runId, lease, now }) {
      const claimed = await store.inbox.claim(
        sessionKey,
        sessionId,
        runId,
        { all: mode.collectAll, lease },
        now,
      );
      if (claimed.length === 0) return undefined;
      const last = claimed[claimed.length - 1] as InboxRecord;
      const m = last.message;
      const target = chatTargetOf(m);
      return {
        trigger: "message",
        runTrigger: last.attempts > 1 ? "recovery" : "user",
        inputs: [],
        inboxIds: claimed.map((r) => r.id),
        target,
        replyTo: m.platformMessageId,
        recipientId: m.senderId,
        ...(m.isDirect ? { lastTarget: target } : {}),
        steer: mode.steer,
        interactive: true,
        chat: {
          privateChat: m.isDirect && m.channel !== "http",
          channel: m.channel,
          chatKind: m.isDirect ? "direct" : "group",
          speaker: m.senderName,
        },
        deliver: (answer) => (answer.trim() === "" ? null : answer),
      };
    },
  };
}

/**
 * A heartbeat: its instruction and the checklist (HEARTBEAT.md) are recorded, and only an
 * answer that is more than an acknowledgement goes to `target`. Failures are never sent.
 */
export function heartbeatTurn(options: {
  checklist: string;
  target: ChatTarget | null;
  ackMaxChars: number;
  /** True when the run called the `heartbeat_ok` tool: nothing is delivered. */
  acknowledged?(runId: string): boolean;
  /** Scheduling facts the agent should see this beat (failing jobs, next runs). */
  status?: string;
}): TurnSource {
  return {
    trigger: "heartbeat",
    async prepare({ runId }) {
      return {
        trigger: "heartbeat",
        runTrigger: "heartbeat",
        inputs: [
          {
            type: "trigger",
            origin: "heartbeat",
            text: heartbeatTriggerText(options.checklist) + (options.status ? `\n\n${options.status}` : ""),
          },
        ],
        inboxIds: [],
        target: options.target,
        // The target is a direct chat: its chat id names the person (the HTTP mailbox key).
        ...(options.target ? { recipientId: options.target.chatId } : {}),
        steer: false,
        interactive: false,
        chat: { privateChat: true, channel: "heartbeat", chatKind: "background" },
        deliver: (answer) =>
          options.acknowledged?.(runId) ? null : heartbeatDelivery(answer, options.ackMaxChars),
      };
    },
  };
}

/**
 * Scheduled work's turn — a job's run (`cron`) or a wake the agent queued (`wake`): its text is
 * recorded as a trigger, and a non-empty answer goes to `target` (none: the turn only updates
 * its session). Failures are never sent: the scheduler retries jobs and records them.
 */
export function scheduledTurn(options: {
  trigger: "cron" | "wake";
  text: string;
  target: ChatTarget | null;
  /** True when the turn runs in the target chat's own session (its context). */
  inChat: boolean;
}): TurnSource {
  return {
    trigger: options.trigger,
    async prepare() {
      return {
        trigger: options.trigger,
        runTrigger: options.trigger,
        inputs: [{ type: "trigger", origin: options.trigger, text: options.text }],
        inboxIds: [],
        target: options.target,
        ...(options.target ? { recipientId: options.target.chatId } : {}),
        steer: false,
        interactive: false,
        chat: {
          privateChat: true,
          channel: options.inChat ? (options.target?.channel ?? options.trigger) : options.trigger,
          chatKind: "background",
        },
        deliver: (answer) => (answer.trim() === "" ? null : answer),
      };
    },
  };
}
