/**
 * The outbox in PostgreSQL: reply chunks committed with their turn, then claimed (by the process
 * hosting their channel account, under a lease) and sent in order per chat (channel, account,
 * chat, thread), chats in parallel; sent rows with a recipient numbered into its mailbox.
 */
import type {
  ChannelAccount,
  MailboxReply,
  OutboxClaim,
  OutboxInsert,
  OutboxRecord,
  OutboxRepo,
  OutboxState,
} from "../repos/outbox-repo.js";
import {
  byId,
  CHAT_IS_FREE,
  hostedParams,
  isHosted,
  type OutboxRow,
  toMailboxReply,
  toOutboxRecord,
} from "./outbox-rows.js";
import type { PgDb, PgRunner } from "./pg-db.js";

const OUTBOX_STATES: readonly OutboxState[] = ["pending", "sending", "sent", "dead", "expired"];

/**
 * claimDue in one statement: the due rows whose chat lets them go and whose channel account is
 * hosted, in due order, marked sending. `SKIP LOCKED`: a row another transaction is changing
 * (a concurrent claim, an outcome) is left to it; its chat's later rows stay held back by it.
 * $1 owner, $2 lease until, $3 now, $4 limit, $5/$6 hosted.
 */
const CLAIM_DUE_SQL = `
  UPDATE outbox SET state = 'sending', owner = $1, lease_until = $2, updated_at = $3
  WHERE id IN (
    SELECT o.id FROM outbox o
    WHERE o.state = 'pending' AND o.next_attempt_at <= $3 AND ${isHosted(5)} AND ${CHAT_IS_FREE}
    ORDER BY o.next_attempt_at, o.id
    LIMIT $4
    FOR UPDATE OF o SKIP LOCKED)
  RETURNING *`;

/** What markSent reads of the row it marks. */
interface UnsentRow {
  channel: string;
  account_id: string;
  chat_id: string;
  thread_id: string | null;
  reply_to: string | null;
  recipient_id: string | null;
}

/**
 * OutboxRepo over a PgDb. Terminal rows (sent, dead, expired) never change again: markSent
 * applies to pending or sending rows, markRetry to sending rows, markDead to pending or sending
 * rows; other calls are no-ops. A row carries an owner and a lease only while `sending`; every
 * way out of `sending` clears both.
 */
export class PgOutboxRepo implements OutboxRepo {
  readonly #db: PgDb;
  readonly #redact: (text: string) => string;

  /** `redact` cleans send errors before they are stored (default: none). */
  constructor(db: PgDb, redact: (text: string) => string = (text) => text) {
    this.#db = db;
    this.#redact = redact;
  }

  get db(): PgDb {
    return this.#db;
  }

  async claimDue(now: number, limit: number, claim?: OutboxClaim): Promise<OutboxRecord[]> {
    if (claim) assertClaimArgs(claim.owner, claim.ttlMs);
    if (limit <= 0 || claim?.hosted.length === 0) return [];
    // Without a claim (one process only) the rows get no owner and a lease already over.
    const owner = claim?.owner ?? null;
    const until = claim ? now + claim.ttlMs : 0;
    const params = [owner, until, now, limit, ...hostedParams(claim?.hosted)];
    // In a transaction: the chat condition reads other rows, which must be the state it writes on.
    const rows = await this.#db.tx((tx) => tx.rows<OutboxRow>(CLAIM_DUE_SQL, params));
    return rows.map(toOutboxRecord).sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
  }

