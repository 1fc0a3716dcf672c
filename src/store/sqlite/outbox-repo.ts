/**
 * The outbox in SQLite: reply chunks committed with their turn, then claimed and sent in
 * order per chat (channel, account, chat, thread), chats in parallel.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { ChannelName, ChatTarget } from "../../channels/types.js";
import type { OutboxInsert, OutboxRecord, OutboxRepo, OutboxState } from "../types.js";
import { guard } from "./errors.js";

interface OutboxRow {
  id: number;
  session_key: string;
  run_id: string | null;
  inbox_id: number | null;
  channel: string;
  account_id: string;
  chat_id: string;
  thread_id: string | null;
  reply_to: string | null;
  recipient_id: string | null;
  text: string;
  seq: number;
  kind: OutboxInsert["kind"];
  state: OutboxState;
  attempts: number;
  next_attempt_at: number;
  platform_message_id: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

interface OutboxInsertRow {
  sessionKey: string;
  runId: string | null;
  inboxId: number | null;
  channel: string;
  accountId: string;
  chatId: string;
  threadId: string | null;
  replyTo: string | null;
  recipientId: string | null;
  text: string;
  seq: number;
  kind: OutboxInsert["kind"];
  state: "pending" | "sent";
  now: number;
}

const OUTBOX_STATES: readonly OutboxState[] = ["pending", "sending", "sent", "dead", "expired"];

/**
 * OutboxRepo over one better-sqlite3 connection. Terminal rows (sent, dead, expired) never
 * change again: markSent applies to pending or sending rows, markRetry to sending rows,
 * markDead to pending or sending rows; other calls are no-ops.
 */
export class SqliteOutboxRepo implements OutboxRepo {
  readonly #path: string;
  readonly #claimDueTx: Transaction<(now: number, limit: number) => OutboxRecord[]>;
  readonly #insert: Statement<[OutboxInsertRow]>;
  readonly #due: Statement<[number, number], OutboxRow>;
  readonly #toSending: Statement<[number, number]>;
  readonly #toSent: Statement<[string, number, number]>;
  readonly #toRetry: Statement<[string, number, number, number]>;
  readonly #toDead: Statement<[string, number, number]>;
  readonly #expire: Statement<[number, number], OutboxRow>;
  readonly #resetSending: Statement<[number], OutboxRow>;
  readonly #byId: Statement<[number], OutboxRow>;
  readonly #forInbox: Statement<[number], OutboxRow>;
  readonly #sentFor: Statement<[string, string, number, number], OutboxRow>;
  readonly #byState: Statement<[OutboxState, number], OutboxRow>;
  /** listByState("dead"): a literal state, so the partial index outbox_dead serves it. */
  readonly #dead: Statement<[number], OutboxRow>;
  readonly #countByState: Statement<[], { state: OutboxState; n: number }>;
  readonly #nextDue: Statement<[], { at: number | null }>;

  readonly #redact: (text: string) => string;

