/**
 * Downloading one Slack file into the workspace: `url_private_download` with the bot token,
 * streamed to disk with a running byte count and a time limit. Slack answers a request without a
 * usable token with its HTML sign-in page (status 200), so an HTML answer for a non-HTML file is
 * a failure that names the missing `files:read` scope. Failures become a one-line note in the
 * message text: the message itself is still committed.
 */
import { join } from "node:path";
import { type Clock, systemClock } from "../../util/clock.js";
import { formatBytes } from "../../util/format-bytes.js";
import { AttachmentTooLargeError, attachmentDir, safeFileName, saveCapped } from "../attachments.js";
import type { Attachment } from "../types.js";
import { fileKind, type SlackFile } from "./inbound.js";

export interface SlackDownloadOptions {
  botToken: string;
  workspaceDir: string;
  /** Largest file saved, in bytes. */
  maxBytes: number;
  /** Limit for one whole download, in ms. */
  timeoutMs: number;
  clock?: Clock;
}

/**
 * Saves `file` under `inbox/slack/<channel>[/<thread>]/<ts>-<name>`; resolves with the attachment
 * or a note for the message text. Never rejects; `signal` (the channel stopping) ends it early.
 */
export async function downloadSlackFile(
  file: SlackFile,
  place: { chatId: string; threadId: string | undefined; ts: string },
  o: SlackDownloadOptions,
  signal: AbortSignal,
): Promise<Attachment | string> {
  const name = file.name ?? file.title ?? file.id;
  const tooBig = (size: number | undefined) =>
    `[attachment ${name} not downloaded: ${size === undefined ? "it is" : `${formatBytes(size)} is`} over the ${formatBytes(o.maxBytes)} limit (channels.slack.mediaMaxMb). Tell the user the file was too big to read.]`;
  if (file.size !== undefined && file.size > o.maxBytes) return tooBig(file.size);
  const url = file.url_private_download ?? file.url_private;
  if (!url) return `[attachment ${name} could not be downloaded: Slack gave no download URL]`;
  const clock = o.clock ?? systemClock;
  const timeout = new AbortController();
  const timer = clock.setTimeout(
    () => timeout.abort(new DOMException(`download took longer than ${o.timeoutMs} ms`, "TimeoutError")),
    o.timeoutMs,
  );
  const both = AbortSignal.any([signal, timeout.signal]);
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${o.botToken}` }, signal: both });
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return `[attachment ${name} could not be downloaded: HTTP ${res.status}]`;
    }
    const type = res.headers.get("content-type") ?? "";
    if (type.startsWith("text/html") && !(file.mimetype ?? "").startsWith("text/html")) {
      await res.body.cancel();
      return `[attachment ${name} could not be downloaded: Slack answered with its sign-in page (the app needs the files:read scope)]`;
    }
    const declared = Number(res.headers.get("content-length") ?? Number.NaN);
    if (declared > o.maxBytes) {
      await res.body.cancel();
      return tooBig(declared);
    }
    const relDir = attachmentDir("slack", place.chatId, place.threadId);
    const fileName = `${place.ts.replace(".", "_")}-${safeFileName(name)}`;
    const size = await saveCapped(res.body, join(o.workspaceDir, relDir, fileName), o.maxBytes, both);
    return {
      kind: fileKind(file.mimetype),
      path: join(relDir, fileName),
      sizeBytes: size,
      name,
      ...(file.mimetype ? { mimeType: file.mimetype } : {}),
    };
  } catch (err) {
    if (err instanceof AttachmentTooLargeError) return tooBig(undefined);
    const why = timeout.signal.aborted
      ? `it took longer than ${Math.round(o.timeoutMs / 1000)} s`
      : signal.aborted
        ? "the gateway is stopping"
        : err instanceof Error
          ? err.message
          : String(err);
    return `[attachment ${name} could not be downloaded: ${why}]`;
  } finally {
    clock.clearTimeout(timer);
  }
}
