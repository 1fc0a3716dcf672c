/**
 * Saving inbound attachments into the agent workspace, shared by the platform channels: one
 * folder per conversation (`inbox/<channel>/<chat>[/<thread>]`), safe file names, and a
 * streamed write with a running byte count that stops past the size cap, so an oversized or
 * unsized download is never held in memory and never leaves a partial file behind; and the one
 * download routine every platform's files go through.
 */
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type Clock, systemClock } from "../util/clock.js";
import { formatBytes } from "../util/format-bytes.js";
import type { Logger } from "../util/logger.js";
import type { Attachment, InboundMessage } from "./types.js";

/** A download went past the size cap; nothing was kept. */
export class AttachmentTooLargeError extends Error {
  readonly code = "too_large";
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`larger than ${formatBytes(maxBytes)}`);
    this.name = "AttachmentTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/**
 * The workspace-relative folder for one conversation's attachments: a forum topic or thread
 * gets a folder of its own inside its chat's, like its session.
 */
export function attachmentDir(channel: string, chatId: string, threadId?: string): string {
  const parts = ["inbox", channel, safeSegment(chatId)];
  if (threadId) parts.push(safeSegment(threadId));
  return join(...parts);
}

/** A file name that stays inside its folder: letters, digits, `.`, `_` and `-` only, no leading dot. */
export function safeFileName(name: string): string {
  const cleaned = name.replace(/[^\w.-]/g, "_").replace(/^\.+/, "_");
  return cleaned.slice(0, 120) || "file";
}

function safeSegment(part: string): string {
  return part.replace(/[^\w-]/g, "_") || "_";
}

/**
 * Streams `body` into `path` (folders created), counting bytes as they arrive. Past `maxBytes`
 * it stops reading (the source is destroyed, which cancels a fetch) and throws
 * AttachmentTooLargeError. Writes to a temporary file renamed on success, removed on any
 * failure, so a reader never sees a partial file. Resolves with the size written.
 */
export async function saveCapped(
  body: AsyncIterable<Uint8Array>,
  path: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<number> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${randomUUID().slice(0, 8)}.part`;
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) done(new AttachmentTooLargeError(maxBytes));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(body, counter, createWriteStream(partial), { signal });
    await rename(partial, path);
    return bytes;
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}

/** One platform file to fetch into the workspace (see downloadAttachment). */
export interface AttachmentDownload {
  /** The file's name as the sender gave it (for the attachment and for notes). */
  name: string;
  kind: Attachment["kind"];
  mimeType?: string | undefined;
  /** The size the platform announced, if any: over the cap, nothing is fetched. */
  sizeBytes?: number | undefined;
  workspaceDir: string;
  /** Workspace-relative folder (attachmentDir) and the file name in it. */
  relDir: string;
  fileName: string;
  maxBytes: number;
  /** Limit for the whole download, `open` included, in ms. */
  timeoutMs: number;
  /** The setting that raises the cap, named in the too-big note. */
  limitSetting: string;
  clock?: Clock;
  /**
   * Starts the download under the time limit's signal: the platform's response, a size learnt
   * on the way (`{tooBig}`), or a note saying why there is nothing to fetch.
   */
  open(signal: AbortSignal): Promise<Response | { tooBig: number } | string>;
}

/**
 * Fetches a file into the workspace: streamed to disk with a running byte count under the size
 * cap, the whole of it under `timeoutMs`. Resolves with the attachment, or with a one-line note
 * for the message text when the file is too big or the download failed; never rejects, and
 * `signal` (the channel stopping) ends it early with a note.
 */
export async function downloadAttachment(
  d: AttachmentDownload,
  signal: AbortSignal,
): Promise<Attachment | string> {
  const tooBig = (size: number | undefined) =>
    `[attachment ${d.name} not downloaded: ${size === undefined ? "it is" : `${formatBytes(size)} is`} over the ${formatBytes(d.maxBytes)} limit (${d.limitSetting}). Tell the user the file was too big to read.]`;
  const failed = (why: string) => `[attachment ${d.name} could not be downloaded: ${why}]`;
  if (d.sizeBytes !== undefined && d.sizeBytes > d.maxBytes) return tooBig(d.sizeBytes);
  const clock = d.clock ?? systemClock;
  const timeout = new AbortController();
  const timer = clock.setTimeout(
    () => timeout.abort(new DOMException(`download took longer than ${d.timeoutMs} ms`, "TimeoutError")),
    d.timeoutMs,
  );
  const both = AbortSignal.any([signal, timeout.signal]);
  try {
    const res = await d.open(both);
    if (typeof res === "string") return failed(res);
    if (!(res instanceof Response)) return tooBig(res.tooBig);
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return failed(`HTTP ${res.status}`);
    }
    const declared = Number(res.headers.get("content-length") ?? Number.NaN);
    if (declared > d.maxBytes) {
      await res.body.cancel();
      return tooBig(declared);
    }
    const size = await saveCapped(res.body, join(d.workspaceDir, d.relDir, d.fileName), d.maxBytes, both);
    return {
      kind: d.kind,
      path: join(d.relDir, d.fileName),
      sizeBytes: size,
      name: d.name,
      ...(d.mimeType ? { mimeType: d.mimeType } : {}),
    };
  } catch (err) {
    if (err instanceof AttachmentTooLargeError) return tooBig(undefined);
    return failed(
      timeout.signal.aborted
        ? `it took longer than ${d.timeoutMs >= 1000 ? `${Math.round(d.timeoutMs / 1000)} s` : `${d.timeoutMs} ms`}`
        : signal.aborted
          ? "the gateway is stopping"
          : err instanceof Error
            ? err.message
            : String(err),
    );
  } finally {
    clock.clearTimeout(timer);
  }
}

/** The attachment kind of a MIME type. */
export function fileKind(mimetype: string | undefined): Attachment["kind"] {
  if (!mimetype) return "other";
  if (mimetype.startsWith("image/")) return "image";
  if (mimetype.startsWith("audio/")) return "audio";
  if (mimetype.startsWith("video/")) return "video";
  if (mimetype.startsWith("text/") || mimetype.startsWith("application/")) return "document";
  return "other";
}

/**
 * The message with its files saved, for a sender the gateway admits (a stranger's files, or
 * those of an unaddressed group message, never reach disk), one file after another; a file that
 * cannot be saved becomes a one-line note in the text. Every platform's intake goes through it.
 */
export async function saveAttachments<F>(
  base: InboundMessage,
  files: readonly F[],
  o: {
    /** The sink's side-effect-free admission check; absent: admitted. */
    admits: ((message: InboundMessage) => Promise<boolean>) | undefined;
    save(file: F): Promise<Attachment | string>;
    /** Log fields naming a file. */
    describe(file: F): Record<string, unknown>;
    logger: Logger;
  },
): Promise<InboundMessage> {
  if (files.length === 0) return base;
  if ((await o.admits?.(base)) === false) {
    o.logger.info(
      { chatId: base.chatId, files: files.length },
      "attachments not downloaded: the sender is not admitted",
    );
    return base;
  }
  const attachments: Attachment[] = [...base.attachments];
  const notes: string[] = [];
  for (const file of files) {
    const saved = await o.save(file);
    if (typeof saved === "string") {
      o.logger.warn({ chatId: base.chatId, ...o.describe(file), note: saved }, "attachment not saved");
      notes.push(saved);
    } else attachments.push(saved);
  }
  const text = [base.text, ...notes].filter((t) => t.length > 0).join("\n");
  return { ...base, text, attachments };
}
