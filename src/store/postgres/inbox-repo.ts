/**
 * The inbox in PostgreSQL: every accepted inbound message, deduplicated by platform id, moving
 * received → queued → running → answered | failed (or received → rejected). A port of
 * SqliteInboxRepo; the rows, their dedupe key and their mapping are SQLite's (inbox-rows.ts).
 */
import type { InboundMessage } from "../../channels/types.js";
import { COMMAND_REASON_PREFIX, NOT_MENTIONED } from "../reasons.js";
import type { InboxRecord, InboxRepo, InboxState, RejectedCounts } from "../repos/inbox-repo.js";
import type { SessionFence } from "../repos/lease-repo.js";
import type { TranscriptPayload } from "../repos/transcript-repo.js";
import { type InboxRow, dedupeKeyRange, inboxDedupeKey, toInboxRecord } from "../sqlite/inbox-rows.js";
import { type PgDb, type PgRunner, pgStoreError } from "./pg-db.js";
import type { PgTranscriptRepo } from "./transcript-repo.js";

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

/** received → rejected with a reason; nothing from any other state. */
const TO_REJECTED =
  "UPDATE inbox SET state = 'rejected', error = $2, updated_at = $3 WHERE id = $1 AND state = 'received'";

/**
 * InboxRepo over a PgDb. State changes only apply from the states the contract names
 * (markQueued and reject only touch `received` rows); anything else is a no-op, so a late or
 * repeated call cannot move a row backwards. A row carries an owner and a lease only while
 * `running`; every way out of `running` clears both.
 */
export class PgInboxRepo implements InboxRepo {
  readonly #db: PgDb;
  readonly #transcript: PgTranscriptRepo;

  constructor(db: PgDb, transcript: PgTranscriptRepo) {
    this.#db = db;
    this.#transcript = transcript;
  }

  /** The pool this repository writes through. */
  get db(): PgDb {
    return this.#db;
  }

  async receive(
    message: InboundMessage,
    sessionKey: string,
    now: number,
    state: "received" | "queued" = "received",
  ): Promise<Received> {
    const dedupeKey = inboxDedupeKey(message);
    // No transaction (one round trip, not three): the insert is atomic on its own, and when it
    // meets the same key being inserted concurrently, ON CONFLICT waits for that transaction's
    // end, so a row it skips for a conflict is committed and the read after it sees that row.
    const inserted = await this.#db.row<InboxRow>(
      `INSERT INTO inbox (dedupe_key, session_key, message, state, attempts, received_at, updated_at)
       VALUES ($1, $2, $3, $4, 0, $5, $5)
       ON CONFLICT (dedupe_key) DO NOTHING
       RETURNING *`,
      [dedupeKey, sessionKey, JSON.stringify(message), state, now],
    );
    if (inserted) return { record: toInboxRecord(inserted), duplicate: false };
    const existing = await this.#db.row<InboxRow>("SELECT * FROM inbox WHERE dedupe_key = $1", [dedupeKey]);
    if (!existing)
      throw pgStoreError(this.#db.label, new Error(`inbox row ${dedupeKey} vanished during receive`));
    return { record: toInboxRecord(existing), duplicate: true };
  }

