/**
 * Head+tail capping of tool output: a long text keeps its head and its tail around a marker
 * saying how much was left out. `capMiddle` cuts a text already in memory (the tool boundary,
 * ToolRegistry.execute); `HeadTailBuffer` does the same to a stream without keeping it (a
 * command's output), holding at most the cap plus a tail window however much arrives.
 */

/** Characters of one tool result when nothing smaller is configured. */
export const DEFAULT_MAX_RESULT_CHARS = 16_000;
/** Smallest accepted cap: room for the omission marker and some text. */
export const MIN_RESULT_CHARS = 200;

/** Share of the kept characters given to the head; the tail gets the rest. */
const HEAD_SHARE = 0.7;
/** Head share when the text ends like a failure: the error at the end matters most. */
const HEAD_SHARE_ERROR_TAIL = 0.3;
/** Characters a cut may move to land on a line break (at most a quarter of the part). */
const LINE_SNAP_CHARS = 200;
/** Characters at the end searched for a failure (see endsLikeFailure). */
const FAILURE_LOOKBACK_CHARS = 2_000;

/** A capped text and how many characters of the original it left out. */
export interface CappedText {
  text: string;
  /** Characters of the original missing from `text` (0 when it was not cut). */
  omittedChars: number;
}

/**
 * Keeps the head and tail of `text` within `max` characters around a marker saying what was left
 * out (and where the whole text was saved, when `savedAs` is given and there is room to say so).
 * The head gets 70%, or 30% when the text ends like a failure; each cut moves to a line break
 * when one is near. `max` must be at least MIN_RESULT_CHARS.
 */
export function capMiddle(text: string, max: number, savedAs?: string): string {
  return capKnown(text, 0, max, savedAs).text;
}

/**
 * Collects a stream of text (chunks in arrival order) and caps it as `capMiddle` would cap the
 * whole, without keeping the whole: it keeps the first `maxChars` characters and a window of the
 * last `max(maxChars, 2_000)`, counting what falls between. Memory stays bounded by those two.
 */
export class HeadTailBuffer {
  readonly #maxChars: number;
  readonly #tailWindow: number;
  #head = "";
  #tail = "";
  /** Characters that fell out between the head and the tail window. */
  #dropped = 0;

  /** Throws a RangeError when `maxChars` is not an integer ≥ MIN_RESULT_CHARS. */
  constructor(maxChars: number) {
    if (!Number.isInteger(maxChars) || maxChars < MIN_RESULT_CHARS) {
      throw new RangeError(
        `HeadTailBuffer maxChars must be an integer ≥ ${MIN_RESULT_CHARS}, got ${maxChars}`,
      );
    }
    this.#maxChars = maxChars;
    this.#tailWindow = Math.max(maxChars, FAILURE_LOOKBACK_CHARS);
  }

  /** Appends a chunk. */
  push(chunk: string): void {
    let rest = chunk;
    const room = this.#maxChars - this.#head.length;
    if (room > 0) {
      this.#head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest === "") return;
    const joined = rest.length >= this.#tailWindow ? rest : this.#tail + rest;
    const overflow = this.#tail.length + rest.length - this.#tailWindow;
    if (overflow > 0) {
      this.#dropped += overflow;
      this.#tail = joined.slice(joined.length - this.#tailWindow);
    } else {
      this.#tail = joined;
    }
  }

  /** Characters pushed so far. */
  get totalChars(): number {
    return this.#head.length + this.#dropped + this.#tail.length;
  }

  /** Characters held now; never more than `maxChars` plus the tail window. */
  get retainedChars(): number {
    return this.#head.length + this.#tail.length;
  }

  /** What was pushed, capped at `maxChars` exactly as `capMiddle` caps the whole text. */
  capped(): CappedText {
    return capKnown(this.#head + this.#tail, this.#dropped, this.#maxChars);
  }
}

/**
 * Caps a text of which `known` is all but `missing` characters, cut out somewhere after its
 * first `max` characters and before its last `max` (so every cut below lands on known text:
 * the head part is shorter than `max`, and so is the tail part).
 */
function capKnown(known: string, missing: number, max: number, savedAs?: string): CappedText {
  const total = known.length + missing;
  if (total <= max) return { text: known, omittedChars: 0 };
  // Reserve room for the marker with the largest count it could show.
  const plain = (omitted: number): string => `\n\n[… ${omitted} characters omitted …]\n\n`;
  const withFile = (omitted: number): string =>
    `\n\n[… ${omitted} characters omitted; full output (${total} chars) saved to ${savedAs}; ` +
    "read it with read_file (offset/limit for a part) if needed …]\n\n";
  // The file's name needs room; a result capped very small keeps the plain marker.
  const marker = savedAs !== undefined && max - withFile(total).length >= 100 ? withFile : plain;
  const budget = max - marker(total).length;
  const headShare = endsLikeFailure(known) ? HEAD_SHARE_ERROR_TAIL : HEAD_SHARE;
  let headEnd = Math.floor(budget * headShare);
  let tailStart = known.length - (budget - headEnd);
  const snapHead = known.lastIndexOf("\n", headEnd - 1);
  if (snapHead > 0 && headEnd - snapHead <= Math.min(LINE_SNAP_CHARS, headEnd / 4)) headEnd = snapHead + 1;
  const snapTail = known.indexOf("\n", tailStart);
  const tailLength = known.length - tailStart;
  if (
    known.charCodeAt(tailStart - 1) !== 10 &&
    snapTail >= 0 &&
    snapTail + 1 < known.length &&
    snapTail - tailStart < Math.min(LINE_SNAP_CHARS, tailLength / 4)
  ) {
    tailStart = snapTail + 1;
  }
  if (isSurrogate(known.charCodeAt(headEnd - 1), 0xd800)) headEnd--;
  if (isSurrogate(known.charCodeAt(tailStart), 0xdc00)) tailStart++;
  const omittedChars = tailStart - headEnd + missing;
  return {
    text: `${known.slice(0, headEnd)}${marker(omittedChars)}${known.slice(tailStart)}`,
    omittedChars,
  };
}

/** Words in the last lines of a failing command's output. */
const FAILURE_WORDS = /\b(?:errors?|err|exception|traceback|fail(?:ed|ure|ures|s)?|fatal|panic(?:ked)?)\b/i;

/** True when one of the last five non-empty lines (within the last 2,000 characters) reads like a failure. */
function endsLikeFailure(text: string): boolean {
  const lines = text
    .slice(-FAILURE_LOOKBACK_CHARS)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .slice(-5);
  return lines.some((line) => FAILURE_WORDS.test(line));
}

/** True when `code` is a surrogate half starting at `base` (0xd800 high, 0xdc00 low). */
function isSurrogate(code: number, base: number): boolean {
  return code >= base && code <= base + 0x3ff;
}
