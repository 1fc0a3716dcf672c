/**
 * Saving inbound attachments into the agent workspace, shared by the platform channels: one
 * folder per conversation (`inbox/<channel>/<chat>[/<thread>]`), safe file names, and a
 * streamed write with a running byte count that stops past the size cap, so an oversized or
 * unsized download is never held in memory and never leaves a partial file behind.
 */
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { formatBytes } from "../util/format-bytes.js";

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
