/**
 * Streaming previews in SQLite (schema v14): one row per preview key, written once when the
 * preview was posted. The outbox's markSent deletes the row of the key it sends for.
 */
import type { Database, Statement } from "better-sqlite3";
import type { PreviewKey, PreviewRecord, PreviewRepo, RecordedPreview } from "../repos/preview-repo.js";
import { guard } from "./errors.js";

interface PreviewRow {
  channel: string;
  account_id: string;
  chat_id: string;
  thread_id: string;
  reply_to: string;
  message_id: string;
  created_at: number;
  settled: 0 | 1;
}

type KeyParams = { channel: string; accountId: string; chatId: string; threadId: string; replyTo: string };

/** PreviewRepo over one better-sqlite3 connection. */
export class SqlitePreviewRepo implements PreviewRepo {
  readonly #path: string;
  readonly #upsert: Statement<[KeyParams & { messageId: string; createdAt: number }]>;
  readonly #list: Statement<[{ channel: string; accountId: string }], PreviewRow>;
  readonly #delete: Statement<[KeyParams]>;

  constructor(db: Database, path: string) {
    this.#path = path;
    this.#upsert = db.prepare(
      `INSERT OR REPLACE INTO previews (channel, account_id, chat_id, thread_id, reply_to, message_id, created_at)
       VALUES (@channel, @accountId, @chatId, @threadId, @replyTo, @messageId, @createdAt)`,
    );
    // Settled: the answered message is finished (or not in the inbox) and no reply to the key is
    // still pending or sending. The dedupe key is the inbox's (inboxDedupeKey); the IN terms let
    // the planner use the partial indexes of unfinished inbox and unsent outbox rows.
    this.#list = db.prepare(
      `SELECT p.*,
         NOT EXISTS (
           SELECT 1 FROM inbox i
           WHERE i.dedupe_key = p.channel || ':' || p.account_id || ':' || p.chat_id || ':' || p.reply_to
             AND i.state IN ('received', 'queued', 'running')
         ) AND NOT EXISTS (
           SELECT 1 FROM outbox o
           WHERE o.state IN ('pending', 'sending') AND o.channel = p.channel AND o.account_id = p.account_id
             AND o.chat_id = p.chat_id AND IFNULL(o.thread_id, '') = p.thread_id
             AND IFNULL(o.reply_to, '') = p.reply_to
         ) AS settled
       FROM previews p WHERE p.channel = @channel AND p.account_id = @accountId
       ORDER BY p.created_at`,
    );
    this.#delete = db.prepare(
      `DELETE FROM previews WHERE channel = @channel AND account_id = @accountId AND chat_id = @chatId
         AND thread_id = @threadId AND reply_to = @replyTo`,
    );
  }

  async record(preview: PreviewRecord): Promise<void> {
    const { messageId, createdAt } = preview;
    guard(this.#path, () => this.#upsert.run({ ...keyParams(preview), messageId, createdAt }));
  }

  async list(channel: string, accountId: string): Promise<RecordedPreview[]> {
    return guard(this.#path, () =>
      this.#list.all({ channel, accountId }).map((r) => ({
        channel: r.channel,
        accountId: r.account_id,
        chatId: r.chat_id,
        threadId: r.thread_id,
        replyTo: r.reply_to,
        messageId: r.message_id,
        createdAt: r.created_at,
        settled: r.settled === 1,
      })),
    );
  }

  async forget(key: PreviewKey): Promise<void> {
    guard(this.#path, () => this.#delete.run(keyParams(key)));
  }
}

function keyParams(key: PreviewKey): KeyParams {
  const { channel, accountId, chatId, threadId, replyTo } = key;
  return { channel, accountId, chatId, threadId, replyTo };
}
