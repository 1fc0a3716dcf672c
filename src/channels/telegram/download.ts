/**
 * Downloading one Telegram attachment into the workspace: getFile, then the file URL, through
 * the shared downloadAttachment (a running byte count and a time limit, so an oversized or slow
 * file costs at most `timeoutMs` and never more than `maxBytes` of disk). Failures become a one-line note in
 * the message text instead of an error: the message itself is still committed.
 */
import type { Api } from "grammy";
import type { Clock } from "../../util/clock.js";
import { attachmentDir, downloadAttachment, safeFileName } from "../attachments.js";
import type { Attachment } from "../types.js";
import type { PendingFile } from "./inbound.js";

/** grammY types its AbortSignal from the abort-controller shim; Node's own is what it gets at run time. */
type GrammySignal = Parameters<Api["getFile"]>[1];

export interface TelegramDownloadOptions {
  api: Api;
  /** Bot API root without trailing slash; files are at <apiRoot>/file/bot<token>/<file_path>. */
  apiRoot: string;
  token: string;
  workspaceDir: string;
  /** Largest file saved, in bytes. */
  maxBytes: number;
  /** Limit for one whole download (getFile + transfer), in ms. */
  timeoutMs: number;
  /** For the over-the-limit note: the setting that raises it. */
  limitSetting: string;
  fetch?: typeof fetch;
  /** Whose timer enforces `timeoutMs` (default `systemClock`). */
  clock?: Clock;
}

/** Where the file belongs: its conversation's folder, named after the message. */
export interface DownloadPlace {
  chatId: string;
  threadId: string | undefined;
  messageId: number;
}

/**
 * Saves `file` under `inbox/telegram/<chat>[/<topic>]/<message id>-<name>`; resolves with the
 * attachment, or with a note for the message text when it is over the limit or failed.
 * Never rejects; `signal` (the channel stopping) ends it early with a note.
 */
export function downloadTelegramFile(
  file: PendingFile,
  place: DownloadPlace,
  o: TelegramDownloadOptions,
  signal: AbortSignal,
): Promise<Attachment | string> {
  return downloadAttachment(
    {
      name: file.name,
      kind: file.kind,
      mimeType: file.mimeType,
      sizeBytes: file.sizeBytes,
      workspaceDir: o.workspaceDir,
      relDir: attachmentDir("telegram", place.chatId, place.threadId),
      fileName: `${place.messageId}-${safeFileName(file.name)}`,
      maxBytes: o.maxBytes,
      timeoutMs: o.timeoutMs,
      limitSetting: o.limitSetting,
      ...(o.clock ? { clock: o.clock } : {}),
      open: async (both) => {
        const info = await o.api.getFile(file.fileId, both as GrammySignal);
        if (!info.file_path) return "Telegram gave no file path";
        if (info.file_size !== undefined && info.file_size > o.maxBytes) return { tooBig: info.file_size };
        return (o.fetch ?? fetch)(`${o.apiRoot}/file/bot${o.token}/${info.file_path}`, { signal: both });
      },
    },
    signal,
  );
}
