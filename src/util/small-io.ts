/**
 * Workspace I/O sized for its files. Each `fs/promises` call is a round trip through libuv's
 * thread pool: a worker woken, the call made there, the loop woken again, a promise settled —
 * ~25 µs of CPU across threads on these machines, where the same stat or a 4 KB read made
 * synchronously costs a few µs. A turn touches a dozen small workspace files, so the harness
 * reads and writes files up to {@link SYNC_IO_MAX_BYTES} synchronously and hands only larger
 * ones to the pool, which bounds how long one call can hold the event loop (a local disk
 * reads 256 KB from the page cache in well under a millisecond). The workspace is expected on
 * a local disk; on a network mount every call may block, sync or not.
 */
import {
  closeSync,
  constants,
  ftruncateSync,
  openSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { readFile, writeFile } from "node:fs/promises";

/** Files up to this size are read and written on the event loop. */
export const SYNC_IO_MAX_BYTES = 256 * 1024;

/** Reads `abs`, whose size a stat just gave: synchronously when small. */
export async function readSized(abs: string, size: number): Promise<Buffer> {
  return size <= SYNC_IO_MAX_BYTES ? readFileSync(abs) : readFile(abs);
}

/** Writes `text` (UTF-8) to `abs` (truncating it): synchronously when small. */
export async function writeText(
  abs: string,
  text: string,
  options: { mode?: number; flag?: string } = {},
): Promise<void> {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: no byte count is needed to know it is small.
  if (text.length * 3 <= SYNC_IO_MAX_BYTES) writeFileSync(abs, text, { encoding: "utf8", ...options });
  else await writeFile(abs, text, { encoding: "utf8", ...options });
}

/**
 * Replaces the content of `abs` in place (making it, 0600, when missing): the new bytes over the
 * old, then the file cut to their length. Not atomic: a reader may catch a mix of old and new,
 * and so may a crash. Only for views rewritten from a record that heals them. The safe ways cost
 * more than the write itself: ext4 starts writing a file back at once when it replaces another by
 * rename or was truncated to zero (~100-150 µs of CPU each here, against ~15 µs for this).
 */
export function overwriteText(abs: string, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  const fd = openSync(abs, constants.O_WRONLY | constants.O_CREAT, 0o600);
  try {
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, done);
    ftruncateSync(fd, bytes.length);
  } finally {
    closeSync(fd);
  }
}
