/**
 * Splitting a reply into messages a platform accepts: at paragraph, then line, then word
 * boundaries; a hard cut only for a single word longer than the limit (never inside a
 * surrogate pair). A Markdown code fence open at a cut is closed at the end of that chunk
 * and reopened, with its language, at the start of the next, so every chunk renders on
 * its own.
 */

/** Options of {@link chunkText}. */
export interface ChunkOptions {
  /**
   * At most this many lines per chunk (Discord clients collapse taller messages), a closing
   * fence included; at least 3. Default: no line limit.
   */
  maxLines?: number;
}

/**
 * Splits `text` into chunks of at most `maxChars` characters (and `maxLines` lines), in order.
 * Empty text → [].
 */
export function chunkText(text: string, maxChars: number, options: ChunkOptions = {}): string[] {
  if (maxChars < 1) throw new Error(`chunkText: maxChars must be ≥ 1, got ${maxChars}`);
  const maxLines = options.maxLines ?? Number.POSITIVE_INFINITY;
  if (maxLines < 3) throw new Error(`chunkText: maxLines must be ≥ 3, got ${maxLines}`);
  const trimmed = text.trim();
  if (trimmed.length === 0) return [];
  const chunks: string[] = [];
  let rest = trimmed;
  let reopen = ""; // the fence line that must start the next chunk
  while (reopen.length + rest.length > maxChars || endOfLines(reopen + rest, maxLines) !== undefined) {
    const body = reopen + rest;
    // The longest head allowed: maxChars characters and maxLines lines (one less with a closing fence).
    const limit = (lines: number) => Math.min(maxChars, endOfLines(body, lines) ?? maxChars);
    let cut = pickCut(body, limit(maxLines), reopen.length);
    let open = openFence(body.slice(0, cut));
    if (open && fenceFits(open.line, maxChars)) {
      const head = body.slice(0, cut).trimEnd();
      if (open.start > reopen.length && body.slice(open.start, cut).trimEnd() === open.line) {
        // Cut just after an opening fence: move the cut before it instead.
        cut = open.start;
        open = openFence(body.slice(0, cut));
      } else if (
        head.length + open.marker.length + 1 > maxChars ||
        endOfLines(head, maxLines - 1) !== undefined
      ) {
        cut = pickCut(body, Math.min(limit(maxLines - 1), maxChars - open.marker.length - 1), reopen.length);
        open = openFence(body.slice(0, cut));
      }
    }
    const head = body.slice(0, cut).trimEnd();
    const closing = open && fenceFits(open.line, maxChars) ? open : undefined;
    if (head.length > 0) chunks.push(closing ? `${head}\n${closing.marker}` : head);
    rest = body.slice(cut);
    rest = closing ? rest.replace(/^[^\S\n]*\n/, "") : rest.replace(/^\s+/, "");
    reopen = closing ? `${closing.line}\n` : "";
    if (rest.length === 0) return chunks;
  }
  if (rest.length > 0) chunks.push(reopen + rest);
  return chunks;
}

/** Where the first `lines` lines of `text` end (at their last newline), or undefined if it has no more. */
function endOfLines(text: string, lines: number): number | undefined {
  if (!Number.isFinite(lines)) return undefined;
  let at = -1;
  for (let n = 0; n < lines; n++) {
    at = text.indexOf("\n", at + 1);
    if (at < 0) return undefined;
  }
  return at;
}

/** A fence is carried across chunks only when reopening it leaves room for content. */
function fenceFits(line: string, maxChars: number): boolean {
  return 2 * line.length + 2 + 16 <= maxChars;
}

/**
 * The best place to cut `text` so the head is at most `max` characters, past `min`: the last
 * paragraph break, else line break, else space in the window. A cut inside a fenced code block
 * that would fit whole in a chunk is avoided: the cut moves outside it (before the block when
 * nothing later is possible), so only a block longer than the limit is ever split.
 */
function pickCut(text: string, max: number, min: number): number {
  const window = text.slice(0, max + 1);
  const floor = Math.max(min + 1, Math.floor(max * 0.3));
  // Blocks that fit in one chunk and do not start the chunk's continuation (a reopened fence).
  const whole = fencedBlocks(text).filter((b) => b.start >= min && b.end - b.start <= max);
  const inside = (at: number) => whole.find((b) => b.start < at && at < b.end);
  for (const separator of ["\n\n", "\n", " "]) {
    for (let at = window.lastIndexOf(separator); at >= floor; at = window.lastIndexOf(separator, at - 1)) {
      if (!inside(at)) return at;
    }
  }
  let cut = window.lastIndexOf("\n\n");
  if (cut < floor) cut = window.lastIndexOf("\n");
  if (cut < floor) cut = window.lastIndexOf(" ");
  if (cut <= min) {
    cut = Math.max(min + 1, max);
    const code = text.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff && cut - 1 > min) cut--;
  }
  // Nothing outside the block at or past the floor: cut before the block, however early.
  const block = inside(cut);
  return block && block.start > min ? block.start : cut;
}

interface OpenFence {
  /** The opening line, e.g. "```ts". */
  line: string;
  /** The fence characters, e.g. "```". */
  marker: string;
  /** Where the opening line starts in the text. */
  start: number;
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** The code fence still open at the end of `text`, if any. */
export function openFence(text: string): OpenFence | undefined {
  const last = fencedBlocks(text).at(-1);
  return last && !last.closed ? { line: last.line, marker: last.marker, start: last.start } : undefined;
}

/** One fenced code block: from its opening line to the end of its closing line (or the text). */
interface FencedBlock extends OpenFence {
  end: number;
  closed: boolean;
}

/** Every fenced code block of `text`, in order; the last one may still be open. */
function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let open: OpenFence | undefined;
  let offset = 0;
  for (const line of text.split("\n")) {
    const m = FENCE_LINE.exec(line);
    if (m) {
      const marker = m[1] as string;
      const info = m[2] as string;
      if (!open) {
        if (!(marker[0] === "`" && info.includes("`"))) open = { line, marker, start: offset };
      } else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && !info.trim()) {
        blocks.push({ ...open, end: offset + line.length, closed: true });
        open = undefined;
      }
    }
    offset += line.length + 1;
  }
  if (open) blocks.push({ ...open, end: text.length, closed: false });
  return blocks;
}