  /** `redact` cleans send errors before they are stored (default: none). */
  constructor(db: Database, path: string, redact: (text: string) => string = (text) => text) {
    this.#redact = redact;
    this.#path = path;
    this.#insert = db.prepare(
      `INSERT INTO outbox (session_key, run_id, inbox_id, channel, account_id, chat_id, thread_id, reply_to,
         recipient_id, text, seq, kind, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES (@sessionKey, @runId, @inboxId, @channel, @accountId, @chatId, @threadId, @replyTo,
         @recipientId, @text, @seq, @kind, @state, 0, @now, @now, @now)`,
    );
    // A row is due only if no earlier row of its chat is still unsent; `IS` so that a missing
    // thread id (NULL) matches itself.
    this.#due = db.prepare(
      `SELECT o.* FROM outbox o
       WHERE o.state = 'pending' AND o.next_attempt_at <= ?
         AND NOT EXISTS (
           SELECT 1 FROM outbox e
           WHERE e.channel = o.channel AND e.account_id = o.account_id AND e.chat_id = o.chat_id
             AND e.thread_id IS o.thread_id AND e.id < o.id AND e.state IN ('pending', 'sending'))
       ORDER BY o.next_attempt_at, o.id
       LIMIT ?`,
    );
    this.#toSending = db.prepare("UPDATE outbox SET state = 'sending', updated_at = ? WHERE id = ?");
    this.#toSent = db.prepare(
      `UPDATE outbox SET state = 'sent', platform_message_id = ?, last_error = NULL, updated_at = ?
       WHERE id = ? AND state IN ('pending', 'sending')`,
    );
    this.#toRetry = db.prepare(
      `UPDATE outbox SET state = 'pending', attempts = attempts + 1, last_error = ?, next_attempt_at = ?,
         updated_at = ?
       WHERE id = ? AND state = 'sending'`,
    );
    // From `sending` the row died of a failed attempt, which counts like a retry's.
    this.#toDead = db.prepare(
      `UPDATE outbox SET state = 'dead', attempts = attempts + (state = 'sending'), last_error = ?,
         updated_at = ?
       WHERE id = ? AND state IN ('pending', 'sending')`,
    );
    this.#expire = db.prepare(
      `UPDATE outbox SET state = 'expired', updated_at = ?
       WHERE state = 'pending' AND created_at < ?
       RETURNING *`,
    );
    // The IN term lets the planner use the partial index outbox_chat_unsent.
    this.#resetSending = db.prepare(
      `UPDATE outbox SET state = 'pending', updated_at = ? WHERE state IN ('pending', 'sending') AND state = 'sending'
       RETURNING *`,
    );
    this.#byId = db.prepare("SELECT * FROM outbox WHERE id = ?");
    this.#forInbox = db.prepare("SELECT * FROM outbox WHERE inbox_id = ? ORDER BY id");
    this.#sentFor = db.prepare(
      `SELECT * FROM outbox WHERE state = 'sent' AND channel = ? AND recipient_id = ? AND id > ?
       ORDER BY id LIMIT ?`,
    );
    this.#byState = db.prepare("SELECT * FROM outbox WHERE state = ? ORDER BY id LIMIT ?");
    this.#dead = db.prepare("SELECT * FROM outbox WHERE state = 'dead' ORDER BY id LIMIT ?");
    this.#countByState = db.prepare("SELECT state, COUNT(*) AS n FROM outbox GROUP BY state");
    // The same chat condition as #due: a row waiting behind an earlier unsent row is not due,
    // whatever its own next_attempt_at says.
    this.#nextDue = db.prepare(
      `SELECT MIN(o.next_attempt_at) AS at FROM outbox o
       WHERE o.state = 'pending'
         AND NOT EXISTS (
           SELECT 1 FROM outbox e
           WHERE e.channel = o.channel AND e.account_id = o.account_id AND e.chat_id = o.chat_id
             AND e.thread_id IS o.thread_id AND e.id < o.id AND e.state IN ('pending', 'sending'))`,
    );
    this.#claimDueTx = db.transaction((now: number, limit: number) =>
      this.#due.all(now, limit).map((row) => {
        this.#toSending.run(now, row.id);
        return toOutboxRecord({ ...row, state: "sending", updated_at: now });
      }),
    );
  }

  async claimDue(now: number, limit: number): Promise<OutboxRecord[]> {
    if (limit <= 0) return [];
    return guard(this.#path, () => this.#claimDueTx.immediate(now, limit));
  }

  async markSent(id: number, platformMessageId: string, now: number): Promise<void> {
    guard(this.#path, () => this.#toSent.run(platformMessageId, now, id));
  }

  async markRetry(id: number, error: string, nextAttemptAt: number, now: number): Promise<void> {
    guard(this.#path, () => this.#toRetry.run(this.#redact(error), nextAttemptAt, now, id));
  }

  async markDead(id: number, error: string, now: number): Promise<void> {
    guard(this.#path, () => this.#toDead.run(this.#redact(error), now, id));
  }

  async expireOlderThan(cutoff: number, now: number): Promise<OutboxRecord[]> {
    return guard(this.#path, () =>
      this.#expire
        .all(now, cutoff)
        .map(toOutboxRecord)
        .sort((a, b) => a.id - b.id),
    );
  }

  async resetSending(now: number): Promise<OutboxRecord[]> {
    return guard(this.#path, () =>
      this.#resetSending
        .all(now)
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

  async listSentFor(
    channel: string,
    recipientId: string,
    afterId: number,
    limit: number,
  ): Promise<OutboxRecord[]> {
    return guard(this.#path, () =>
      this.#sentFor.all(channel, recipientId, afterId, Math.max(0, limit)).map(toOutboxRecord),
    );
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

  async nextDueAt(): Promise<number | undefined> {
    return guard(this.#path, () => this.#nextDue.get()?.at ?? undefined);
  }

  /**
   * For commitTurn, inside its transaction: new rows, pending and due at `now` (or `sent`, when
   * `delivered`: the channel delivers at commit), inserted in
   * `seq` order (stable) so that id order, which claimDue follows, is chunk order.
   */
  insertInTransaction(
    rows: readonly OutboxInsert[],
    owner: { sessionKey: string; runId: string | null; inboxId: number | null },
    now: number,
  ): void {
    for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
      this.#insert.run({
        ...owner,
        channel: row.target.channel,
        accountId: row.target.accountId,
        chatId: row.target.chatId,
        threadId: row.target.threadId ?? null,
        replyTo: row.replyTo ?? null,
        recipientId: row.recipientId ?? null,
        text: row.text,
        seq: row.seq,
        kind: row.kind,
        state: row.delivered ? "sent" : "pending",
        now,
      });
    }
  }
}

function toOutboxRecord(row: OutboxRow): OutboxRecord {
  const target: ChatTarget = {
    channel: row.channel as ChannelName,
    accountId: row.account_id,
    chatId: row.chat_id,
    ...(row.thread_id !== null ? { threadId: row.thread_id } : {}),
  };
  return {
    id: row.id,
    sessionKey: row.session_key,
    runId: row.run_id,
    inboxId: row.inbox_id,
    target,
    ...(row.reply_to !== null ? { replyTo: row.reply_to } : {}),
    ...(row.recipient_id !== null ? { recipientId: row.recipient_id } : {}),
    text: row.text,
    seq: row.seq,
    kind: row.kind,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    platformMessageId: row.platform_message_id,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
