/**
 * Today's and yesterday's daily notes for the prompt, each capped to its newest part: the tail
 * of a long day is what the next turn most likely needs.
 */
import { open, realpath } from "node:fs/promises";
import path from "node:path";
import { checkTimeZone, dailyNotePath, isInsideDir, localDate, previousDate } from "./memory-paths.js";
import { decodeText } from "./text-file.js";
import type { DailyNote, DailyNotes } from "./types.js";

/** Smallest `maxChars` {@link dailyNotes} accepts: room for the omission marker and some lines. */
export const MIN_DAILY_NOTE_CHARS = 200;
/** Bytes read per allowed character at most (UTF-8 takes up to 4): a huge note is read only at its end. */
const BYTES_PER_CHAR = 4;

/**
 * Reads `memory/<today>.md` and `memory/<yesterday>.md` of `workspaceDir`, the dates taken at
 * `now` in the IANA `timeZone` (yesterday is the calendar day before, whatever DST does). A
 * note that is missing, blank, binary or a link leading out of the workspace is absent. Each
 * note longer than `maxChars` keeps its last whole lines after a first line
 * `[… earlier part of memory/… omitted; read it with memory_get]`, all within `maxChars`.
 * Invalid UTF-8 shows as U+FFFD. Throws a RangeError for an unknown time zone or a `maxChars`
 * below {@link MIN_DAILY_NOTE_CHARS}; never for the files.
 */
export async function dailyNotes(
  workspaceDir: string,
  now: Date,
  timeZone: string,
  maxChars: number,
): Promise<DailyNotes> {
  checkTimeZone(timeZone, "dailyNotes timeZone");
  if (!Number.isInteger(maxChars) || maxChars < MIN_DAILY_NOTE_CHARS) {
    throw new RangeError(
      `dailyNotes maxChars must be a whole number ≥ ${MIN_DAILY_NOTE_CHARS}, got ${maxChars}`,
    );
  }
  const today = localDate(now.getTime(), timeZone);
  const root = await realpath(workspaceDir).catch(() => undefined);
  if (root === undefined) return {};
  const [todayNote, yesterdayNote] = await Promise.all([
    readNote(root, dailyNotePath(today), maxChars),
    readNote(root, dailyNotePath(previousDate(today)), maxChars),
  ]);
  return {
    ...(todayNote ? { today: todayNote } : {}),
    ...(yesterdayNote ? { yesterday: yesterdayNote } : {}),
  };
}

async function readNote(root: string, rel: string, maxChars: number): Promise<DailyNote | undefined> {
  try {
    const abs = await realpath(path.join(root, rel));
    if (!isInsideDir(root, abs)) return undefined;
    const handle = await open(abs, "r");
    let bytes: Buffer;
    let cutBytes: boolean;
    try {
      const s = await handle.stat();
      if (!s.isFile()) return undefined;
      const readBytes = Math.min(s.size, maxChars * BYTES_PER_CHAR);
      cutBytes = readBytes < s.size;
      bytes = Buffer.alloc(readBytes);
      const { bytesRead } = await handle.read(bytes, 0, readBytes, s.size - readBytes);
      bytes = bytes.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
    const decoded = decodeText(bytes);
    if (decoded.type === "binary" || decoded.text.trim() === "") return undefined;
    return { path: rel, text: capTail(decoded.text.replace(/\r\n?/g, "\n"), rel, maxChars, cutBytes) };
  } catch {
    return undefined; // missing (the usual case early in a day), unreadable, or not a file
  }
}

/** The newest whole lines of `text` within `maxChars`, after a marker, when it is too long. */
function capTail(text: string, rel: string, maxChars: number, alreadyCut: boolean): string {
  const trimmed = text.replace(/\s+$/, "");
  if (!alreadyCut && trimmed.length <= maxChars) return trimmed;
  const marker = `[… earlier part of ${rel} omitted; read it with memory_get]\n`;
  let tail = trimmed.slice(-(maxChars - marker.length));
  const firstBreak = tail.indexOf("\n");
  // Start at a line's beginning unless the last line alone is longer than the room.
  if (firstBreak !== -1 && firstBreak < tail.length - 1) tail = tail.slice(firstBreak + 1);
  else if (isLowSurrogate(tail.charCodeAt(0))) tail = tail.slice(1);
  return `${marker}${tail}`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
