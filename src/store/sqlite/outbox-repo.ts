/**
 * The outbox in SQLite: reply chunks committed with their turn, then claimed (by the process
 * hosting their channel account, under a lease) and sent in order per chat (channel, account,
 * chat, thread), chats in parallel; sent rows with a recipient numbered into its mailbox.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type {
  ChannelAccount,
  MailboxReply,
  OutboxClaim,
  OutboxInsert,
  OutboxRecord,
  OutboxRepo,
  OutboxState,
} from "../repos/outbox-repo.js";
import { guard } from "./errors.js";
import { assertLeaseArgs } from "../leases.js";
import { type OutboxInsertRow, type OutboxRow, toMailboxReply, toOutboxRecord } from "./outbox-row.js";

/** claimDue's parameters: `hosted` is a JSON array of [channel, accountId] pairs, or null for all. */
interface DueParams {
  now: number;
  limit: number;
  hosted: string | null;
}

/**
 * The chat condition of claimDue and nextDueAt: no earlier row of the chat is unsent, and no
 * row of it is in flight (in SQLite the second follows from the first, since ids are in commit
 * order; with ids taken at insert it keeps a chat to one send at a time). `IS` so that a missing
 * thread id (NULL) matches itself; the IN term lets the planner use outbox_chat_unsent.
 */
const CHAT_IS_FREE = `NOT EXISTS (
  SELECT 1 FROM outbox e
  WHERE e.channel = o.channel AND e.account_id = o.account_id AND e.chat_id = o.chat_id
    AND e.thread_id IS o.thread_id AND e.state IN ('pending', 'sending')
    AND (e.id < o.id OR e.state = 'sending'))`;

/** Only the hosted channel accounts, unless @hosted is null. */
const IS_HOSTED = `(@hosted IS NULL
  OR (o.channel, o.account_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(@hosted)))`;

/** The JSON parameter IS_HOSTED reads. */
function hostedParam(hosted: readonly ChannelAccount[] | undefined): string | null {
  return hosted ? JSON.stringify(hosted.map((h) => [h.channel, h.accountId])) : null;
}

const OUTBOX_STATES: readonly OutboxState[] = ["pending", "sending", "sent", "dead", "expired"];

/**
 * OutboxRepo over one better-sqlite3 connection. Terminal rows (sent, dead, expired) never
 * change again: markSent applies to pending or sending rows, markRetry to sending rows,
 * markDead to pending or sending rows; other calls are no-ops. A row carries an owner and a
 * lease only while `sending`; every way out of `sending` clears both.
 */
/** What markSent reads of the row it marks. */
interface UnsentRow {
  channel: string;
  account_id: string;
  chat_id: string;
  thread_id: string | null;
  reply_to: string | null;
  recipient_id: string | null;
}

export class SqliteOutboxRepo implements OutboxRepo {
  readonly #path: string;
  readonly #claimDueTx: Transaction<
    (params: DueParams, owner: string | null, until: number) => OutboxRecord[]
  >;
  readonly #markSentTx: Transaction<(id: number, platformMessageId: string, now: number) => void>;
  readonly #insert: Statement<[OutboxInsertRow]>;
  readonly #due: Statement<[DueParams], OutboxRow>;
  readonly #toSending: Statement<[{ owner: string | null; until: number; now: number; id: number }]>;
  readonly #unsentById: Statement<[number], UnsentRow>;
  readonly #finishPreview: Statement<[UnsentRow]>;
  readonly #nextCursor: Statement<[{ channel: string; recipientId: string }], { last_cursor: number }>;
  readonly #toSent: Statement<
    [{ platformMessageId: string; cursor: number | null; now: number; id: number }]
  >;
  readonly #toRetry: Statement<
    [
      {
        error: string;
        nextAttemptAt: number;
        now: number;
        id: number;
        owner: string | null;
        inDoubt: 0 | 1;
      },
    ]
  >;
  readonly #toDead: Statement<[{ error: string; now: number; id: number; owner: string | null }]>;
  readonly #expire: Statement<[{ now: number; cutoff: number; hosted: string | null }], OutboxRow>;
  readonly #resetExpired: Statement<[{ now: number }], OutboxRow>;
  readonly #byId: Statement<[number], OutboxRow>;
  readonly #forInbox: Statement<[number], OutboxRow>;
  readonly #forRun: Statement<[string], OutboxRow>;
  readonly #insertTx: Transaction<(rows: readonly OutboxInsert[], sessionKey: string, now: number) => void>;
  readonly #mailbox: Statement<[string, string, number, number], OutboxRow>;
  readonly #mailboxEnd: Statement<[string, string], { last_cursor: number }>;
  readonly #byState: Statement<[OutboxState, number], OutboxRow>;
  /** listByState("dead"): a literal state, so the partial index outbox_dead serves it. */
  readonly #dead: Statement<[number], OutboxRow>;
  readonly #countByState: Statement<[], { state: OutboxState; n: number }>;
  readonly #nextDue: Statement<[{ hosted: string | null }], { at: number | null }>;

