/**
 * The inbox in SQLite: every accepted inbound message, deduplicated by platform id, moving
 * received → queued → running → answered | failed (or received → rejected).
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { InboundMessage } from "../../channels/types.js";
import type { InboxRecord, InboxRepo, InboxState, RejectedCounts } from "../repos/inbox-repo.js";
import type { SessionFence } from "../repos/lease-repo.js";
import { COMMAND_REASON_PREFIX, NOT_MENTIONED } from "../reasons.js";
import { guard } from "./errors.js";
import { type InboxRow, dedupeKeyRange, inboxDedupeKey, toInboxRecord } from "./inbox-rows.js";

export { inboxDedupeKey } from "./inbox-rows.js";
import type { SqliteLeaseRepo } from "./lease-repo.js";
import type { SqliteTranscriptRepo } from "./transcript-repo.js";

/** The replied-to text kept in a user event: enough to know what is meant. */
const REPLY_TO_MAX_CHARS = 1_000;

type Received = { record: InboxRecord; duplicate: boolean };

const INBOX_STATES: readonly InboxState[] = [
  "received",
  "queued",
  "running",
  "answered",
  "failed",
  "rejected",
];

/** A claim's owner and lease, as written on the rows it takes. */
interface ClaimLease {
  owner: string;
  until: number;
}

/**
 * InboxRepo over one better-sqlite3 connection. State changes only apply from the states the
 * contract names (markQueued and reject only touch `received` rows); anything else is a no-op,
 * so a late or repeated call cannot move a row backwards. A row carries an owner and a lease
 * only while `running`; every way out of `running` clears both.
 */
export class SqliteInboxRepo implements InboxRepo {
  readonly #path: string;
  readonly #lastPerChat: Statement<
    [string, string, number, number],
    { message: string; received_at: number }
  >;
  readonly #transcript: SqliteTranscriptRepo;
  readonly #leases: SqliteLeaseRepo;
  readonly #receiveTx: Transaction<
    (message: InboundMessage, sessionKey: string, now: number, state: "received" | "queued") => Received
  >;
  readonly #claimTx: Transaction<
    (
      sessionKey: string,
      sessionId: string,
      runId: string,
      all: boolean,
      lease: SessionFence,
      now: number,
    ) => InboxRecord[]
  >;
  readonly #insert: Statement<
    [{ dedupeKey: string; sessionKey: string; message: string; state: "received" | "queued"; now: number }],
    InboxRow
  >;
  readonly #byDedupeKey: Statement<[string], InboxRow>;
  readonly #byId: Statement<[number], InboxRow>;
  readonly #toQueued: Statement<[number, number]>;
  readonly #toRejected: Statement<[string, number, number]>;
  readonly #queuedOf: Statement<[string, number], InboxRow>;
  readonly #toRunning: Statement<
    [{ runId: string; owner: string | null; until: number; now: number; id: number }]
  >;
  readonly #unfinished: Statement<[], InboxRow>;
  readonly #requeueExpired: Statement<[{ now: number }], InboxRow>;
  readonly #queuedSessions: Statement<[{ owner: string | null; now: number }], { session_key: string }>;
  readonly #countByState: Statement<[], { state: InboxState; n: number }>;
  readonly #countRejected: Statement<
    { commandPrefix: string; notMentioned: string },
    { total: number; commands: number | null; groupContext: number | null }
  >;
  readonly #groupContext: Statement<
    { sessionKey: string; reason: string; limit: number; withThreads: 0 | 1 },
    InboxRow
  >;
  readonly #finish: Statement<[InboxState, string | null, number, number, string]>;

