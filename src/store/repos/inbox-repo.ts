/**
 * The inbox's contract: every accepted inbound message, deduplicated by platform id, from
 * `received` to its final state, and the claims that hand queued messages to a run. The
 * store-wide rules (async, one step per method, owners and leases) are in `../types.ts`.
 */
import type { InboundMessage } from "../../channels/types.js";
import type { SessionFence } from "./lease-repo.js";

/**
 * received → queued → running → answered | failed; received → rejected.
 * `running` rows whose lease expired go back to `queued` (the run is redone from the
 * transcript): InboxRepo.requeueExpired, LeaseRepo.acquireSession and releaseSession.
 */
export type InboxState = "received" | "queued" | "running" | "answered" | "failed" | "rejected";

/** One inbound message as the inbox keeps it. */
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

/** The inbox repository (see the file header). */
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
    options: { all: boolean; lease: SessionFence },
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
   * `withThreads`: a message that ran in one of the session's threads (`<key>:thread:<id>`)
   * also counts as the boundary — for a chat whose mentioned messages each open a thread of
   * their own (Slack), so the chat's context is what came since the bot's last answer anywhere
   * in it.
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
  groupContext(
    sessionKey: string,
    limit: number,
    options?: { withThreads?: boolean },
  ): Promise<InboxRecord[]>;
  /**
   * The newest message taken from each chat (and thread) of one channel account since `since`,
   * among its newest `scan` messages: where a platform without redelivery (Discord) resumes
   * reading after a restart.
   */
  lastPerChat(
    channel: string,
    accountId: string,
    since: number,
    scan: number,
  ): Promise<Array<{ chatId: string; threadId?: string; platformMessageId: string; receivedAt: number }>>;
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