  async markQueued(id: number, now: number): Promise<void> {
    await this.#db.run(
      "UPDATE inbox SET state = 'queued', updated_at = $2 WHERE id = $1 AND state = 'received'",
      [id, now],
    );
  }

  async reject(id: number, reason: string, now: number): Promise<void> {
    await this.#db.run(TO_REJECTED, [id, reason, now]);
  }

  async claim(
    sessionKey: string,
    sessionId: string,
    runId: string,
    options: { all: boolean; lease: SessionFence },
    now: number,
  ): Promise<InboxRecord[]> {
    const { all, lease } = options;
    return this.#db.tx(async (tx) => {
      // Rows belong to the lease holder until its session lease's expiry; nothing is claimed
      // unless `lease` holds the session at `now` (its holder and fence, unexpired): the lease
      // read LeaseRepo.heldUntilIn makes, joined into the update (one round trip, not two).
      // LIMIT NULL is no limit: one statement serves both claim modes.
      const rows = await tx.rows<InboxRow>(
        `UPDATE inbox SET state = 'running', run_id = $3, owner = $4, lease_until = l.lease_until,
           attempts = attempts + 1, updated_at = $6
         FROM (SELECT lease_until FROM session_leases
                WHERE session_key = $1 AND owner = $4 AND fence = $5 AND lease_until > $6) l
         WHERE inbox.id IN (SELECT id FROM inbox WHERE session_key = $1 AND state = 'queued' ORDER BY id LIMIT $2)
           AND inbox.state = 'queued'
         RETURNING inbox.*`,
        [sessionKey, all ? null : 1, runId, lease.owner, lease.fence, now],
      );
      const claimed = rows.map(toInboxRecord).sort((a, b) => a.id - b.id);
      // Once per inbox id ever: a re-claim after a crash adds no second user event.
      await this.#transcript.appendIn(tx, sessionKey, sessionId, runId, claimed.map(userEvent), now);
      return claimed;
    });
  }

  async get(id: number): Promise<InboxRecord | undefined> {
    const row = await this.#db.row<InboxRow>("SELECT * FROM inbox WHERE id = $1", [id]);
    return row ? toInboxRecord(row) : undefined;
  }

  async listUnfinished(): Promise<InboxRecord[]> {
    const rows = await this.#db.rows<InboxRow>(
      "SELECT * FROM inbox WHERE state IN ('received', 'queued', 'running') ORDER BY id",
    );
    return rows.map(toInboxRecord);
  }

  async requeueExpired(now: number): Promise<InboxRecord[]> {
    const rows = await this.#db.rows<InboxRow>(
      `UPDATE inbox SET state = 'queued', owner = NULL, lease_until = NULL, updated_at = $1
       WHERE state = 'running' AND COALESCE(lease_until, 0) <= $1
       RETURNING *`,
      [now],
    );
    return rows.map(toInboxRecord).sort((a, b) => a.id - b.id);
  }

  async sessionsWithQueued(claimableBy?: { owner: string; now: number }): Promise<string[]> {
    // With an owner: not the sessions another owner holds at `now`.
    const rows = await this.#db.rows<{ session_key: string }>(
      `SELECT i.session_key FROM inbox i
       WHERE i.state = 'queued'
         AND ($1::text IS NULL OR NOT EXISTS (
           SELECT 1 FROM session_leases l
           WHERE l.session_key = i.session_key AND l.owner <> $1 AND l.lease_until > $2))
       GROUP BY i.session_key ORDER BY MIN(i.id)`,
      [claimableBy?.owner ?? null, claimableBy?.now ?? 0],
    );
    return rows.map((r) => r.session_key);
  }

  async groupContext(
    sessionKey: string,
    limit: number,
    options?: { withThreads?: boolean },
  ): Promise<InboxRecord[]> {
    // The thread keys of a chat are the range (key:thread:, key:thread;) in byte order.
    const rows = await this.#db.rows<InboxRow>(
      `SELECT * FROM inbox
        WHERE session_key = $1 AND state = 'rejected' AND error = $2
          AND id > COALESCE((SELECT MAX(id) FROM inbox
                              WHERE (session_key = $1
                                     OR ($4::boolean
                                         AND session_key COLLATE "C" > ($1 || ':thread:')
                                         AND session_key COLLATE "C" < ($1 || ':thread;')))
                                AND state IN ('queued', 'running', 'answered', 'failed')), 0)
        ORDER BY id DESC LIMIT $3`,
      [sessionKey, NOT_MENTIONED, Math.max(0, limit), options?.withThreads === true],
    );
    return rows.reverse().map(toInboxRecord);
  }

  async countByState(): Promise<Record<InboxState, number>> {
    const counts = Object.fromEntries(INBOX_STATES.map((s) => [s, 0])) as Record<InboxState, number>;
    const rows = await this.#db.rows<{ state: InboxState; n: number }>(
      "SELECT state, COUNT(*) AS n FROM inbox GROUP BY state",
    );
    for (const { state, n } of rows) counts[state] = n;
    return counts;
  }

  async countRejected(): Promise<RejectedCounts> {
    // starts_with, not LIKE: LIKE treats _ and % in the prefix as wildcards.
    const row = await this.#db.row<{ total: number; commands: number; group_context: number }>(
      `SELECT COUNT(*) AS total,
              COUNT(*) FILTER (WHERE starts_with(error, $1)) AS commands,
              COUNT(*) FILTER (WHERE error = $2) AS group_context
         FROM inbox WHERE state = 'rejected'`,
      [COMMAND_REASON_PREFIX, NOT_MENTIONED],
    );
    const commands = row?.commands ?? 0;
    const groupContext = row?.group_context ?? 0;
    return { commands, groupContext, refused: (row?.total ?? 0) - commands - groupContext };
  }

  async lastPerChat(
    channel: string,
    accountId: string,
    since: number,
    scan: number,
  ): Promise<Array<{ chatId: string; threadId?: string; platformMessageId: string; receivedAt: number }>> {
    // A range of the unique dedupe key (byte order: the column is COLLATE "C"), newest first.
    const [from, to] = dedupeKeyRange(channel, accountId);
    const rows = await this.#db.rows<{ message: string; received_at: number }>(
      `SELECT message, received_at FROM inbox
       WHERE dedupe_key >= $1 AND dedupe_key < $2 AND received_at >= $3 ORDER BY id DESC LIMIT $4`,
      [from, to, since, Math.max(0, scan)],
    );
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
  }

  /** For rejectWithReply, inside its transaction: the row's session, if the row exists. */
  async getIn(tx: PgRunner, id: number): Promise<{ sessionKey: string } | undefined> {
    const row = await tx.row<{ session_key: string }>("SELECT session_key FROM inbox WHERE id = $1", [id]);
    return row ? { sessionKey: row.session_key } : undefined;
  }

  /** For rejectWithReply: received → rejected with `reason`; false when the row was not received. */
  async rejectIn(tx: PgRunner, id: number, reason: string, now: number): Promise<boolean> {
    return (await tx.run(TO_REJECTED, [id, reason, now])) === 1;
  }

  /** For commitTurn: running (under `runId`) → final state, owner and lease cleared. */
  async finishIn(
    tx: PgRunner,
    id: number,
    runId: string,
    state: "answered" | "failed",
    error: string | null,
    now: number,
  ): Promise<void> {
    await tx.exec(
      `UPDATE inbox SET state = $2, error = $3, owner = NULL, lease_until = NULL, updated_at = $4
       WHERE id = $1 AND state = 'running' AND run_id = $5`,
      [id, state, error, now, runId],
    );
  }
}

/** The user event a claimed row adds to the transcript. */
function userEvent(r: InboxRecord): TranscriptPayload {
  return {
    type: "user",
    inboxId: r.id,
    text: r.message.text,
    senderName: r.message.senderName,
    ...(r.message.isDirect ? {} : { isGroup: true }),
    ...(r.message.groupContext?.length ? { context: r.message.groupContext } : {}),
    ...(r.message.replyToText ? { replyTo: r.message.replyToText.slice(0, REPLY_TO_MAX_CHARS) } : {}),
    ...(r.message.attachments?.length ? { attachments: r.message.attachments } : {}),
  };
}