  constructor(db: Database, path: string, transcript: SqliteTranscriptRepo, leases: SqliteLeaseRepo) {
    this.#path = path;
    this.#transcript = transcript;
    this.#leases = leases;
    // A range of the unique dedupe key (dedupeKeyRange), newest first.
    this.#lastPerChat = db.prepare(
      `SELECT message, received_at FROM inbox
       WHERE dedupe_key >= ? AND dedupe_key < ? AND received_at >= ? ORDER BY id DESC LIMIT ?`,
    );
    this.#insert = db.prepare(
      `INSERT INTO inbox (dedupe_key, session_key, message, state, attempts, received_at, updated_at)
       VALUES (@dedupeKey, @sessionKey, @message, @state, 0, @now, @now)
       ON CONFLICT (dedupe_key) DO NOTHING
       RETURNING *`,
    );
    this.#byDedupeKey = db.prepare("SELECT * FROM inbox WHERE dedupe_key = ?");
    this.#byId = db.prepare("SELECT * FROM inbox WHERE id = ?");
    this.#toQueued = db.prepare(
      "UPDATE inbox SET state = 'queued', updated_at = ? WHERE id = ? AND state = 'received'",
    );
    this.#toRejected = db.prepare(
      "UPDATE inbox SET state = 'rejected', error = ?, updated_at = ? WHERE id = ? AND state = 'received'",
    );
    // LIMIT -1 is "no limit" in SQLite: one statement serves both claim modes.
    this.#queuedOf = db.prepare(
      "SELECT * FROM inbox WHERE session_key = ? AND state = 'queued' ORDER BY id LIMIT ?",
    );
    this.#toRunning = db.prepare(
      `UPDATE inbox SET state = 'running', run_id = @runId, owner = @owner, lease_until = @until,
         attempts = attempts + 1, updated_at = @now
       WHERE id = @id AND state = 'queued'`,
    );
    // `+id`: sort the few unfinished rows found on inbox_unfinished (keyed by session since v5)
    // rather than walk the whole table in id order.
    this.#unfinished = db.prepare(
      "SELECT * FROM inbox WHERE state IN ('received', 'queued', 'running') ORDER BY +id",
    );
    // The IN terms let the planner use the partial index inbox_unfinished.
    this.#requeueExpired = db.prepare(
      `UPDATE inbox SET state = 'queued', owner = NULL, lease_until = NULL, updated_at = @now
       WHERE state IN ('received', 'queued', 'running') AND state = 'running' AND IFNULL(lease_until, 0) <= @now
       RETURNING *`,
    );
    // With an owner: not the sessions another owner holds at @now.
    this.#queuedSessions = db.prepare(
      `SELECT i.session_key FROM inbox i
       WHERE i.state = 'queued'
         AND (@owner IS NULL OR NOT EXISTS (
           SELECT 1 FROM session_leases l
           WHERE l.session_key = i.session_key AND l.owner <> @owner AND l.lease_until > @now))
       GROUP BY i.session_key ORDER BY MIN(i.id)`,
    );
    this.#countByState = db.prepare("SELECT state, COUNT(*) AS n FROM inbox GROUP BY state");
    // substr, not LIKE: LIKE ignores case and treats _ and % in the prefix as wildcards.
    this.#countRejected = db.prepare(
      `SELECT COUNT(*) AS total,
              SUM(substr(error, 1, length(@commandPrefix)) = @commandPrefix) AS commands,
              SUM(error = @notMentioned) AS groupContext
         FROM inbox WHERE state = 'rejected'`,
    );
    this.#groupContext = db.prepare(
      `SELECT * FROM inbox
        WHERE session_key = @sessionKey AND state = 'rejected' AND error = @reason
          AND id > COALESCE((SELECT MAX(id) FROM inbox
                              WHERE (session_key = @sessionKey
                                     OR (@withThreads = 1
                                         AND session_key > @sessionKey || ':thread:'
                                         AND session_key < @sessionKey || ':thread;'))
                                AND state IN ('queued', 'running', 'answered', 'failed')), 0)
        ORDER BY id DESC LIMIT @limit`,
    );
    this.#finish = db.prepare(
      `UPDATE inbox SET state = ?, error = ?, owner = NULL, lease_until = NULL, updated_at = ?
       WHERE id = ? AND state = 'running' AND run_id = ?`,
    );
    this.#receiveTx = db.transaction(
      (message: InboundMessage, sessionKey: string, now: number, state: "received" | "queued"): Received => {
        const dedupeKey = inboxDedupeKey(message);
        const inserted = this.#insert.get({
          dedupeKey,
          sessionKey,
          message: JSON.stringify(message),
          state,
          now,
        });
        if (inserted) return { record: toInboxRecord(inserted), duplicate: false };
        const existing = this.#byDedupeKey.get(dedupeKey);
        if (!existing) throw new Error(`inbox row ${dedupeKey} vanished during receive`);
        return { record: toInboxRecord(existing), duplicate: true };
      },
    );
    this.#claimTx = db.transaction(
      (
        sessionKey: string,
        sessionId: string,
        runId: string,
        all: boolean,
        lease: SessionFence,
        now: number,
      ): InboxRecord[] => {
        const claim = this.#claimLease(sessionKey, lease, now);
        if (!claim) return [];
        const claimed = this.#queuedOf.all(sessionKey, all ? -1 : 1).map((row) => {
          this.#toRunning.run({ runId, owner: claim.owner, until: claim.until, now, id: row.id });
          return toInboxRecord({
            ...row,
            state: "running",
            run_id: runId,
            owner: claim.owner,
            lease_until: claim.until,
            attempts: row.attempts + 1,
            updated_at: now,
          });
        });
        // Once per inbox id ever: a re-claim after a crash adds no second user event.
        this.#transcript.appendInTransaction(
          sessionKey,
          sessionId,
          runId,
          claimed.map((r) => ({
            type: "user",
            inboxId: r.id,
            text: r.message.text,
            senderName: r.message.senderName,
            ...(r.message.isDirect ? {} : { isGroup: true }),
            ...(r.message.groupContext?.length ? { context: r.message.groupContext } : {}),
            ...(r.message.replyToText ? { replyTo: r.message.replyToText.slice(0, REPLY_TO_MAX_CHARS) } : {}),
            ...(r.message.attachments?.length ? { attachments: r.message.attachments } : {}),
          })),
          now,
        );
        return claimed;
      },
    );
  }

  async receive(
    message: InboundMessage,
    sessionKey: string,
    now: number,
    state: "received" | "queued" = "received",
  ): Promise<Received> {
    return guard(this.#path, () => this.#receiveTx.immediate(message, sessionKey, now, state));
  }

  async markQueued(id: number, now: number): Promise<void> {
    guard(this.#path, () => this.#toQueued.run(now, id));
  }

  async reject(id: number, reason: string, now: number): Promise<void> {
    guard(this.#path, () => this.#toRejected.run(reason, now, id));
  }

  async claim(
    sessionKey: string,
    sessionId: string,
    runId: string,
    options: { all: boolean; lease: SessionFence },
    now: number,
  ): Promise<InboxRecord[]> {
    return guard(this.#path, () =>
      this.#claimTx.immediate(sessionKey, sessionId, runId, options.all, options.lease, now),
    );
  }

  async get(id: number): Promise<InboxRecord | undefined> {
    return guard(this.#path, () => {
      const row = this.#byId.get(id);
      return row ? toInboxRecord(row) : undefined;
    });
  }

  async listUnfinished(): Promise<InboxRecord[]> {
    return guard(this.#path, () => this.#unfinished.all().map(toInboxRecord));
  }

  async requeueExpired(now: number): Promise<InboxRecord[]> {
    return guard(this.#path, () =>
      this.#requeueExpired
        .all({ now })
        .map(toInboxRecord)
        .sort((a, b) => a.id - b.id),
    );
  }

  async sessionsWithQueued(claimableBy?: { owner: string; now: number }): Promise<string[]> {
    const params = { owner: claimableBy?.owner ?? null, now: claimableBy?.now ?? 0 };
    return guard(this.#path, () => this.#queuedSessions.all(params).map((r) => r.session_key));
  }

  async groupContext(
    sessionKey: string,
    limit: number,
    options?: { withThreads?: boolean },
  ): Promise<InboxRecord[]> {
    const withThreads = options?.withThreads ? (1 as const) : (0 as const);
    return guard(this.#path, () =>
      this.#groupContext
        .all({ sessionKey, reason: NOT_MENTIONED, limit, withThreads })
        .reverse()
        .map(toInboxRecord),
    );
  }

  async countByState(): Promise<Record<InboxState, number>> {
    return guard(this.#path, () => {
      const counts = Object.fromEntries(INBOX_STATES.map((s) => [s, 0])) as Record<InboxState, number>;
      for (const { state, n } of this.#countByState.all()) counts[state] = n;
      return counts;
    });
  }

  async countRejected(): Promise<RejectedCounts> {
    return guard(this.#path, () => {
      const row = this.#countRejected.get({
        commandPrefix: COMMAND_REASON_PREFIX,
        notMentioned: NOT_MENTIONED,
      });
      const commands = row?.commands ?? 0;
      const groupContext = row?.groupContext ?? 0;
      return { commands, groupContext, refused: (row?.total ?? 0) - commands - groupContext };
    });
  }

  /** For a Store transaction: the row, read inside it. */
  getInTransaction(id: number): { sessionKey: string } | undefined {
    const row = this.#byId.get(id);
    return row ? { sessionKey: row.session_key } : undefined;
  }

  /** For rejectWithReply, inside its transaction: received → rejected; false if not `received`. */
  rejectInTransaction(id: number, reason: string, now: number): boolean {
    return this.#toRejected.run(reason, now, id).changes === 1;
  }

  /** For commitTurn, inside its transaction: is the row `running` under `runId`? */
  isRunningUnder(id: number, runId: string): boolean {
    const row = this.#byId.get(id);
    return row?.state === "running" && row.run_id === runId;
  }

  /**
   * Who a claim's rows belong to: the lease holder, until its session lease's expiry.
   * Undefined: `lease` does not hold the session at `now`, so nothing may be claimed.
   */
  #claimLease(sessionKey: string, lease: SessionFence, now: number): ClaimLease | undefined {
    const until = this.#leases.heldUntilInTransaction(sessionKey, lease, now);
    return until === undefined ? undefined : { owner: lease.owner, until };
  }

  /** For commitTurn, inside its transaction: running (under `runId`) → final state. */
  finishInTransaction(
    id: number,
    runId: string,
    state: "answered" | "failed",
    error: string | null,
    now: number,
  ): void {
    this.#finish.run(state, error, now, id, runId);
  }

  async lastPerChat(
    channel: string,
    accountId: string,
    since: number,
    scan: number,
  ): Promise<Array<{ chatId: string; threadId?: string; platformMessageId: string; receivedAt: number }>> {
    return guard(this.#path, () => {
      const [from, to] = dedupeKeyRange(channel, accountId);
      const rows = this.#lastPerChat.all(from, to, since, Math.max(0, scan));
      const newest = new Map<
        string,
        { chatId: string; threadId?: string; platformMessageId: string; receivedAt: number }
      >();
      for (const row of rows) {
        const m = JSON.parse(row.message) as InboundMessage;
        const key = `${m.chatId}\u0000${m.threadId ?? ""}`;
        if (newest.has(key)) continue; // rows come newest first
        newest.set(key, {
          chatId: m.chatId,
          ...(m.threadId ? { threadId: m.threadId } : {}),
          platformMessageId: m.platformMessageId,
          receivedAt: row.received_at,
        });
      }
      return [...newest.values()];
    });
  }
}
