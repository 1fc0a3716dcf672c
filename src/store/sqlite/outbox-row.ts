/**
 * An outbox row as SQLite stores it and as the store hands it out, and the mapping between the
 * two (a missing thread id, reply-to or recipient is NULL in the row and absent in the record).
 */
import type { ChannelName, ChatTarget } from "../../channels/types.js";
import type { MailboxReply, OutboxInsert, OutboxRecord, OutboxState } from "../repos/outbox-repo.js";

/** A row of the `outbox` table. */
export interface OutboxRow {
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
  owner: string | null;
  lease_until: number | null;
  mailbox_cursor: number | null;
  in_doubt: 0 | 1;
  created_at: number;
  updated_at: number;
}

/** The named parameters of the insert statement. */
export interface OutboxInsertRow {
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
  mailboxCursor: number | null;
  now: number;
}

/** A row in a mailbox (its cursor set) as the record listMailbox returns. */
export function toMailboxReply(row: OutboxRow): MailboxReply {
  const record = toOutboxRecord(row);
  if (record.mailboxCursor === null) throw new Error(`outbox row ${row.id} is in no mailbox`);
  return { ...record, mailboxCursor: record.mailboxCursor };
}

/** A row as the record the store hands out. */
export function toOutboxRecord(row: OutboxRow): OutboxRecord {
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
    owner: row.owner,
    leaseUntil: row.lease_until,
    mailboxCursor: row.mailbox_cursor,
    inDoubt: row.in_doubt === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
