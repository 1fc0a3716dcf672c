/**
 * Downloading one Telegram attachment into the workspace: getFile, then the file URL, streamed
 * to disk with a running byte count and a time limit, so an oversized or slow file costs at
 * most `timeoutMs` and never more than `maxBytes` of disk. Failures become a one-line note in
 * the message text instead of an error: the message itself is still committed.
 */
import { join } from "node:path";
import type { Api } from "grammy";
import { type Clock, systemClock } from "../../util/clock.js";
import { formatBytes } from "../../util/format-bytes.js";
import { AttachmentTooLargeError, attachmentDir, safeFileName, saveCapped } from "../attachments.js";
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
export async function downloadTelegramFile(
  file: PendingFile,
  place: DownloadPlace,
  o: TelegramDownloadOptions,
  signal: AbortSignal,
): Promise<Attachment | string> {
  const tooBig = (size: number | undefined) =>
    `[attachment ${file.name} not downloaded: ${size === undefined ? "it is" : `${formatBytes(size)} is`} over the ${formatBytes(o.maxBytes)} limit (${o.limitSetting}). Tell the user the file was too big to read.]`;
  if (file.sizeBytes !== undefined && file.sizeBytes > o.maxBytes) return tooBig(file.sizeBytes);
  const clock = o.clock ?? systemClock;
  const timeout = new AbortController();
  const timer = clock.setTimeout(
    () => timeout.abort(new DOMException(`download took longer than ${o.timeoutMs} ms`, "TimeoutError")),
    o.timeoutMs,
  );
  const both = AbortSignal.any([signal, timeout.signal]);
  try {
    const info = await o.api.getFile(file.fileId, both as GrammySignal);
    if (!info.file_path)
      return `[attachment ${file.name} could not be downloaded: Telegram gave no file path]`;
    if (info.file_size !== undefined && info.file_size > o.maxBytes) return tooBig(info.file_size);
    const res = await (o.fetch ?? fetch)(`${o.apiRoot}/file/bot${o.token}/${info.file_path}`, {
      signal: both,
    });
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return `[attachment ${file.name} could not be downloaded: HTTP ${res.status}]`;
    }
    const declared = Number(res.headers.get("content-length") ?? Number.NaN);
    if (declared > o.maxBytes) {
      await res.body.cancel();
      return tooBig(declared);
    }
    const relDir = attachmentDir("telegram", place.chatId, place.threadId);
    const name = `${place.messageId}-${safeFileName(file.name)}`;
    const size = await saveCapped(res.body, join(o.workspaceDir, relDir, name), o.maxBytes, both);
    return {
      kind: file.kind,
      path: join(relDir, name),
      sizeBytes: size,
      name: file.name,
      ...(file.mimeType ? { mimeType: file.mimeType } : {}),
    };
  } catch (err) {
    if (err instanceof AttachmentTooLargeError) return tooBig(undefined);
    const why = timeout.signal.aborted
      ? `it took longer than ${o.timeoutMs >= 1000 ? `${Math.round(o.timeoutMs / 1000)} s` : `${o.timeoutMs} ms`}`
      : signal.aborted
        ? "the gateway is stopping"
        : err instanceof Error
          ? err.message
          : String(err);
    return `[attachment ${file.name} could not be downloaded: ${why}]`;
  } finally {
    clock.clearTimeout(timer);
  }
}
