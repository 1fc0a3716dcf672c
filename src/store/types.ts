/**
 * Repository contracts. Every method is async (a server database can implement the same
 * interface later) and every atomic step is exactly one method: no transaction is held open
 * across an await. Times are epoch milliseconds passed in by the caller's injected clock.
 */
import type { Attachment, ChatTarget, InboundMessage } from "../channels/types.js";
import type { TokenUsage, ToolCall } from "../harness/providers/types.js";

// ---------------------------------------------------------------- inbox

/**
 * received → queued → running → answered | failed; received → rejected.
 * `running` rows go back to `queued` on start-up (the run is redone from the transcript).
 */
export type InboxState = "received" | "queued" | "running" | "answered" | "failed" | "rejected";

export interface InboxRecord {
  id: number;
  /** `${channel}:${accountId}:${chatId}:${platformMessageId}`; unique. */
  dedupeKey: string;
  sessionKey: string;
  message: InboundMessage;
  state: InboxState;
  /** How many times a run claimed it (a crash mid-run makes this > 1). */
  attempts: number;
  /** The run that claimed it last. */
  runId: string | null;
  error: string | null;
  receivedAt: number;
  updatedAt: number;
}

export interface InboxRepo {
  /**
   * Commits an inbound message as `received`, or reports the existing row when the dedupe key
   * was seen before (`duplicate: true`, nothing written). `state: "queued"` commits a message
   * that already passed access control straight into the queue (one step instead of two).
   */
  receive(
    message: InboundMessage,
    sessionKey: string,
    now: number,
    state?: "received" | "queued",
  ): Promise<{ record: InboxRecord; duplicate: boolean }>;
  /** received → queued (passed access control). */
  markQueued(id: number, now: number): Promise<void>;
  /** received → rejected with a reason (not allowed, command, ...). */
  reject(id: number, reason: string, now: number): Promise<void>;
  /**
   * Claims queued messages of a session for a run: the oldest one, or all of them with
   * `all: true` (collect mode). They become `running` with `runId`, attempts + 1, and their
   * user-message transcript events are appended (once per inbox id, ever) in the same step.
   */
  claim(
    sessionKey: string,
    sessionId: string,
    runId: string,
    options: { all: boolean },
    now: number,
  ): Promise<InboxRecord[]>;
  get(id: number): Promise<InboxRecord | undefined>;
  /** Rows not finished (received, queued, running), oldest first. */
  listUnfinished(): Promise<InboxRecord[]>;
  /**
   * On start-up, before any intake: running → queued (the run is redone from the transcript).
   * Rows left `received` are not touched: they have not passed access control yet and must be
   * routed again. Returns how many changed.
   */
  requeueInterrupted(now: number): Promise<number>;
  /** Session keys that have queued rows, in order of their oldest queued row. */
  sessionsWithQueued(): Promise<string[]>;
  countByState(): Promise<Record<InboxState, number>>;
  /**
   * The `rejected` rows by why they were not run: chat commands the gateway answered itself
   * (reason starting with COMMAND_REASON_PREFIX), group messages kept as context (NOT_MENTIONED),
   * and everything else (refused: access policy, pairing, ...). The three add up to
   * `countByState().rejected`.
   */
  countRejected(): Promise<RejectedCounts>;
  /**
   * Group messages of a session rejected with reason NOT_MENTIONED since the session's last
   * message that ran (queued, running, answered or failed), newest `limit`, oldest first.
   */
  groupContext(sessionKey: string, limit: number): Promise<InboxRecord[]>;
}

/** The reject reason of a group message that did not address the bot (kept as context). */
export const NOT_MENTIONED = "not_mentioned";

/** How a chat command's row is rejected: the reason is this prefix and the name (`command /status`). */
export const COMMAND_REASON_PREFIX = "command /";

/** `rejected` inbox rows by why they were not run (see InboxRepo.countRejected). */
export interface RejectedCounts {
  /** Chat commands (`/status`, `/help`, `/new`, `/stop`, ...) the gateway answered itself. */
  commands: number;
  /** Group messages that did not address the bot, kept as context for the next run. */
  groupContext: number;
  /** Messages refused: not allowed by the access policy, pairing codes, and any other reason. */
  refused: number;
}

// ---------------------------------------------------------------- outbox

/** pending → sending → sent | pending (retry) | dead; pending → expired (too old to send). */
export type OutboxState = "pending" | "sending" | "sent" | "dead" | "expired";

export interface OutboxInsert {
  target: ChatTarget;
  replyTo?: string;
  /** The person the reply is for (HTTP mailbox routing). */
  recipientId?: string;
  text: string;
  /** Position of this chunk in its reply; chunks of one reply are sent in seq order. */
  seq: number;
  kind: "reply" | "notice";
  /**
   * The channel delivers at commit (HTTP, console: the waiting request or the mailbox is the
   * delivery), so the row is written `sent` and never claimed.
   */
  delivered?: boolean;
}

