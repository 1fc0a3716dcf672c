/**
 * Scanning of workspace context files (AGENTS.md, SOUL.md, MEMORY.md, skills, …) before they
 * reach a prompt. Invisible Unicode is removed; a line that reads like a prompt injection or an
 * exfiltration recipe (scan-rules.ts) is replaced by a marker naming the reason, the file and the
 * line. Pure (no clock, no I/O): an unchanged file yields a byte-identical result, so prompt
 * caches stay warm, and `contentHash` lets a caller log findings once per file version.
 */
import { createHash } from "node:crypto";
import { findRuleMatches } from "./scan-rules.js";
import type { ScanFinding, ScanReason, ScanResult } from "./types.js";

/** A run of base64 (or base64url) characters longer than this is an opaque blob. */
const MAX_BASE64_CHARS = 1024;
/** Shortest line counted as part of a blob wrapped over lines (64 or 76 columns in practice). */
const MIN_BASE64_LINE = 40;
/** Base64 and base64url digits and padding, by character code. */
const BASE64_CHARS = new Uint8Array(128);
for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=") {
  BASE64_CHARS[ch.charCodeAt(0)] = 1;
}

/** Anything the slower passes below look for: invisible characters, letter look-alikes. */
const UNUSUAL = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\uFF01-\uFF5E]|[\uD835\uDB40]/;
const INVISIBLE_ANY = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|\uDB40[\uDC00-\uDC7F]/;
// U+200D between emoji (👨‍👩‍👧) and tag characters inside a subdivision flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿) are
// kept: they are how those emoji are spelled. Everything else listed is removed.
const INVISIBLE =
  /(\p{Extended_Pictographic}[\u{FE0F}\u{1F3FB}-\u{1F3FF}]?\u200D)(?=\p{Extended_Pictographic})|(\u{1F3F4}[\u{E0020}-\u{E007E}]{1,8}\u{E007F})|[\u200B-\u200F\u2060-\u2064\uFEFF]|[\u202A-\u202E\u2066-\u2069]|[\u{E0000}-\u{E007F}]/gu;
/** Fullwidth forms and mathematical alphanumerics, which NFKC maps to ASCII look-alikes. */
const COMPATIBILITY_FORMS = /[\uFF01-\uFF5E]|\uD835[\uDC00-\uDFFF]/;

type Block = (line: number, reason: ScanReason) => void;

/**
 * Scans one context file. Invisible characters (zero-width U+200B–U+200F and U+2060–U+2064,
 * U+FEFF after the start, bidi controls U+202A–U+202E and U+2066–U+2069, tag characters
 * U+E0000–U+E007F) are removed and reported once per kind, at the first line holding one; a
 * leading byte-order mark is removed silently. Then every line that reads like a prompt
 * injection or an exfiltration recipe, or holds a base64 run over 1 KB, is replaced by
 * `[blocked by switchyard: <reason> in <name>, line <n>]`. Rules see the text after that removal
 * (so `ig\u200Bnore` does not hide `ignore`) and the NFKC form of lines written in fullwidth or
 * mathematical letters. A base64 blob wrapped over several lines becomes one marker at its first
 * line. Line numbers are those of `text`. Pure and deterministic; a file with nothing to report
 * comes back unchanged (but for a leading BOM).
 */
export function scanContextFile(name: string, text: string): ScanResult {
  const findings: ScanFinding[] = [];
  let clean = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const unusual = UNUSUAL.test(clean);
  if (unusual && INVISIBLE_ANY.test(clean)) clean = removeInvisible(clean, findings);

  const blocked = new Map<number, ScanReason>();
  let lines: LineIndex | undefined;
  const index = (): LineIndex => {
    lines ??= new LineIndex(clean);
    return lines;
  };
  const block: Block = (line, reason) => {
    if (!blocked.has(line)) blocked.set(line, reason);
  };

  findRuleMatches(clean, (start, end, reason) => {
    const last = index().lineOf(end - 1);
    for (let line = index().lineOf(start); line <= last; line++) block(line, reason);
  });
  scanBase64(clean, index, block);
  if (unusual && COMPATIBILITY_FORMS.test(clean)) scanCompatibilityForms(index(), block);

  if (blocked.size === 0) return { text: clean, findings: sortFindings(findings) };
  const out = index().lines.flatMap((line, i): string[] => {
    const reason = blocked.get(i + 1);
    if (reason === undefined) return [line];
    // Continuation lines of a wrapped base64 blob collapse into the first line's marker.
    if (reason === "base64 blob" && blocked.get(i) === "base64 blob") return [];
    findings.push({ reason, line: i + 1 });
    const cr = line.endsWith("\r") ? "\r" : "";
    return [`[blocked by switchyard: ${reason} in ${name}, line ${i + 1}]${cr}`];
  });
  return { text: out.join("\n"), findings: sortFindings(findings) };
}

