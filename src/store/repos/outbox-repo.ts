/**
 * The outbox's contract: reply chunks committed with their turn, claimed in chat order by the
 * process hosting their channel account, sent, retried or given up; and each recipient's
 * mailbox of sent replies. The store-wide rules are in `../types.ts`.
 */
import type { ChatTarget } from "../../channels/types.js";

/** pending → sending → sent | pending (retry) | dead; pending → expired (too old to send). */
export type OutboxState = "pending" | "sending" | "sent" | "dead" | "expired";

/** A reply chunk to write: what commitTurn and rejectWithReply insert. */
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

/** One outbox row. */
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
  /**
   * An earlier send of this row may have reached its chat: it was interrupted (taken over from
   * `sending`) or failed in a way that does not say it was not delivered (markRetry's
   * `inDoubt`). Once set it stays set. A channel that can look its messages up checks first.
   */
  inDoubt: boolean;
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

/** The outbox repository (see the file header). */
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
   * stops a re-send). A row with a `recipientId` gets the next cursor of its mailbox, and the
   * streaming preview recorded for the row's key (PreviewRepo) is removed: the reply took it.
   */
  markSent(id: number, platformMessageId: string, now: number): Promise<void>;
  /**
   * sending → pending with attempts + 1 and a later nextAttemptAt. With `owner`, only a row
   * that owner still has claimed: once an expired claim was taken over, the old owner's
   * outcome must not release a send another process has in flight. `inDoubt`: the failed send
   * may have been delivered all the same (a timeout); the row keeps that mark (see inDoubt).
   */
  markRetry(
    id: number,
    error: string,
    nextAttemptAt: number,
    now: number,
    owner?: string,
    options?: { inDoubt?: boolean },
  ): Promise<void>;
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
   * back to `pending` with no owner, marked inDoubt. A row under a live lease is never touched.
   * Returns the rows it moved, by id: each may have been delivered already (the caller counts
   * them in `switchyard_outbox_resent_total`).
   */
  resetExpired(now: number): Promise<OutboxRecord[]>;
  get(id: number): Promise<OutboxRecord | undefined>;
  /** Rows for one inbox message (all states), by id. */
  listForInbox(inboxId: number): Promise<OutboxRecord[]>;
  /** The rows a run committed (its reply chunks or notice), in id order. */
  listForRun(runId: string): Promise<OutboxRecord[]>;
  /**
   * Writes rows that belong to no turn and no inbox message (a notice from the scheduler: a job
   * is failing), in one step, owned by `sessionKey`.
   */
  insert(rows: readonly OutboxInsert[], sessionKey: string, now: number): Promise<void>;
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
   * The last cursor one recipient's mailbox on one channel handed out (0 for an empty mailbox):
   * a reader that starts here sees only what is sent from now on.
   */
  mailboxEnd(channel: string, recipientId: string): Promise<number>;
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