export interface OutboxRecord extends OutboxInsert {
  id: number;
  sessionKey: string;
  runId: string | null;
  inboxId: number | null;
  state: OutboxState;
  attempts: number;
  nextAttemptAt: number;
  platformMessageId: string | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface OutboxRepo {
  /**
   * Claims up to `limit` due pending rows (nextAttemptAt <= now) and marks them `sending`.
   * Never returns a row while an earlier row of the same chat is unsent (pending or sending),
   * so chunks and replies to one chat go out in order.
   */
  claimDue(now: number, limit: number): Promise<OutboxRecord[]>;
  markSent(id: number, platformMessageId: string, now: number): Promise<void>;
  /** sending → pending with attempts + 1 and a later nextAttemptAt. */
  markRetry(id: number, error: string, nextAttemptAt: number, now: number): Promise<void>;
  /**
   * pending or sending → dead. From `sending` (a claimed row whose send failed) attempts + 1,
   * as in markRetry, so a row that failed `maxAttempts` sends shows `maxAttempts`.
   */
  markDead(id: number, error: string, now: number): Promise<void>;
  /** pending rows created before `cutoff` → expired; returns them. */
  expireOlderThan(cutoff: number, now: number): Promise<OutboxRecord[]>;
  /**
   * On start-up: sending → pending (the send may or may not have happened; see docs). Returns
   * the rows it moved, by id: each may reach its chat twice.
   */
  resetSending(now: number): Promise<OutboxRecord[]>;
  get(id: number): Promise<OutboxRecord | undefined>;
  /** Rows for one inbox message (all states), by id. */
  listForInbox(inboxId: number): Promise<OutboxRecord[]>;
  /** Sent rows of a channel for one recipient with id > afterId (HTTP mailbox). */
  listSentFor(channel: string, recipientId: string, afterId: number, limit: number): Promise<OutboxRecord[]>;
  listByState(state: OutboxState, limit: number): Promise<OutboxRecord[]>;
  countByState(): Promise<Record<OutboxState, number>>;
  /**
   * When claimDue will next return a row: the earliest nextAttemptAt among pending rows with no
   * earlier unsent row in their chat, if any. Rows waiting behind another row do not count, so a
   * caller can sleep until then instead of polling while a chat's first row is in backoff.
   */
  nextDueAt(): Promise<number | undefined>;
}

// ---------------------------------------------------------------- sessions & transcript

export interface SessionRecord {
  sessionKey: string;
  /** Current session id; `/new` starts a fresh one under the same key. */
  sessionId: string;
  lastTarget: ChatTarget | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * One session key and what happened in it lately, as `switchyard sessions` lists it. Only keys
 * with a session row are listed (the gateway creates one when a key's first run starts).
 */
export interface SessionSummary {
  sessionKey: string;
  /** The key's current session id (what `/new` replaced last). */
  sessionId: string;
  /**
   * The session's `lastTarget` channel if set, else the key's channel segment
   * (`agent:<agentId>:<channel>:…`, so `agent:main:heartbeat` → "heartbeat" and
   * `agent:main:main` → "main"); a key not shaped like that gives its last segment.
   */
  channel: string;
  lastTarget: ChatTarget | null;
  /**
   * Epoch ms of the newest transcript event of the current session id or the newest inbox row
   * of the key (its last update), whichever is later; the session's `updatedAt` if neither exists.
   */
  lastActivityAt: number;
  /** Transcript events of type `user` and `assistant` in the current session id. */
  messages: number;
  /** True while the key has an inbox row in state `running` (a turn is in progress). */
  running: boolean;
}

export interface SessionRepo {
  /** Returns the session, creating it with `newSessionId` if absent. */
  ensure(
    sessionKey: string,
    newSessionId: string,
    target: ChatTarget | null,
    now: number,
  ): Promise<SessionRecord>;
  get(sessionKey: string): Promise<SessionRecord | undefined>;
  /** Starts a fresh session id under the key (`/new`). */
  reset(sessionKey: string, newSessionId: string, now: number): Promise<SessionRecord>;
  count(): Promise<number>;
  /**
   * The chat the agent was most recently addressed from directly (the newest `lastTarget` of
   * any session), where scheduled work (heartbeats) reports; undefined before any.
   */
  latestTarget(): Promise<ChatTarget | undefined>;
  /**
   * Up to `limit` sessions, most recent `lastActivityAt` first (ties by key), each summarised in
   * one consistent read. `limit` <= 0 gives none.
   */
  list(limit: number): Promise<SessionSummary[]>;
}

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
  /** Scheduled work that started a turn with no message from a person (a heartbeat). */
  | { type: "trigger"; origin: "heartbeat"; text: string };

export interface TranscriptEvent {
  id: number;
  sessionKey: string;
  sessionId: string;
  runId: string | null;
  payload: TranscriptPayload;
  createdAt: number;
}

export interface TranscriptRepo {
  append(
    sessionKey: string,
    sessionId: string,
    runId: string | null,
    payloads: TranscriptPayload[],
    now: number,
  ): Promise<void>;
  /** The last `limit` events of a session id, oldest first. */
  tail(sessionKey: string, sessionId: string, limit: number): Promise<TranscriptEvent[]>;
}

// ---------------------------------------------------------------- access: pairing

/** An unknown sender's request to talk to the agent, approved by the owner with its code. */
export interface PairingRequest {
  channel: string;
  accountId: string;
  senderId: string;
  senderName: string;
  /** 8 characters, upper case, no ambiguous characters. */
  code: string;
  createdAt: number;
  expiresAt: number;
}

export interface ApprovedSender {
  channel: string;
  senderId: string;
  senderName: string;
  approvedAt: number;
  /** The code that approved it. */
  code: string;
}

export interface PairingRepo {
  /**
   * The sender's unexpired request if there is one (`existing`), else a new one with `code`
   * (`created`) — unless the channel already has `maxPending` unexpired requests (`full`).
   * Expired requests are dropped in the same step.
   */
  request(
    input: { channel: string; accountId: string; senderId: string; senderName: string; code: string },
    options: { ttlMs: number; maxPending: number },
    now: number,
  ): Promise<{ status: "created" | "existing"; request: PairingRequest } | { status: "full" }>;
  /** Approves the unexpired request with this code (case-insensitive) on `channel`; removes it. */
  approve(channel: string, code: string, now: number): Promise<ApprovedSender | undefined>;
  isApproved(channel: string, senderId: string): Promise<boolean>;
  listPending(now: number): Promise<PairingRequest[]>;
  listApproved(): Promise<ApprovedSender[]>;
  /** Removes an approval; returns whether there was one. */
  revoke(channel: string, senderId: string): Promise<boolean>;
}

// ---------------------------------------------------------------- runs & usage

export type RunTrigger = "user" | "cron" | "heartbeat" | "wake" | "subagent" | "recovery";
export type RunOutcome = "answered" | "failed" | "aborted" | "timeout";

export interface RunRecord {
  runId: string;
  sessionKey: string;
  trigger: RunTrigger;
  channel: string | null;
  provider: string;
  model: string;
  startedAt: number;
  durationMs: number;
  outcome: RunOutcome;
  usage: TokenUsage;
  toolCalls: number;
  modelCalls: number;
  errorKind: string | null;
  error: string | null;
}

export interface RunRepo {
  get(runId: string): Promise<RunRecord | undefined>;
  recent(limit: number): Promise<RunRecord[]>;
  countByOutcome(): Promise<Record<RunOutcome, number>>;
}

export interface UsageDay {
  day: string;
  provider: string;
  model: string;
  usage: TokenUsage;
  runs: number;
}

export interface UsageRepo {
  /** Totals per day, provider and model, newest day first. */
  byDay(limit: number): Promise<UsageDay[]>;
}

// ---------------------------------------------------------------- the atomic turn

/**
 * One turn's end, written in one transaction: the final transcript events, the outbox rows
 * (replies, or one failure notice), the inbox rows' final state, the run record and usage.
 * Refuses (returns false, writes nothing) if any inbox row is no longer `running` under this
 * run id, so a turn can never be answered twice.
 */
export interface CommitTurn {
  sessionKey: string;
  sessionId: string;
  runId: string;
  inboxIds: number[];
  inboxState: "answered" | "failed";
  error?: string;
  events: TranscriptPayload[];
  outbox: OutboxInsert[];
  run: RunRecord;
  /** A direct chat this turn answered: recorded as the session's `lastTarget`. */
  lastTarget?: ChatTarget;
}

/** The whole store. */
export interface Store {
  inbox: InboxRepo;
  outbox: OutboxRepo;
  sessions: SessionRepo;
  transcript: TranscriptRepo;
  runs: RunRepo;
  usage: UsageRepo;
  pairing: PairingRepo;
  /** See CommitTurn. */
  commitTurn(turn: CommitTurn, now: number): Promise<boolean>;
  /**
   * Finishes a message that gets no agent run but an answer from the gateway itself (a pairing
   * code, a chat command's reply): received → rejected with `reason`, and the reply chunks into
   * the outbox (owned by the inbox row, no run), in one step. Returns false and writes nothing
   * if the row is not `received` (it was routed already).
   */
  rejectWithReply(inboxId: number, reason: string, outbox: OutboxInsert[], now: number): Promise<boolean>;
  /** Schema version the database is at. */
  schemaVersion(): number;
  /**
   * Closes the store; idempotent. Resolves when background work on the database (the SQLite
   * store's checkpoint worker) has finished too, so its files may then be moved or removed.
   */
  close(): Promise<void>;
}

/** Store failures with a stable code and a plain-words message. */
export class StoreError extends Error {
  readonly code: "locked" | "corrupt" | "read_only" | "schema_too_new" | "disk_full" | "io";
  constructor(code: StoreError["code"], message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "StoreError";
    this.code = code;
  }
}