  async markSent(id: number, platformMessageId: string, now: number): Promise<void> {
    await this.#db.tx(async (tx) => {
      const row = await tx.row<UnsentRow>(
        `SELECT channel, account_id, chat_id, thread_id, reply_to, recipient_id
         FROM outbox WHERE id = $1 AND state IN ('pending', 'sending')`,
        [id],
      );
      if (!row) return;
      const cursor = row.recipient_id === null ? null : await nextCursor(tx, row.channel, row.recipient_id);
      await tx.exec(
        `UPDATE outbox SET state = 'sent', platform_message_id = $1, last_error = NULL,
           owner = NULL, lease_until = NULL, mailbox_cursor = $2, updated_at = $3
         WHERE id = $4 AND state IN ('pending', 'sending')`,
        [platformMessageId, cursor, now, id],
      );
      // A chunk sent for a turn's key ends that turn's streaming preview: it took the preview's
      // message, or the preview was gone and the chunk was posted anew (see PreviewRepo).
      await tx.exec(
        `DELETE FROM previews WHERE channel = $1 AND account_id = $2 AND chat_id = $3
           AND thread_id = COALESCE($4, '') AND reply_to = COALESCE($5, '')`,
        [row.channel, row.account_id, row.chat_id, row.thread_id, row.reply_to],
      );
    });
  }

  async markRetry(
    id: number,
    error: string,
    nextAttemptAt: number,
    now: number,
    owner?: string,
    options?: { inDoubt?: boolean },
  ): Promise<void> {
    await this.#db.run(
      `UPDATE outbox SET state = 'pending', attempts = attempts + 1, last_error = $1,
         next_attempt_at = $2, owner = NULL, lease_until = NULL, updated_at = $3,
         in_doubt = in_doubt OR $4
       WHERE id = $5 AND state = 'sending' AND ($6::text IS NULL OR owner = $6)`,
      [this.#redact(error), nextAttemptAt, now, options?.inDoubt === true, id, owner ?? null],
    );
  }

  async markDead(id: number, error: string, now: number, owner?: string): Promise<void> {
    // From `sending` the row died of a failed attempt, which counts like a retry's.
    await this.#db.run(
      `UPDATE outbox SET state = 'dead', attempts = attempts + (CASE WHEN state = 'sending' THEN 1 ELSE 0 END),
         last_error = $1, owner = NULL, lease_until = NULL, updated_at = $2
       WHERE id = $3
         AND (state = 'pending' OR (state = 'sending' AND ($4::text IS NULL OR owner = $4)))`,
      [this.#redact(error), now, id, owner ?? null],
    );
  }

  async expireOlderThan(
    cutoff: number,
    now: number,
    options?: { hosted: readonly ChannelAccount[] },
  ): Promise<OutboxRecord[]> {
    if (options?.hosted.length === 0) return [];
    const rows = await this.#db.rows<OutboxRow>(
      `UPDATE outbox AS o SET state = 'expired', updated_at = $1
       WHERE o.state = 'pending' AND o.created_at < $2 AND ${isHosted(3)}
       RETURNING *`,
      [now, cutoff, ...hostedParams(options?.hosted)],
    );
    return byId(rows);
  }

  async resetExpired(now: number): Promise<OutboxRecord[]> {
    const rows = await this.#db.rows<OutboxRow>(
      `UPDATE outbox SET state = 'pending', owner = NULL, lease_until = NULL, updated_at = $1,
         in_doubt = TRUE
       WHERE state = 'sending' AND COALESCE(lease_until, 0) <= $1
       RETURNING *`,
      [now],
    );
    return byId(rows);
  }

  async get(id: number): Promise<OutboxRecord | undefined> {
    const row = await this.#db.row<OutboxRow>("SELECT * FROM outbox WHERE id = $1", [id]);
    return row ? toOutboxRecord(row) : undefined;
  }

  async listForInbox(inboxId: number): Promise<OutboxRecord[]> {
    const rows = await this.#db.rows<OutboxRow>("SELECT * FROM outbox WHERE inbox_id = $1 ORDER BY id", [
      inboxId,
    ]);
    return rows.map(toOutboxRecord);
  }

  async listForRun(runId: string): Promise<OutboxRecord[]> {
    const rows = await this.#db.rows<OutboxRow>("SELECT * FROM outbox WHERE run_id = $1 ORDER BY id", [
      runId,
    ]);
    return rows.map(toOutboxRecord);
  }

  async insert(rows: readonly OutboxInsert[], sessionKey: string, now: number): Promise<void> {
    await this.#db.tx((tx) => this.insertIn(tx, rows, { sessionKey, runId: null, inboxId: null }, now));
  }

  async listMailbox(
    channel: string,
    recipientId: string,
    after: number,
    limit: number,
  ): Promise<MailboxReply[]> {
    const rows = await this.#db.rows<OutboxRow>(
      `SELECT * FROM outbox
       WHERE channel = $1 AND recipient_id = $2 AND mailbox_cursor IS NOT NULL AND mailbox_cursor > $3
       ORDER BY mailbox_cursor LIMIT $4`,
      [channel, recipientId, after, Math.max(0, limit)],
    );
    return rows.map(toMailboxReply);
  }

  async mailboxEnd(channel: string, recipientId: string): Promise<number> {
    const row = await this.#db.row<{ last_cursor: number }>(
      "SELECT last_cursor FROM mailboxes WHERE channel = $1 AND recipient_id = $2",
      [channel, recipientId],
    );
    return row?.last_cursor ?? 0;
  }

  async listByState(state: OutboxState, limit: number): Promise<OutboxRecord[]> {
    const rows = await this.#db.rows<OutboxRow>(
      "SELECT * FROM outbox WHERE state = $1 ORDER BY id LIMIT $2",
      [state, Math.max(0, limit)],
    );
    return rows.map(toOutboxRecord);
  }

  async countByState(): Promise<Record<OutboxState, number>> {
    const counts = Object.fromEntries(OUTBOX_STATES.map((s) => [s, 0])) as Record<OutboxState, number>;
    const rows = await this.#db.rows<{ state: OutboxState; n: number }>(
      "SELECT state, COUNT(*) AS n FROM outbox GROUP BY state",
    );
    for (const { state, n } of rows) counts[state] = n;
    return counts;
  }

  async nextDueAt(options?: { hosted: readonly ChannelAccount[] }): Promise<number | undefined> {
    if (options?.hosted.length === 0) return undefined;
    // The same conditions as claimDue: a row waiting behind another row of its chat is not due,
    // whatever its own next_attempt_at says.
    const row = await this.#db.row<{ at: number | null }>(
      `SELECT MIN(o.next_attempt_at) AS at FROM outbox o
       WHERE o.state = 'pending' AND ${isHosted(1)} AND ${CHAT_IS_FREE}`,
      hostedParams(options?.hosted),
    );
    return row?.at ?? undefined;
  }

  /**
   * For commitTurn and rejectWithReply, inside their transaction: new rows, pending and due at
   * `now` (or `sent`, when `delivered`: the channel delivers at commit, and a row with a
   * recipient takes its mailbox's next cursor), inserted in `seq` order (stable) so that id
   * order, which claimDue follows, and cursor order are chunk order.
   */
  async insertIn(
    tx: PgRunner,
    rows: readonly OutboxInsert[],
    owner: { sessionKey: string; runId: string | null; inboxId: number | null },
    now: number,
  ): Promise<void> {
    for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
      const recipientId = row.recipientId ?? null;
      const values = [
        owner.sessionKey,
        owner.runId,
        owner.inboxId,
        row.target.channel,
        row.target.accountId,
        row.target.chatId,
        row.target.threadId ?? null,
        row.replyTo ?? null,
        recipientId,
        row.text,
        row.seq,
        row.kind,
        row.delivered ? "sent" : "pending",
        now,
      ];
      // A delivered row with a recipient takes its mailbox's next cursor in the same statement:
      // the counter row stays locked until the transaction commits, so the writer of cursor
      // n + 1 commits after the writer of n. No result is needed: the write may wait for the
      // transaction's next round trip (PgRunner.exec).
      if (row.delivered && recipientId !== null)
        await tx.exec(
          `WITH cursor AS (
             INSERT INTO mailboxes (channel, recipient_id, last_cursor) VALUES ($4, $9, 1)
             ON CONFLICT (channel, recipient_id) DO UPDATE SET last_cursor = mailboxes.last_cursor + 1
             RETURNING last_cursor)
           INSERT INTO outbox (${OUTBOX_INSERT_COLUMNS})
           SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 0, $14, cursor.last_cursor, $14, $14
             FROM cursor`,
          values,
        );
      else
        await tx.exec(
          `INSERT INTO outbox (${OUTBOX_INSERT_COLUMNS})
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 0, $14, NULL, $14, $14)`,
          values,
        );
    }
  }
}

