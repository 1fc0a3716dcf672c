/**
 * An outbox row as PostgreSQL stores it and as the store hands it out, the mapping between the
 * two (a missing thread id, reply-to or recipient is NULL in the row and absent in the record),
 * and the SQL conditions claimDue and nextDueAt share.
 */
import type { ChannelName, ChatTarget } from "../../channels/types.js";
import type {
  ChannelAccount,
  MailboxReply,
  OutboxInsert,
  OutboxRecord,
  OutboxState,
} from "../repos/outbox-repo.js";

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
  in_doubt: boolean;
  created_at: number;
  updated_at: number;
}

/**
 * The chat condition of claimDue and nextDueAt over the outbox row `o`: no earlier row of its
 * chat is unsent, and no row of it is in flight (with ids taken at insert, not at commit, the
 * second keeps a chat to one send at a time). A missing thread id (NULL) matches itself.
 */
export const CHAT_IS_FREE = `NOT EXISTS (
  SELECT 1 FROM outbox e
  WHERE e.channel = o.channel AND e.account_id = o.account_id AND e.chat_id = o.chat_id
    AND e.thread_id IS NOT DISTINCT FROM o.thread_id AND e.state IN ('pending', 'sending')
    AND (e.id < o.id OR e.state = 'sending'))`;

/**
 * Only the outbox row `o`'s of hosted channel accounts: `$<n>` and `$<n+1>` are the parallel
 * arrays of channels and account ids hostedParams makes, both null for every account.
 */
export function isHosted(n: number): string {
  return `($${n}::text[] IS NULL
    OR (o.channel, o.account_id) IN (SELECT * FROM unnest($${n}::text[], $${n + 1}::text[])))`;
}

/** The two parameters isHosted reads: channels and account ids, or nulls for every account. */
export function hostedParams(
  hosted: readonly ChannelAccount[] | undefined,
): [string[] | null, string[] | null] {
  if (!hosted) return [null, null];
  return [hosted.map((h) => h.channel), hosted.map((h) => h.accountId)];
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
    inDoubt: row.in_doubt,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Rows by id, as the listings that touch several rows in one statement return them. */
export function byId(rows: readonly OutboxRow[]): OutboxRecord[] {
  return rows.map(toOutboxRecord).sort((a, b) => a.id - b.id);
}
