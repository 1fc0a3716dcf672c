/**
 * Streaming previews in PostgreSQL: one row per preview key, written once when the preview was
 * posted. The outbox's markSent deletes the row of the key it sends for. A port of
 * SqlitePreviewRepo.
 */
import type { PreviewKey, PreviewRecord, PreviewRepo, RecordedPreview } from "../repos/preview-repo.js";
import type { PgDb } from "./pg-db.js";

interface PreviewRow {
  channel: string;
  account_id: string;
  chat_id: string;
  thread_id: string;
  reply_to: string;
  message_id: string;
  created_at: number;
  settled: boolean;
}

/** PreviewRepo over a PgDb. */
export class PgPreviewRepo implements PreviewRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  /** The pool this repository writes through. */
  get db(): PgDb {
    return this.#db;
  }

  async record(preview: PreviewRecord): Promise<void> {
    await this.#db.run(
      `INSERT INTO previews (channel, account_id, chat_id, thread_id, reply_to, message_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (channel, account_id, chat_id, thread_id, reply_to)
       DO UPDATE SET message_id = EXCLUDED.message_id, created_at = EXCLUDED.created_at`,
      [...keyParams(preview), preview.messageId, preview.createdAt],
    );
  }

  async list(channel: string, accountId: string): Promise<RecordedPreview[]> {
    // Settled: the answered message is finished (or not in the inbox) and no reply to the key is
    // still pending or sending. The dedupe key is the inbox's (inboxDedupeKey; that column is
    // COLLATE "C", so the built key names it too). Ties in time in key order, as SQLite's scan.
    const rows = await this.#db.rows<PreviewRow>(
      `SELECT p.*,
         NOT EXISTS (
           SELECT 1 FROM inbox i
           WHERE i.dedupe_key = (p.channel || ':' || p.account_id || ':' || p.chat_id || ':' || p.reply_to) COLLATE "C"
             AND i.state IN ('received', 'queued', 'running')
         ) AND NOT EXISTS (
           SELECT 1 FROM outbox o
           WHERE o.state IN ('pending', 'sending') AND o.channel = p.channel AND o.account_id = p.account_id
             AND o.chat_id = p.chat_id AND COALESCE(o.thread_id, '') = p.thread_id
             AND COALESCE(o.reply_to, '') = p.reply_to
         ) AS settled
       FROM previews p WHERE p.channel = $1 AND p.account_id = $2
       ORDER BY p.created_at, p.chat_id COLLATE "C", p.thread_id COLLATE "C", p.reply_to COLLATE "C"`,
      [channel, accountId],
    );
    return rows.map((r) => ({
      channel: r.channel,
      accountId: r.account_id,
      chatId: r.chat_id,
      threadId: r.thread_id,
      replyTo: r.reply_to,
      messageId: r.message_id,
      createdAt: r.created_at,
      settled: r.settled,
    }));
  }

  async forget(key: PreviewKey): Promise<void> {
    await this.#db.run(
      `DELETE FROM previews WHERE channel = $1 AND account_id = $2 AND chat_id = $3
         AND thread_id = $4 AND reply_to = $5`,
      keyParams(key),
    );
  }
}

function keyParams(key: PreviewKey): [string, string, string, string, string] {
  return [key.channel, key.accountId, key.chatId, key.threadId, key.replyTo];
}
