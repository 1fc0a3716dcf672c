/**
 * Simulated token accounting. Tokens are estimated as ceil(chars / 4) of a canonical
 * serialization (system, tools, then messages, in order, `cache_control` markers removed so a
 * moving breakpoint does not change the text). Cache reads are computed from the longest common
 * prefix with the previous request of the same protocol and model, as a real prompt cache would.
 */
import type { SimulatedProtocol } from "./types.js";

/** Input-side usage of one request. */
export interface InputUsage {
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

interface Canonical {
  text: string;
  /** End offset in `text` of the last segment marked with `cache_control` (0: none). */
  cacheableEnd: number;
}

/** Token estimate of a string: ceil(chars / 4). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** OpenAI caches prompts of at least this many tokens, in steps of {@link OPENAI_CACHE_STEP}. */
const OPENAI_CACHE_MIN_TOKENS = 1024;
const OPENAI_CACHE_STEP = 128;

/**
 * Remembers the previous canonical prompt per protocol and model and measures each new
 * request against it.
 *
 * - Anthropic: cache_read = tokens of the common prefix (bounded by both requests' last
 *   `cache_control` breakpoint), only when the request uses `cache_control`; cache_creation =
 *   the rest up to the request's last breakpoint; input = everything after it.
 * - OpenAI: cached_tokens = common-prefix tokens rounded down to a multiple of 128 once they
 *   reach 1024 (automatic caching); input = the rest.
 */
export class PromptCache {
  #previous = new Map<string, Canonical>();

  /** Measures `body` and remembers it as the new previous prompt of its protocol and model. */
  measure(protocol: SimulatedProtocol, body: Record<string, unknown>): InputUsage {
    const current = canonicalize(protocol, body);
    const key = `${protocol}\u0000${String(body.model)}`;
    const previous = this.#previous.get(key);
    this.#previous.set(key, current);
    const total = estimateTokens(current.text.length);
    const common = previous ? commonPrefixLength(previous.text, current.text) : 0;
    if (protocol === "openai") {
      const commonTokens = Math.floor(common / 4);
      const cached =
        commonTokens >= OPENAI_CACHE_MIN_TOKENS ? commonTokens - (commonTokens % OPENAI_CACHE_STEP) : 0;
      return { inputTokens: total - cached, cacheReadTokens: cached, cacheWriteTokens: 0 };
    }
    if (current.cacheableEnd === 0) return { inputTokens: total, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const readChars = previous ? Math.min(common, previous.cacheableEnd, current.cacheableEnd) : 0;
    const read = Math.min(total, estimateTokens(readChars));
    const write = Math.max(0, Math.min(total, estimateTokens(current.cacheableEnd)) - read);
    return { inputTokens: total - read - write, cacheReadTokens: read, cacheWriteTokens: write };
  }
}

function canonicalize(protocol: SimulatedProtocol, body: Record<string, unknown>): Canonical {
  const segments: unknown[] = [];
  if (protocol === "anthropic" && body.system !== undefined) {
    segments.push(...(Array.isArray(body.system) ? body.system : [body.system]));
  }
  if (Array.isArray(body.tools)) segments.push(...body.tools);
  if (Array.isArray(body.messages)) segments.push(...body.messages);
  let text = "";
  let cacheableEnd = 0;
  for (const segment of segments) {
    text += `${JSON.stringify(segment, withoutCacheControl)}\n`;
    if (hasCacheControl(segment)) cacheableEnd = text.length;
  }
  // Anthropic's top-level `cache_control` (automatic caching) marks the whole prompt.
  if (protocol === "anthropic" && body.cache_control) cacheableEnd = text.length;
  return { text, cacheableEnd };
}

function withoutCacheControl(key: string, value: unknown): unknown {
  return key === "cache_control" ? undefined : value;
}

function hasCacheControl(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasCacheControl);
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  if (record.cache_control) return true;
  return Array.isArray(record.content) && record.content.some(hasCacheControl);
}

function commonPrefixLength(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
