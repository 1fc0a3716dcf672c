/** Inbox rows: their shape, their dedupe key, and their mapping to InboxRecord (inbox-repo.ts). */
import type { InboundMessage } from "../../channels/types.js";
import type { InboxRecord, InboxState } from "../repos/inbox-repo.js";

/** An inbox row. */
export interface InboxRow {
  id: number;
  dedupe_key: string;
  session_key: string;
  message: string;
  state: InboxState;
  attempts: number;
  run_id: string | null;
  owner: string | null;
  lease_until: number | null;
  error: string | null;
  received_at: number;
  updated_at: number;
}

/**
 * The dedupe key of an inbound message: `${channel}:${accountId}:${chatId}:${platformMessageId}`.
 * Every field that scopes a platform message id is in it: ids are unique only per chat on most
 * platforms, and an HTTP client's own ids only per sender (the chat of an HTTP message).
 */
export function inboxDedupeKey(message: InboundMessage): string {
  return `${message.channel}:${message.accountId}:${message.chatId}:${message.platformMessageId}`;
}

/** The `[from, to)` range of the dedupe keys of one channel account (`;` follows `:`). */
export function dedupeKeyRange(channel: string, accountId: string): [string, string] {
  return [`${channel}:${accountId}:`, `${channel}:${accountId};`];
}

/** The record of a row. */
export function toInboxRecord(row: InboxRow): InboxRecord {
  return {
    id: row.id,
    dedupeKey: row.dedupe_key,
    sessionKey: row.session_key,
    message: JSON.parse(row.message) as InboundMessage,
    state: row.state,
    attempts: row.attempts,
    runId: row.run_id,
    owner: row.owner,
    leaseUntil: row.lease_until,
    error: row.error,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
  };
}
