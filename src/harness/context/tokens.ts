/**
 * Token counting without a tokenizer on the hot path. `estimateTokens` is one pass over the
 * characters, calibrated against OpenAI's o200k_base on prose, code and JSON; `TokenCounter`
 * corrects it with what a provider actually reported and can load o200k_base (a 2 MB module,
 * imported on first use only) for an exact count when a decision sits near a threshold.
 */
import type { ChatMessage, ToolSpec } from "../providers/types.js";

/** Tokens a message costs beyond its text (role and framing), as chat formats add. */
const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens one tool call costs beyond its name and arguments. */
const TOOL_CALL_OVERHEAD_TOKENS = 8;
/** Tokens one request costs beyond its parts (priming of the reply). */
const REQUEST_OVERHEAD_TOKENS = 3;
// Characters per token of each kind of run, calibrated against o200k_base on this repository's
// README, sources, package-lock.json and sample sentences in five languages.
const LETTERS_PER_TOKEN = 8;
const DIGITS_PER_TOKEN = 3;
const PUNCTS_PER_TOKEN = 2;
const FOREIGN_PER_TOKEN = 3;

// Character classes, for the estimator's one pass. OTHER: ASCII control characters (free).
const OTHER = 0;
const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const NEWLINE = 4;
const PUNCT = 5;
/** Non-ASCII letters and marks outside WIDE. */
const FOREIGN = 6;
/** CJK, kana, Hangul, emoji and other astral characters: one token each. */
const WIDE = 7;
const ASCII_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  ASCII_CLASS[c] = /[A-Za-z]/.test(ch)
    ? LETTER
    : /[0-9]/.test(ch)
      ? DIGIT
      : ch === "\n"
        ? NEWLINE
        : /\s/.test(ch)
          ? SPACE
          : c > 32 && c < 127
            ? PUNCT
            : OTHER;
}

/**
 * Estimated tokens of `text`, in one pass and without a tokenizer: a run of ASCII letters costs
 * one token per 8 characters, at least one per camelCase part; digits one per 3, punctuation one
 * per 2 characters, a whitespace run one token when it holds a newline or more than one space (a
 * single space joins the next word); CJK characters and emoji ~1 token each, other non-ASCII
 * letters one per 3. Within ±20% of o200k_base on English prose, code and JSON (±35% promised);
 * random text such as base64 is underestimated (~40%), CJK overestimated (~40%). Other
 * tokenizers (Anthropic's) differ more, which TokenCounter's correction absorbs.
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  // The run being read (letters, digits, punctuation or other non-ASCII letters) and its
  // length; it is counted when a character of another kind ends it. Plain locals, no closure:
  // this loop runs over whole transcripts.
  let run = OTHER;
  let length = 0;
  // Lowercase-to-uppercase steps in a letter run: tokenizers split words there (camelCase).
  let humps = 0;
  let lower = false;
  let spaces = 0;
  let newline = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let kind = c < 128 ? (ASCII_CLASS[c] as number) : FOREIGN;
    if (kind === SPACE || kind === NEWLINE) {
      spaces++;
      if (kind === NEWLINE) newline = true;
      if (length > 0) {
        tokens += runTokens(run, length, humps);
        run = OTHER;
        length = 0;
      }
      continue;
    }
    if (spaces > 0) {
      // A single space joins the next word's token; longer runs and line breaks cost one.
      if (spaces > 1 || newline) tokens++;
      spaces = 0;
      newline = false;
    }
    if (kind === FOREIGN) {
      if (c >= 0xd800 && c <= 0xdbff) {
        // A surrogate pair: emoji and other astral characters, ~1 token each.
        kind = WIDE;
        i++;
      } else if (isWide(c)) {
        kind = WIDE;
      }
    }
    if (kind !== run || kind === WIDE) {
      if (length > 0) tokens += runTokens(run, length, humps);
      run = kind;
      length = 0;
      humps = 0;
      lower = false;
    }
    length++;
    if (kind === LETTER) {
      const isLower = c >= 97;
      if (lower && !isLower) humps++;
      lower = isLower;
    }
  }
  if (length > 0) tokens += runTokens(run, length, humps);
  if (spaces > 1 || newline) tokens++;
  return tokens;
}

/** Texts at least this long are remembered by {@link estimateTokensOnce}. */
const MEMO_MIN_CHARS = 4_096;
/** Large texts remembered (the oldest is dropped past it). */
const MEMO_ENTRIES = 16;
const memo = new Map<string, number>();