/**
 * The next cursor of a mailbox, taken inside the caller's transaction: the counter row stays
 * locked until it commits, so the writer of cursor n + 1 commits after the writer of n.
 */
async function nextCursor(tx: PgRunner, channel: string, recipientId: string): Promise<number> {
  const next = await tx.row<{ last_cursor: number }>(
    `INSERT INTO mailboxes (channel, recipient_id, last_cursor) VALUES ($1, $2, 1)
     ON CONFLICT (channel, recipient_id) DO UPDATE SET last_cursor = mailboxes.last_cursor + 1
     RETURNING last_cursor`,
    [channel, recipientId],
  );
  if (!next) throw new Error(`mailbox ${channel}/${recipientId} returned no cursor`);
  return next.last_cursor;
}

/** The columns an insert fills, in the order of its values. */
const OUTBOX_INSERT_COLUMNS = `session_key, run_id, inbox_id, channel, account_id, chat_id, thread_id, reply_to,
  recipient_id, text, seq, kind, state, attempts, next_attempt_at, mailbox_cursor, created_at, updated_at`;

/** A claim's owner and TTL as LeaseRepo checks them: a non-empty id, a whole TTL > 0 ms. */
function assertClaimArgs(owner: string, ttlMs: number): void {
  if (typeof owner !== "string" || owner === "") {
    throw new TypeError(`lease owner must be a non-empty process instance id, got ${JSON.stringify(owner)}`);
  }
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new TypeError(`lease ttlMs must be a whole number of milliseconds > 0, got ${ttlMs}`);
  }
}
