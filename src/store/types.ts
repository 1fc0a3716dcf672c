/**
 * Repository contracts. Every method is async (a server database can implement the same
 * interface later) and every atomic step is exactly one method: no transaction is held open
 * across an await. Times are epoch milliseconds passed in by the caller's injected clock.
 *
 * Several gateway processes may share one store. Work in progress has an owner (a process
 * instance id such as `gw_<random>`) and a lease expiry: `running` inbox rows, `sending` outbox
 * rows and session leases (see LeaseRepo). A lease is held while `now < leaseUntil`; nothing but
 * its owner touches work under a held lease, and only expired leases are taken over. `now`
 * comes from each process's clock, so lease TTLs must dwarf the clock skew between them.
 *
 * No cursor relies on ids being assigned in commit order (a server database's sequences hand
 * out ids at insert, so a reader can see id 12 before id 11 commits and skip 11 for ever): a
 * position a reader resumes from is assigned under a lock that orders its writers (the mailbox
 * cursor), or has one writer at a time (a session's transcript: its lease holder; a group
 * session's intake: the one process hosting its channel account). See listMailbox,
 * TranscriptRepo and groupContext; claimDue's chat order needs no cursor.
 */
import type { Attachment, ChatTarget, InboundMessage } from "../channels/types.js";
import type { TokenUsage, ToolCall } from "../harness/providers/types.js";

// ---------------------------------------------------------------- inbox

/**
 * received → queued → running → answered | failed; received → rejected.
 * `running` rows whose lease expired go back to `queued` (the run is redone from the
 * transcript): InboxRepo.requeueExpired, LeaseRepo.acquireSession and releaseSession.
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
  /**
   * While `running`: the process that claimed it, or null for a claim made without a session
   * lease (and for rows left running by a version before schema 5). Null in every other state.
   */
  owner: string | null;
  /**
   * While `running`: until when the claim is leased (epoch ms; the session lease's expiry,
   * renewed with it); 0 for a claim without an owner, so it counts as expired from the start.
   * Null in every other state.
   */
  leaseUntil: number | null;
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
   *
   * With `lease`, claims nothing (returns []) unless `lease.owner` holds the session's lease
   * under `lease.fence` at `now` (LeaseRepo.acquireSession); the rows get that owner and the
   * session lease's expiry, and are renewed with it. Without `lease` (deprecated: one process
   * only) the rows get no owner and an expired lease (0): any takeover may requeue them.
   */
  claim(
    sessionKey: string,
    sessionId: string,
    runId: string,
    options: { all: boolean; lease?: SessionFence },
    now: number,
  ): Promise<InboxRecord[]>;
  get(id: number): Promise<InboxRecord | undefined>;
  /** Rows not finished (received, queued, running), oldest first. */
  listUnfinished(): Promise<InboxRecord[]>;
  /**
   * Takes over interrupted runs: `running` rows whose lease expired (`leaseUntil <= now`) go
   * back to `queued` with no owner, to be redone from the transcript by whoever acquires their
   * session next. A row under a live lease is never touched, so any process may call this at
   * any time (at start-up, and on a timer to pick up the work of a process that died). Rows
   * left `received` are not touched: they have not passed access control yet and must be routed
   * again. Returns the rows it moved, by id.
   */
  requeueExpired(now: number): Promise<InboxRecord[]>;
  /**
   * On start-up, before any intake: every running row → queued, whoever owns it. Returns how
   * many changed.
   * @deprecated Correct only while one process uses the store (it takes live runs of other
   * processes too); use requeueExpired.
   */
  requeueInterrupted(now: number): Promise<number>;
  /**
   * Session keys that have queued rows, in order of their oldest queued row. With
   * `claimableBy`, only sessions whose lease that owner could acquire at `now`: free, expired,
   * or already its own (a session another live process holds is that process's to run).
   */
  sessionsWithQueued(claimableBy?: { owner: string; now: number }): Promise<string[]>;
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
   *
   * "Since" is commit order within the session. The writers that move this boundary are the
   * session's intake (receive, markQueued, reject), not its runs, so the session lease does not
   * order them; what does is the channel: a group session key names one channel account
   * (`agent:<id>:<channel>:<account>:group:<chat>…`), exactly one process hosts that account,
   * and it accepts one chat's messages one at a time (long polling). Then ids are in commit
   * order per session even where ids come from a sequence. SQLite goes further: ids are
   * assigned under its single write lock, so id order is commit order whatever the intake does.
   * A server database that accepts one chat concurrently (webhooks deliver in parallel) must
   * not compare sequence ids here: it keeps a per-session intake position (a counter row bumped
   * in receive's transaction, whose row lock orders the writers) and compares that. Whatever
   * the engine, a message concurrent with a run's start may miss that run's context; it is
   * never skipped by later ones because of when it committed.
   */
  groupContext(sessionKey: string, limit: number): Promise<InboxRecord[]>;
}

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
  /**
   * While `sending`: the process that claimed it (null for a claim without an owner, and for
   * rows left sending by a version before schema 5). Null in every other state.
   */
  owner: string | null;
  /** While `sending`: until when the claim is leased (epoch ms; 0 without an owner). Else null. */
  leaseUntil: number | null;
  /**
   * The row's position in its recipient's mailbox (see listMailbox): set when a row with a
   * `recipientId` becomes `sent`, else null.
   */
  mailboxCursor: number | null;
  createdAt: number;
  updatedAt: number;
}

