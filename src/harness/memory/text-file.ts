/**
 * Reading a memory or skill file as text: binary files are recognised, invalid UTF-8 becomes
 * U+FFFD instead of an exception, and a byte order mark is dropped.
 */

/** How `bytes` read as text: invalid sequences replaced, or "binary" when it holds NUL bytes. */
export type DecodedText = { type: "text"; text: string; validUtf8: boolean } | { type: "binary" };

/** Bytes of a file's start searched for NUL, the sign of a binary file (as git does). */
const BINARY_SNIFF_BYTES = 8192;

const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");

/** Decodes `bytes` as UTF-8; never throws. */
export function decodeText(bytes: Uint8Array): DecodedText {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { type: "binary" };
  try {
    return { type: "text", text: strict.decode(bytes), validUtf8: true };
  } catch {
    return { type: "text", text: lenient.decode(bytes), validUtf8: false };
  }
}

/** `text` split into lines: `\r\n` and `\n` end a line; a final line end adds no empty line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}