/** SHA-256 of `text`, first 16 hex digits: a key for "already logged this file version". */
export function contentHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

function removeInvisible(text: string, findings: ScanFinding[]): string {
  const seen = new Set<ScanReason>();
  let lines: LineIndex | undefined;
  return text.replace(
    INVISIBLE,
    (match: string, emojiJoin: string | undefined, flag: string | undefined, offset: number): string => {
      if (emojiJoin !== undefined) return emojiJoin;
      if (flag !== undefined) return flag;
      const reason = invisibleKind(match.codePointAt(0) ?? 0);
      if (!seen.has(reason)) {
        seen.add(reason);
        lines ??= new LineIndex(text);
        findings.push({ reason, line: lines.lineOf(offset) });
      }
      return "";
    },
  );
}

function invisibleKind(code: number): ScanReason {
  if (code >= 0xe0000) return "Unicode tag characters";
  if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069))
    return "bidirectional override characters";
  return "zero-width characters";
}

function isBase64(code: number): boolean {
  return code < 128 && BASE64_CHARS[code] === 1;
}

/**
 * Blocks lines holding a base64 run over the limit, and runs of lines that are wholly base64
 * (each at least MIN_BASE64_LINE long) adding up to more. Finds runs of MIN_BASE64_LINE or more
 * by probing every MIN_BASE64_LINE-th character, so prose costs a fraction of a pass.
 */
function scanBase64(text: string, index: () => LineIndex, block: Block): void {
  if (text.length <= MAX_BASE64_CHARS) return;
  let blobStart = -1;
  let blobLast = -1;
  let blobChars = 0;
  let nextLine = -1;
  const endBlob = (): void => {
    if (blobChars > MAX_BASE64_CHARS && looksEncoded(text.slice(blobStart, blobStart + 256))) {
      const last = index().lineOf(blobLast);
      for (let line = index().lineOf(blobStart); line <= last; line++) block(line, "base64 blob");
    }
    blobChars = 0;
  };
  // Invariant: i is 0 or text[i - 1] is not base64, so a run found from i starts at or after i.
  let i = 0;
  while (i + MIN_BASE64_LINE <= text.length) {
    const probe = i + MIN_BASE64_LINE - 1;
    if (!isBase64(text.charCodeAt(probe))) {
      i = probe + 1;
      continue;
    }
    let start = probe;
    while (start > i && isBase64(text.charCodeAt(start - 1))) start--;
    let end = probe + 1;
    while (end < text.length && isBase64(text.charCodeAt(end))) end++;
    i = end + 1;
    if (end - start < MIN_BASE64_LINE) continue;
    if (end - start > MAX_BASE64_CHARS && looksEncoded(text.slice(start, start + 256))) {
      block(index().lineOf(start), "base64 blob");
    }
    const after = text.charCodeAt(end);
    const crlf = after === 13 && (end + 1 === text.length || text.charCodeAt(end + 1) === 10);
    const wholeLine =
      (start === 0 || text.charCodeAt(start - 1) === 10) && (end === text.length || after === 10 || crlf);
    if (!wholeLine) continue;
    if (blobChars > 0 && start !== nextLine) endBlob();
    if (blobChars === 0) blobStart = start;
    blobLast = start;
    blobChars += end - start;
    nextLine = end + (crlf ? 2 : 1);
  }
  if (blobChars > 0) endBlob();
}

/** Letters or digits, not one character repeated: encoded data, not a ruler of dashes. */
function looksEncoded(sample: string): boolean {
  return /[A-Za-z0-9]/.test(sample) && !/^(.)\1*$/.test(sample);
}

/** Checks the NFKC form of lines that use letter look-alikes (`ｉｇｎｏｒｅ previous …`). */
function scanCompatibilityForms(index: LineIndex, block: Block): void {
  index.lines.forEach((line, i) => {
    if (!COMPATIBILITY_FORMS.test(line)) return;
    findRuleMatches(line.normalize("NFKC"), (_start, _end, reason) => block(i + 1, reason));
  });
}

function sortFindings(findings: ScanFinding[]): ScanFinding[] {
  return findings.sort((a, b) => a.line - b.line || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
}

/** Line numbers (from 1) of character offsets; built only when something matched. */
class LineIndex {
  readonly lines: string[];
  readonly #starts: number[];

  constructor(text: string) {
    this.lines = text.split("\n");
    this.#starts = new Array<number>(this.lines.length);
    let offset = 0;
    this.lines.forEach((line, i) => {
      this.#starts[i] = offset;
      offset += line.length + 1;
    });
  }

  lineOf(offset: number): number {
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.#starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}
