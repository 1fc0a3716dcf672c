/**
 * How a memory file is cut into search chunks: small runs of lines, so that a hit points at a
 * few lines rather than at a whole file. Blank lines, headings and top-level list items start a
 * new chunk; a chunk never exceeds MAX_CHUNK_LINES lines or (but for one long line) MAX_CHUNK_CHARS.
 */
import { splitLines } from "./text-file.js";

/** A run of lines of a file. */
export interface TextChunk {
  /** First line, counting from 1. */
  startLine: number;
  /** Last line (inclusive). */
  endLine: number;
  /** The lines joined with `\n`. */
  text: string;
}

/** Lines one chunk holds at most. */
export const MAX_CHUNK_LINES = 8;
/** Characters one chunk holds at most, unless a single line is longer. */
export const MAX_CHUNK_CHARS = 1_000;

const HEADING = /^ {0,3}#{1,6}(\s|$)/;
// A list item at the left margin (nested items, indented, stay with their parent).
const LIST_ITEM = /^ {0,1}([-*+]|\d{1,9}[.)])\s/;
const FENCE = /^ {0,3}(```|~~~)/;

/** Cuts `text` into chunks in file order; blank lines belong to no chunk. */
export function chunkMarkdown(text: string): TextChunk[] {
  const chunks: TextChunk[] = [];
  let lines: string[] = [];
  let start = 0;
  let chars = 0;
  let inFence = false;
  const flush = (): void => {
    if (lines.length > 0)
      chunks.push({ startLine: start, endLine: start + lines.length - 1, text: lines.join("\n") });
    lines = [];
    chars = 0;
  };
  for (const [i, line] of splitLines(text).entries()) {
    const lineNo = i + 1;
    const fence = FENCE.test(line);
    if (!inFence && line.trim() === "") {
      flush();
      continue;
    }
    const heading = !inFence && HEADING.test(line);
    const startsBlock = heading || (!inFence && (LIST_ITEM.test(line) || fence));
    if (startsBlock || lines.length >= MAX_CHUNK_LINES || chars + line.length > MAX_CHUNK_CHARS) flush();
    if (lines.length === 0) start = lineNo;
    lines.push(line);
    chars += line.length + 1;
    if (fence) inFence = !inFence;
    // A heading stands alone: the lines under it are found on their own.
    if (heading) flush();
  }
  flush();
  return chunks;
}