/** A sent row as the mailbox lists it: its cursor is always set. */
export interface MailboxReply extends OutboxRecord {
  mailboxCursor: number;
}

/** A channel account a process hosts (it runs that channel and sends its replies). */
export type ChannelAccount = Pick<ChatTarget, "channel" | "accountId">;

/** Who claims outbox rows, for how long, and for which channel accounts. */
export interface OutboxClaim {
  /** The claiming process's instance id. */
  owner: string;
  /** The claimed rows are leased until `now + ttlMs` (renewed by LeaseRepo.renew). */
  ttlMs: number;
  /**
   * The channel accounts this process sends for. Rows of any other stay pending for the
   * process that hosts them; an empty list claims nothing.
   */
  hosted: readonly ChannelAccount[];
}

export interface OutboxRepo {
  /**
   * Claims up to `limit` due pending rows (nextAttemptAt <= now) and marks them `sending`.
   * Never returns a row while an earlier row of the same chat is pending or sending, nor while
   * any row of its chat is sending, whichever process claimed it, so chunks and replies to one
   * chat go out in order and one at a time.
   *
   * With `claim`, only rows of the channel accounts in `claim.hosted`, leased to `claim.owner`
   * until `now + claim.ttlMs`. Without it (deprecated: one process only) rows of every channel,
   * with no owner and an expired lease (0).
   *
   * "Earlier" is id order, which is commit order for rows of one transaction (a reply's chunks)
   * on every engine. Two replies committed concurrently to one chat have no order to keep; where
   * ids are not in commit order (a server database's sequences) the rule that nothing is claimed
   * while its chat has a row in flight still holds, and so does chunk order within each reply.
   */
  claimDue(now: number, limit: number, claim?: OutboxClaim): Promise<OutboxRecord[]>;
  /**
   * pending or sending → sent, whoever claimed it (a successful send is a fact; recording it
   * stops a re-send). A row with a `recipientId` gets the next cursor of its mailbox.
   */
  markSent(id: number, platformMessageId: string, now: number): Promise<void>;
  /**
   * sending → pending with attempts + 1 and a later nextAttemptAt. With `owner`, only a row
   * that owner still has claimed: once an expired claim was taken over, the old owner's
   * outcome must not release a send another process has in flight.
   */
  markRetry(id: number, error: string, nextAttemptAt: number, now: number, owner?: string): Promise<void>;
  /**
   * pending or sending → dead. From `sending` (a claimed row whose send failed) attempts + 1,
   * as in markRetry, so a row that failed `maxAttempts` sends shows `maxAttempts`. With
   * `owner`, a `sending` row only if that owner has it claimed.
   */
  markDead(id: number, error: string, now: number, owner?: string): Promise<void>;
  /**
   * pending rows created before `cutoff` → expired; returns them. With `hosted`, only rows of
   * those channel accounts: a row another process hosts is that process's to send or expire.
   */
  expireOlderThan(
    cutoff: number,
    now: number,
    options?: { hosted: readonly ChannelAccount[] },
  ): Promise<OutboxRecord[]>;
  /**
   * Takes over interrupted sends: `sending` rows whose lease expired (`leaseUntil <= now`) go
   * back to `pending` with no owner. A row under a live lease is never touched. Returns the
   * rows it moved, by id: each may have been delivered already and may reach its chat twice
   * (the caller counts them in `switchyard_outbox_resent_total`).
   */
  resetExpired(now: number): Promise<OutboxRecord[]>;
  /**
   * On start-up: every sending row → pending, whoever owns it. Returns the rows it moved, by id.
   * @deprecated Correct only while one process uses the store (it takes sends other processes
   * have in flight); use resetExpired.
   */
  resetSending(now: number): Promise<OutboxRecord[]>;
  get(id: number): Promise<OutboxRecord | undefined>;
  /** Rows for one inbox message (all states), by id. */
  listForInbox(inboxId: number): Promise<OutboxRecord[]>;
  /**
   * One recipient's mailbox on one channel (the HTTP `GET /v1/chat/replies?after=`): its sent
   * rows with `mailboxCursor > after`, in cursor order, at most `limit`. A reader passes the
   * last cursor it saw and never misses a row: cursors are numbered per (channel, recipient)
   * when a row becomes sent, from a counter in the same transaction, so a writer that takes
   * cursor n + 1 commits after the writer of n (the counter's row lock orders them) and no
   * reader sees n + 1 before n. Rows sent late (a retry) get a later cursor, not their old id's
   * place. Cursors of rows sent before schema 5 are their ids, so a client's old `after` holds.
   */
  listMailbox(channel: string, recipientId: string, after: number, limit: number): Promise<MailboxReply[]>;
  /**
   * Sent rows of a channel for one recipient with id > afterId.
   * @deprecated Ids are not the order rows become sent in (a row sent after a retry, ids taken
   * at insert by a server database), so a reader can skip a row forever; use listMailbox.
   */
  listSentFor(channel: string, recipientId: string, afterId: number, limit: number): Promise<OutboxRecord[]>;
  listByState(state: OutboxState, limit: number): Promise<OutboxRecord[]>;
  countByState(): Promise<Record<OutboxState, number>>;
  /**
   * When claimDue will next return a row: the earliest nextAttemptAt among pending rows that no
   * row of their chat holds back (see claimDue), if any. Rows waiting behind another row do not
   * count, so a caller can sleep until then instead of polling while a chat's first row is in
   * backoff. With `hosted`, only rows of those channel accounts (as claimDue with a claim).
   */
  nextDueAt(options?: { hosted: readonly ChannelAccount[] }): Promise<number | undefined>;
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
  /**
   * Text the model reads as a user turn that no person wrote: the instruction of scheduled work
   * (a heartbeat, cron job, wake), or a hook's nudge to continue (`continuation`).
   */
  | { type: "trigger"; origin: TriggerOrigin; text: string };

/** Who wrote a trigger event. */
export type TriggerOrigin = "heartbeat" | "cron" | "wake" | "subagent" | "assignment" | "continuation";

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
 * holding its lease (claim, append, commitTurn carry its fence), so they are serialized by the
 * lease and a reader of one session may resume from the last id it read.
 */
export interface TranscriptRepo {
  /**
   * Appends in order; a user event for an inbox id that already has one is skipped.
   * @deprecated without `lease`: nothing stops a process that lost the session from writing.
   */
  append(
    sessionKey: string,
    sessionId: string,
    runId: string | null,
    payloads: TranscriptPayload[],
    now: number,
  ): Promise<void>;
  /**
   * Appends as above if `lease.owner` is the session's lease holder under `lease.fence` (as
   * commitTurn checks it); returns false and writes nothing otherwise.
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

// ---------------------------------------------------------------- ownership: leases

/**
 * Proof of holding a session: the holder's process instance id and the fence number its lease
 * was granted under. Writes made for a session (claim, append, commitTurn) carry it and are
 * refused once the session's fence has moved on.
 */
export interface SessionFence {
  owner: string;
  fence: number;
}

/** A held session lease. */
export interface SessionLease extends SessionFence {
  sessionKey: string;
  /** Epoch ms; held while `now < leaseUntil`. */
  leaseUntil: number;
}

/** What acquireSession granted. */
export interface AcquiredSession extends SessionLease {
  /** Rows left `running` under an earlier, expired lease of the session, now `queued` again. */
  requeued: number;
}

/** What releaseSession did. */
export interface ReleasedSession {
  /** The holder's rows still `running` in the session, now `queued` again. */
  requeued: number;
}

/** What renew extended: only leases `owner` still held, unexpired. */
export interface LeaseRenewal {
  /** Session keys whose leases were extended, sorted; a running session missing here was lost. */
  sessions: string[];
  /** `running` inbox rows extended (those in the sessions above). */
  inbox: number;
  /** `sending` outbox rows extended. */
  outbox: number;
}

/**
 * Session leases: which process runs a session. At most one owner holds a session's lease at a
 * time; each grant to a new holder (or after expiry) carries a higher fence number, so a
 * process that lost its lease (paused past its TTL, partitioned) cannot claim, append or commit
 * for the session any more. A lease is a row that outlives its holder: releasing keeps the
 * fence, so fences never repeat for a session key.
 */
export interface LeaseRepo {
  /**
   * Grants `owner` the session's lease until `now + ttlMs`: when it is free (never leased or
   * released), expired, or already `owner`'s. The fence stays the same only when `owner` still
   * held it unexpired (the lease and that owner's running rows of the session are extended);
   * any other grant has fence = previous + 1 (the first is 1) and, in the same step, requeues
   * the session's `running` rows whose lease expired (an earlier holder's interrupted run).
   * Undefined while another owner holds it. `ttlMs` must be a positive whole number.
   */
  acquireSession(
    sessionKey: string,
    owner: string,
    now: number,
    ttlMs: number,
  ): Promise<AcquiredSession | undefined>;
  /**
   * Gives the lease up if `owner` holds it under `fence` (expired or not, as long as nobody
   * took it since), keeping the fence; that owner's rows still `running` in the session go back
   * to `queued` in the same step, so the next holder redoes them. Undefined (nothing written)
   * if the fence moved on.
   */
  releaseSession(
    sessionKey: string,
    owner: string,
    fence: number,
    now: number,
  ): Promise<ReleasedSession | undefined>;
  /** The session's lease if someone holds it at `now`. */
  getSession(sessionKey: string, now: number): Promise<SessionLease | undefined>;
  /**
   * Extends, in one step, every lease `owner` holds unexpired at `now` to `now + ttlMs`: its
   * session leases, its `running` inbox rows in those sessions, its `sending` outbox rows. An
   * expired lease is never revived (a takeover may be under way); the owner learns which
   * sessions it still holds from the result. Call it on a timer well inside the TTL.
   */
  renew(owner: string, now: number, ttlMs: number): Promise<LeaseRenewal>;
  /**
   * Ends, at `now`, every lease of an owner known to be dead (a gateway that crashed and whose
   * home folder a new one now starts in: its runtime file names it), so its work is taken over
   * at once instead of after the TTL. Returns how many session leases it ended. Never call it
   * for an owner that may be alive: its fenced writes would then be refused mid-turn.
   */
  revokeOwner(owner: string, now: number): Promise<number>;
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
 * run id, so a turn can never be answered twice; and with `lease`, if the session's lease is
 * no longer `lease.owner`'s under `lease.fence`.
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
  /**
   * The session lease the turn ran under. The commit is refused when the session's fence
   * differs, even if the inbox rows still say `running` under this run id: another process has
   * held the session since. Equality is the whole check: a lease that lapsed but that nobody
   * took is still the last holder's to finish with (acquiring it would have moved the fence).
   * Absent (deprecated: one process only): not checked.
   */
  lease?: SessionFence;
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
  leases: LeaseRepo;
  /** See CommitTurn. */
  commitTurn(turn: CommitTurn, now: number): Promise<boolean>;
  /**
   * Finishes a message that gets no agent run but an answer from the gateway itself (a pairing
   * code, a chat command's reply): received → rejected with `reason`, and the reply chunks into
   * the outbox (owned by the inbox row, no run), in one step. Returns false and writes nothing
   * if the row is not `received` (it was routed already).
   *
   * It takes no session fence: it is intake, not a run. It writes no transcript and no session
   * state, and its guard, "the row is still `received`", is one conditional update that only
   * one process can win, so two processes routing the same redelivered message answer it once.
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
