/**
 * The streaming previews' contract: which platform message shows a running turn's text, kept
 * durably so that a turn redone after a crash takes that message for its answer instead of
 * posting a second one beside it.
 */

/** Which turn a preview belongs to: the chat, topic and message it answers (as its outbox rows carry them). */
export interface PreviewKey {
  channel: string;
  accountId: string;
  chatId: string;
  /** "" when the chat has no topic or thread. */
  threadId: string;
  /** The platform id of the message the turn answers; "" when none. */
  replyTo: string;
}

/** A recorded preview. */
export interface PreviewRecord extends PreviewKey {
  /** The preview message's platform id. */
  messageId: string;
  /** Epoch ms when it was recorded. */
  createdAt: number;
}

/** A recorded preview as a starting channel finds it. */
export interface RecordedPreview extends PreviewRecord {
  /**
   * True when nothing will take it any more: the message it answers is finished (or unknown)
   * and no reply to its key is still waiting to be sent. Its platform message is an orphan.
   */
  settled: boolean;
}

/**
 * Preview messages, one per key. A record is written once, when the preview message was posted
 * (edits write nothing); a reply chunk marked sent for the same key removes it (`markSent`, in
 * its own step), and so does `forget`.
 */
export interface PreviewRepo {
  /** Records (or replaces) the preview message of `preview`'s key. */
  record(preview: PreviewRecord): Promise<void>;
  /** Every recorded preview of one channel account, oldest first, with whether it is settled. */
  list(channel: string, accountId: string): Promise<RecordedPreview[]>;
  /** Removes the record of `key` (its message was deleted, or taken for an answer). */
  forget(key: PreviewKey): Promise<void>;
}
