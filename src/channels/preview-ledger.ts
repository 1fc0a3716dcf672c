/**
 * Where streaming previews are recorded across restarts: the port StreamingPreviews writes (one
 * record per preview, when it is posted) and reads (once, as a channel starts), and its
 * implementation over the store's PreviewRepo for one channel account.
 */
import type { PreviewRepo } from "../store/repos/preview-repo.js";
import type { Clock } from "../util/clock.js";
import type { PreviewTarget } from "./preview.js";
import type { ChannelName } from "./types.js";

/** Where previews are recorded across restarts (one write per preview). */
export interface PreviewLedger {
  record(target: PreviewTarget, messageId: string): Promise<void>;
  forget(target: PreviewTarget): Promise<void>;
  /** The records of this channel account; `settled`: nothing will take it any more. */
  list(): Promise<Array<{ target: PreviewTarget; messageId: string; settled: boolean }>>;
}

/** The ledger of one channel account over the store's PreviewRepo. */
export function previewLedger(
  repo: PreviewRepo,
  channel: ChannelName,
  accountId: string,
  clock: Clock,
): PreviewLedger {
  const key = (t: PreviewTarget) => ({
    channel,
    accountId,
    chatId: t.chatId,
    threadId: t.threadId ?? "",
    replyTo: t.replyTo ?? "",
  });
  return {
    record: (target, messageId) => repo.record({ ...key(target), messageId, createdAt: clock.now() }),
    forget: (target) => repo.forget(key(target)),
    list: async () =>
      (await repo.list(channel, accountId)).map((r) => ({
        target: {
          chatId: r.chatId,
          ...(r.threadId ? { threadId: r.threadId } : {}),
          ...(r.replyTo ? { replyTo: r.replyTo } : {}),
        },
        messageId: r.messageId,
        settled: r.settled,
      })),
  };
}