  readonly #redact: (text: string) => string;

  /** `redact` cleans send errors before they are stored (default: none). */
  constructor(db: Database, path: string, redact: (text: string) => string = (text) => text) {
    this.#redact = redact;
    this.#path = path;
    this.#insert = db.prepare(
      `INSERT INTO outbox (session_key, run_id, inbox_id, channel, account_id, chat_id, thread_id, reply_to,
         recipient_id, text, seq, kind, state, attempts, next_attempt_at, mailbox_cursor, created_at, updated_at)
       VALUES (@sessionKey, @runId, @inboxId, @channel, @accountId, @chatId, @threadId, @replyTo,
         @recipientId, @text, @seq, @kind, @state, 0, @now, @mailboxCursor, @now, @now)`,
    );
    // A row is due only if its chat lets it go (CHAT_IS_FREE) and its channel account is hosted.
    this.#due = db.prepare(
      `SELECT o.* FROM outbox o
       WHERE o.state = 'pending' AND o.next_attempt_at <= @now AND ${IS_HOSTED} AND ${CHAT_IS_FREE}
       ORDER BY o.next_attempt_at, o.id
       LIMIT @limit`,
    );
    this.#toSending = db.prepare(
      `UPDATE outbox SET state = 'sending', owner = @owner, lease_until = @until, updated_at = @now
       WHERE id = @id`,
    );
    this.#unsentById = db.prepare(
      `SELECT channel, account_id, chat_id, thread_id, reply_to, recipient_id
       FROM outbox WHERE id = ? AND state IN ('pending', 'sending')`,
    );
    // A chunk sent for a turn's key ends that turn's streaming preview: it took the preview's
    // message, or the preview was gone and the chunk was posted anew (see PreviewRepo).
    this.#finishPreview = db.prepare(
      `DELETE FROM previews WHERE channel = @channel AND account_id = @account_id AND chat_id = @chat_id
         AND thread_id = IFNULL(@thread_id, '') AND reply_to = IFNULL(@reply_to, '')`,
    );
    // The counter row is the lock that orders writers to one mailbox (see listMailbox).
    this.#nextCursor = db.prepare(
      `INSERT INTO mailboxes (channel, recipient_id, last_cursor) VALUES (@channel, @recipientId, 1)
       ON CONFLICT (channel, recipient_id) DO UPDATE SET last_cursor = last_cursor + 1
       RETURNING last_cursor`,
    );
    this.#toSent = db.prepare(
      `UPDATE outbox SET state = 'sent', platform_message_id = @platformMessageId, last_error = NULL,
         owner = NULL, lease_until = NULL, mailbox_cursor = @cursor, updated_at = @now
       WHERE id = @id AND state IN ('pending', 'sending')`,
    );
    this.#toRetry = db.prepare(
      `UPDATE outbox SET state = 'pending', attempts = attempts + 1, last_error = @error,
         next_attempt_at = @nextAttemptAt, owner = NULL, lease_until = NULL, updated_at = @now,
         in_doubt = MAX(in_doubt, @inDoubt)
       WHERE id = @id AND state = 'sending' AND (@owner IS NULL OR owner = @owner)`,
    );
    // From `sending` the row died of a failed attempt, which counts like a retry's.
    this.#toDead = db.prepare(
      `UPDATE outbox SET state = 'dead', attempts = attempts + (state = 'sending'), last_error = @error,
         owner = NULL, lease_until = NULL, updated_at = @now
       WHERE id = @id
         AND (state = 'pending' OR (state = 'sending' AND (@owner IS NULL OR owner = @owner)))`,
    );
    this.#expire = db.prepare(
      `UPDATE outbox AS o SET state = 'expired', updated_at = @now
       WHERE o.state = 'pending' AND o.created_at < @cutoff AND ${IS_HOSTED}
       RETURNING *`,
    );
    // The IN terms let the planner use the partial index outbox_chat_unsent.
    this.#resetExpired = db.prepare(
      `UPDATE outbox SET state = 'pending', owner = NULL, lease_until = NULL, updated_at = @now,
         in_doubt = 1
       WHERE state IN ('pending', 'sending') AND state = 'sending' AND IFNULL(lease_until, 0) <= @now
       RETURNING *`,
    );
    this.#byId = db.prepare("SELECT * FROM outbox WHERE id = ?");
    this.#forInbox = db.prepare("SELECT * FROM outbox WHERE inbox_id = ? ORDER BY id");
    this.#forRun = db.prepare("SELECT * FROM outbox WHERE run_id = ? ORDER BY id");
    this.#insertTx = db.transaction((rows: readonly OutboxInsert[], sessionKey: string, now: number) =>
      this.insertInTransaction(rows, { sessionKey, runId: null, inboxId: null }, now),
    );
    this.#mailbox = db.prepare(
      `SELECT * FROM outbox
       WHERE channel = ? AND recipient_id = ? AND mailbox_cursor IS NOT NULL AND mailbox_cursor > ?
       ORDER BY mailbox_cursor LIMIT ?`,
    );
    this.#mailboxEnd = db.prepare("SELECT last_cursor FROM mailboxes WHERE channel = ? AND recipient_id = ?");
    this.#byState = db.prepare("SELECT * FROM outbox WHERE state = ? ORDER BY id LIMIT ?");
    this.#dead = db.prepare("SELECT * FROM outbox WHERE state = 'dead' ORDER BY id LIMIT ?");
    this.#countByState = db.prepare("SELECT state, COUNT(*) AS n FROM outbox GROUP BY state");
    // The same conditions as #due: a row waiting behind another row of its chat is not due,
    // whatever its own next_attempt_at says.
    this.#nextDue = db.prepare(
      `SELECT MIN(o.next_attempt_at) AS at FROM outbox o
       WHERE o.state = 'pending' AND ${IS_HOSTED} AND ${CHAT_IS_FREE}`,
    );
    this.#claimDueTx = db.transaction((params: DueParams, owner: string | null, until: number) =>
      this.#due.all(params).map((row) => {
        this.#toSending.run({ owner, until, now: params.now, id: row.id });
        return toOutboxRecord({
          ...row,
          state: "sending",
          owner,
          lease_until: until,
          updated_at: params.now,
        });
      }),
    );
    this.#markSentTx = db.transaction((id: number, platformMessageId: string, now: number) => {
      const row = this.#unsentById.get(id);
      if (!row) return;
      const cursor =
        row.recipient_id === null ? null : this.#cursorInTransaction(row.channel, row.recipient_id);
      this.#toSent.run({ platformMessageId, cursor, now, id });
      this.#finishPreview.run(row);
    });
  }

  async claimDue(now: number, limit: number, claim?: OutboxClaim): Promise<OutboxRecord[]> {
    if (claim) assertLeaseArgs(claim.owner, claim.ttlMs);
    if (limit <= 0 || claim?.hosted.length === 0) return [];
    const params = { now, limit, hosted: hostedParam(claim?.hosted) };
    // Without a claim (one process only) the rows get no owner and a lease already over.
    const owner = claim?.owner ?? null;
    const until = claim ? now + claim.ttlMs : 0;
    return guard(this.#path, () => this.#claimDueTx.immediate(params, owner, until));
  }

  async markSent(id: number, platformMessageId: string, now: number): Promise<void> {
    guard(this.#path, () => this.#markSentTx.immediate(id, platformMessageId, now));
  }

  async markRetry(
    id: number,
    error: string,
    nextAttemptAt: number,
    now: number,
    owner?: string,
    options?: { inDoubt?: boolean },
  ): Promise<void> {
    const params = {
      error: this.#redact(error),
      nextAttemptAt,
      now,
      id,
      owner: owner ?? null,
      inDoubt: options?.inDoubt ? (1 as const) : (0 as const),
    };
    guard(this.#path, () => this.#toRetry.run(params));
  }

  async markDead(id: number, error: string, now: number, owner?: string): Promise<void> {
    guard(this.#path, () => this.#toDead.run({ error: this.#redact(error), now, id, owner: owner ?? null }));
  }

  async expireOlderThan(
    cutoff: number,
    now: number,
    options?: { hosted: readonly ChannelAccount[] },
  ): Promise<OutboxRecord[]> {
    if (options?.hosted.length === 0) return [];
    const hosted = hostedParam(options?.hosted);
    return guard(this.#path, () =>
      this.#expire
        .all({ now, cutoff, hosted })
        .map(toOutboxRecord)
        .sort((a, b) => a.id - b.id),
    );
  }

  async resetExpired(now: number): Promise<OutboxRecord[]> {
    return guard(this.#path, () =>
      this.#resetExpired
        .all({ now })
        .map(toOutboxRecord)
        .sort((a, b) => a.id - b.id),
    );
  }

  async get(id: number): Promise<OutboxRecord | undefined> {
    return guard(this.#path, () => {
      const row = this.#byId.get(id);
      return row ? toOutboxRecord(row) : undefined;
    });
  }

  async listForInbox(inboxId: number): Promise<OutboxRecord[]> {
    return guard(this.#path, () => this.#forInbox.all(inboxId).map(toOutboxRecord));
  }

  async listForRun(runId: string): Promise<OutboxRecord[]> {
    return guard(this.#path, () => this.#forRun.all(runId).map(toOutboxRecord));
  }

  async insert(rows: readonly OutboxInsert[], sessionKey: string, now: number): Promise<void> {
    guard(this.#path, () => this.#insertTx.immediate(rows, sessionKey, now));
  }

  async listMailbox(
    channel: string,
    recipientId: string,
    after: number,
    limit: number,
  ): Promise<MailboxReply[]> {
    return guard(this.#path, () =>
      this.#mailbox.all(channel, recipientId, after, Math.max(0, limit)).map(toMailboxReply),
    );
  }

  async mailboxEnd(channel: string, recipientId: string): Promise<number> {
    return guard(this.#path, () => this.#mailboxEnd.get(channel, recipientId)?.last_cursor ?? 0);
  }

  async listByState(state: OutboxState, limit: number): Promise<OutboxRecord[]> {
    const n = Math.max(0, limit);
    return guard(this.#path, () =>
      (state === "dead" ? this.#dead.all(n) : this.#byState.all(state, n)).map(toOutboxRecord),
    );
  }

  async countByState(): Promise<Record<OutboxState, number>> {
    return guard(this.#path, () => {
      const counts = Object.fromEntries(OUTBOX_STATES.map((s) => [s, 0])) as Record<OutboxState, number>;
      for (const { state, n } of this.#countByState.all()) counts[state] = n;
      return counts;
    });
  }

  async nextDueAt(options?: { hosted: readonly ChannelAccount[] }): Promise<number | undefined> {
    if (options?.hosted.length === 0) return undefined;
    const hosted = hostedParam(options?.hosted);
    return guard(this.#path, () => this.#nextDue.get({ hosted })?.at ?? undefined);
  }

  /**
   * For commitTurn and rejectWithReply, inside their transaction: new rows, pending and due at
   * `now` (or `sent`, when `delivered`: the channel delivers at commit, and a row with a
   * recipient takes its mailbox's next cursor), inserted in `seq` order (stable) so that id
   * order, which claimDue follows, and cursor order are chunk order.
   */
  insertInTransaction(
    rows: readonly OutboxInsert[],
    owner: { sessionKey: string; runId: string | null; inboxId: number | null },
    now: number,
  ): void {
    for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
      const recipientId = row.recipientId ?? null;
      const mailboxCursor =
        row.delivered && recipientId !== null
          ? this.#cursorInTransaction(row.target.channel, recipientId)
          : null;
      this.#insert.run({
        ...owner,
        channel: row.target.channel,
        accountId: row.target.accountId,
        chatId: row.target.chatId,
        threadId: row.target.threadId ?? null,
        replyTo: row.replyTo ?? null,
        recipientId,
        text: row.text,
        seq: row.seq,
        kind: row.kind,
        state: row.delivered ? "sent" : "pending",
        mailboxCursor,
        now,
      });
    }
  }

  /** The next cursor of a mailbox, taken inside the caller's transaction (which it then orders). */
  #cursorInTransaction(channel: string, recipientId: string): number {
    const next = this.#nextCursor.get({ channel, recipientId });
    if (!next) throw new Error(`mailbox ${channel}/${recipientId} returned no cursor`);
    return next.last_cursor;
  }
}
