/**
 * From a text to the outbox rows that deliver it: the chat a message came from, and the chunks
 * its channel sends, with the fields every reply row carries. Shared by turn answers, failure
 * notices and the gateway's own answers (pairing codes, commands).
 */
import { chunkText } from "../channels/chunking.js";
import type { Channel, ChatTarget, InboundMessage } from "../channels/types.js";
import type { OutboxInsert } from "../store/repos/outbox-repo.js";

/** The chat a message came from, where its replies go. */
export function chatTargetOf(m: InboundMessage): ChatTarget {
  return {
    channel: m.channel,
    accountId: m.accountId,
    chatId: m.chatId,
    ...(m.threadId ? { threadId: m.threadId } : {}),
  };
}

/**
 * The outbox rows for `text` to `target`: chunked by the channel (`prepare`), else a reply is
 * split at the channel's limit and a notice sent whole; `delivered` where the channel delivers
 * at commit, or the message was answered in place.
 */
export function replyRows(
  channel: Channel | undefined,
  target: ChatTarget,
  text: string,
  row: {
    kind: OutboxInsert["kind"];
    replyTo?: string | undefined;
    recipientId?: string | undefined;
    /** Answered in the exchange that carried the message (InboundMessage.answeredInPlace). */
    delivered?: boolean | undefined;
  },
): OutboxInsert[] {
  const chunks = channel?.prepare
    ? channel.prepare(text)
    : row.kind === "reply"
      ? chunkText(text, channel?.limits.maxMessageChars ?? 4000, {
          ...(channel?.limits.maxLines ? { maxLines: channel.limits.maxLines } : {}),
        })
      : [text];
  return chunks.map((chunk, seq) => ({
    target,
    ...(row.replyTo ? { replyTo: row.replyTo } : {}),
    ...(row.recipientId ? { recipientId: row.recipientId } : {}),
    text: chunk,
    seq,
    kind: row.kind,
    ...(channel?.deliversOnCommit || row.delivered ? { delivered: true } : {}),
  }));
}