/**
 * `estimateTokens`, remembered for large texts: a system prompt is the same string turn after
 * turn (SystemPrompt returns its stable tier unchanged while its files are), and one pass over
 * it costs more than the rest of a small turn's estimate.
 */
export function estimateTokensOnce(text: string): number {
  if (text.length < MEMO_MIN_CHARS) return estimateTokens(text);
  const known = memo.get(text);
  if (known !== undefined) return known;
  const tokens = estimateTokens(text);
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
  memo.set(text, tokens);
  return tokens;
}

function runTokens(run: number, length: number, humps: number): number {
  switch (run) {
    case LETTER: {
      const parts = ((length + LETTERS_PER_TOKEN - 1) / LETTERS_PER_TOKEN) | 0;
      return parts > humps ? parts : humps + 1;
    }
    case DIGIT:
      return ((length + DIGITS_PER_TOKEN - 1) / DIGITS_PER_TOKEN) | 0;
    case PUNCT:
      return ((length + PUNCTS_PER_TOKEN - 1) / PUNCTS_PER_TOKEN) | 0;
    case FOREIGN:
      return ((length + FOREIGN_PER_TOKEN - 1) / FOREIGN_PER_TOKEN) | 0;
    default:
      // WIDE (one token each, one character per run) and control characters.
      return run === WIDE ? 1 : 0;
  }
}

/** CJK ideographs, kana, Hangul, fullwidth forms and BMP symbols/emoji: ~1 token each. */
function isWide(c: number): boolean {
  return (
    (c >= 0x2e80 && c <= 0x9fff) ||
    (c >= 0xac00 && c <= 0xd7af) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xff00 && c <= 0xffef) ||
    (c >= 0x2600 && c <= 0x27bf)
  );
}

/** Something that counts tokens exactly: o200k_base once loaded. */
interface Encoder {
  encode(text: string, allowedSpecial?: string[] | "all", disallowedSpecial?: string[] | "all"): number[];
}

let encoder: Encoder | undefined;
let loading: Promise<Encoder> | undefined;

function loadEncoder(): Promise<Encoder> {
  loading ??= (async () => {
    const [{ Tiktoken }, ranks] = await Promise.all([
      import("js-tiktoken/lite"),
      import("js-tiktoken/ranks/o200k_base"),
    ]);
    encoder = new Tiktoken(ranks.default);
    return encoder;
  })().catch((err: unknown) => {
    // Let a later call try again rather than keep a failed import forever.
    loading = undefined;
    throw err;
  });
  return loading;
}

/** What a request is made of, as far as counting goes (ModelRequest without model and limits). */
export interface TokenRequest {
  system: string;
  messages: readonly ChatMessage[];
  tools: readonly ToolSpec[];
}

export interface TokenCounterOptions {
  /** Weight of a new observation in the correction ratio's moving average, in (0, 1]. Default 0.3. */
  smoothing?: number;
  /** Starting correction ratio, within [0.5, 2]. Default 1. */
  initialRatio?: number;
}

/** Bounds of the correction ratio: a wild observation cannot halve or more than double estimates. */
const MIN_RATIO = 0.5;
const MAX_RATIO = 2;

/**
 * Counts tokens for one model. `estimate*` are cheap (no tokenizer) and multiplied by a
 * correction ratio learnt from `observe`, an exponentially weighted moving average of
 * actual / estimated clamped to [0.5, 2], so estimates converge on what the provider reports
 * (one counter per model: tokenizers differ). `exact` counts with o200k_base, loaded on its first
 * call; use it only when `isNear` a threshold. Throws a RangeError naming the option when an
 * option is out of range.
 */
export class TokenCounter {
  readonly #smoothing: number;
  #ratio: number;
  /** Tool specs are frozen and reused per registry: count each once. */
  readonly #toolTokens = new WeakMap<ToolSpec, number>();

