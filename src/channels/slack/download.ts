/**
 * Downloading one Slack file into the workspace: `url_private_download` with the bot token,
 * through the shared downloadAttachment (a running byte count and a time limit). Slack answers a
 * request without a usable token with its HTML sign-in page (status 200), so an HTML answer for
 * a non-HTML file is a failure that names the missing `files:read` scope. Failures become a
 * one-line note in the message text: the message itself is still committed.
 */
import type { Clock } from "../../util/clock.js";
import { attachmentDir, downloadAttachment, fileKind, safeFileName } from "../attachments.js";
import type { Attachment } from "../types.js";
import type { SlackFile } from "./inbound.js";

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
export function downloadSlackFile(
  file: SlackFile,
  place: { chatId: string; threadId: string | undefined; ts: string },
  o: SlackDownloadOptions,
  signal: AbortSignal,
): Promise<Attachment | string> {
  const name = file.name ?? file.title ?? file.id;
  return downloadAttachment(
    {
      name,
      kind: fileKind(file.mimetype),
      mimeType: file.mimetype,
      sizeBytes: file.size,
      workspaceDir: o.workspaceDir,
      relDir: attachmentDir("slack", place.chatId, place.threadId),
      fileName: `${place.ts.replace(".", "_")}-${safeFileName(name)}`,
      maxBytes: o.maxBytes,
      timeoutMs: o.timeoutMs,
      limitSetting: "channels.slack.mediaMaxMb",
      ...(o.clock ? { clock: o.clock } : {}),
      open: async (both) => {
        const url = file.url_private_download ?? file.url_private;
        if (!url) return "Slack gave no download URL";
        const res = await fetch(url, { headers: { authorization: `Bearer ${o.botToken}` }, signal: both });
        const type = res.headers.get("content-type") ?? "";
        if (res.ok && type.startsWith("text/html") && !(file.mimetype ?? "").startsWith("text/html")) {
          await res.body?.cancel();
          return "Slack answered with its sign-in page (the app needs the files:read scope)";
        }
        return res;
      },
    },
    signal,
  );
}