  constructor(options: TokenCounterOptions = {}) {
    this.#smoothing = checkRange("smoothing", options.smoothing ?? 0.3, Number.MIN_VALUE, 1);
    this.#ratio = checkRange("initialRatio", options.initialRatio ?? 1, MIN_RATIO, MAX_RATIO);
  }

  /** True once o200k_base has been loaded (by any counter in the process). */
  static get tokenizerLoaded(): boolean {
    return encoder !== undefined;
  }

  /** The current correction ratio (actual / estimated), within [0.5, 2]. */
  get ratio(): number {
    return this.#ratio;
  }

  /** Estimated tokens of `text`, corrected. */
  estimate(text: string): number {
    return Math.ceil(estimateTokens(text) * this.#ratio);
  }

  /**
   * Estimated input tokens of a request, corrected: the system prompt, each message's text and
   * tool calls plus a small per-message overhead, and the tool specs as JSON.
   */
  estimateRequest(request: TokenRequest): number {
    let tokens = REQUEST_OVERHEAD_TOKENS + estimateTokensOnce(request.system);
    for (const message of request.messages) {
      tokens += MESSAGE_OVERHEAD_TOKENS + estimateTokens(message.content);
      if (message.role === "assistant") {
        for (const call of message.toolCalls) {
          tokens +=
            TOOL_CALL_OVERHEAD_TOKENS + estimateTokens(call.name) + estimateTokens(call.argumentsJson);
        }
      } else if (message.role === "tool") {
        tokens += estimateTokens(message.name);
      }
    }
    for (const tool of request.tools) tokens += this.#specTokens(tool);
    return Math.ceil(tokens * this.#ratio);
  }

  /**
   * Learns from one call: `estimatedInputTokens` is what `estimateRequest` returned for it
   * (correction included), `actualInputTokens` what the provider billed as input, cache reads
   * and writes included (Anthropic reports those apart from `inputTokens`). Observations that
   * are not positive finite numbers are ignored.
   */
  observe(estimatedInputTokens: number, actualInputTokens: number): void {
    if (!(estimatedInputTokens > 0 && actualInputTokens > 0)) return;
    if (!Number.isFinite(estimatedInputTokens) || !Number.isFinite(actualInputTokens)) return;
    const raw = estimatedInputTokens / this.#ratio;
    const sample = clamp(actualInputTokens / raw);
    this.#ratio = clamp(this.#ratio + this.#smoothing * (sample - this.#ratio));
  }

  /**
   * Exact o200k_base tokens of `text` (special-token text such as `<|endoftext|>` counted as
   * plain text). The first call imports the tokenizer (~2 MB; tens of ms); later calls reuse it.
   * Rejects when the tokenizer cannot be loaded; a later call tries again.
   */
  async exact(text: string): Promise<number> {
    const enc = encoder ?? (await loadEncoder());
    return enc.encode(text, [], []).length;
  }

  /** `isNear` with this counter: true when `estimate` is within `margin` of `threshold`. */
  isNear(estimate: number, threshold: number, margin = 0.1): boolean {
    return isNear(estimate, threshold, margin);
  }

  #specTokens(tool: ToolSpec): number {
    let tokens = this.#toolTokens.get(tool);
    if (tokens === undefined) {
      tokens = estimateTokens(JSON.stringify(tool));
      this.#toolTokens.set(tool, tokens);
    }
    return tokens;
  }
}

/**
 * True when `estimate` lies within `margin` (a share of `threshold`, default 10%) of
 * `threshold` on either side: the estimate alone cannot tell which side the exact count is on,
 * so it is worth calling `exact`.
 */
export function isNear(estimate: number, threshold: number, margin = 0.1): boolean {
  return Math.abs(estimate - threshold) <= Math.abs(threshold) * margin;
}

function clamp(ratio: number): number {
  return Math.min(MAX_RATIO, Math.max(MIN_RATIO, ratio));
}

function checkRange(field: string, value: number, min: number, max: number): number {
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new RangeError(
      `TokenCounterOptions.${field} must be within [${min}, ${max}], got ${String(value)}`,
    );
  }
  return value;
}
