/**
 * Prices in USD per million tokens, by `provider/model` pattern (`*` matches anything; the
 * most specific pattern — the one with the most literal characters — wins). The built-in table
 * covers current Anthropic and OpenAI models; `prices:` in the config is merged over it. Models
 * of named providers (local servers) cost 0 unless the config prices them; the simulator's calls
 * are never priced (the router does not meter them).
 */
import type { TokenUsage } from "../providers/types.js";

/** USD per million tokens. Cache prices default to the input price. */
export interface Price {
  input: number;
  output: number;
  cacheRead?: number | undefined;
  cacheWrite?: number | undefined;
}

/** Built-in prices (USD / 1M tokens), list prices as published by the vendors. */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = {
  "anthropic/claude-opus-4-5*": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  "anthropic/claude-opus-4*": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  "anthropic/claude-opus-*": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  "anthropic/claude-sonnet-*": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "anthropic/claude-haiku-4*": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  "anthropic/claude-3-5-haiku*": { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  "anthropic/claude-haiku-*": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  "openai/gpt-5*": { input: 1.25, output: 10, cacheRead: 0.125 },
  "openai/gpt-5*-mini*": { input: 0.25, output: 2, cacheRead: 0.025 },
  "openai/gpt-5*-nano*": { input: 0.05, output: 0.4, cacheRead: 0.005 },
  "openai/gpt-4.1*": { input: 2, output: 8, cacheRead: 0.5 },
  "openai/gpt-4.1-mini*": { input: 0.4, output: 1.6, cacheRead: 0.1 },
  "openai/gpt-4.1-nano*": { input: 0.1, output: 0.4, cacheRead: 0.025 },
  "openai/gpt-4o*": { input: 2.5, output: 10, cacheRead: 1.25 },
  "openai/gpt-4o-mini*": { input: 0.15, output: 0.6, cacheRead: 0.075 },
  "openai/o3*": { input: 2, output: 8, cacheRead: 0.5 },
  "openai/o4-mini*": { input: 1.1, output: 4.4, cacheRead: 0.275 },
};

interface Compiled {
  pattern: string;
  regex: RegExp;
  literal: number;
  price: Price;
}

/** Looks prices up by model reference (see the file header). */
export class PriceTable {
  readonly #entries: Compiled[];
  readonly #cache = new Map<string, Price | undefined>();

  constructor(
    overrides: Readonly<Record<string, Price>> = {},
    defaults: Readonly<Record<string, Price>> = DEFAULT_PRICES,
  ) {
    const merged = { ...defaults, ...overrides };
    this.#entries = Object.entries(merged)
      .map(([pattern, price]) => ({
        pattern,
        price,
        literal: pattern.replace(/\*/g, "").length,
        regex: new RegExp(`^${pattern.split("*").map(escapeRegex).join(".*")}$`),
      }))
      // Most literal characters first: "openai/gpt-5*-mini*" beats "openai/gpt-5*".
      .sort((a, b) => b.literal - a.literal || a.pattern.localeCompare(b.pattern));
  }

  /** The price of `provider/model`, or undefined when no pattern matches (it costs 0). */
  priceOf(ref: string): Price | undefined {
    if (this.#cache.has(ref)) return this.#cache.get(ref);
    const price = this.#entries.find((e) => e.regex.test(ref))?.price;
    this.#cache.set(ref, price);
    return price;
  }

  /** USD for `usage` on `provider/model`. */
  costUsd(ref: string, usage: TokenUsage): number {
    const p = this.priceOf(ref);
    if (!p) return 0;
    return (
      (usage.inputTokens * p.input +
        usage.outputTokens * p.output +
        usage.cacheReadTokens * (p.cacheRead ?? p.input) +
        usage.cacheWriteTokens * (p.cacheWrite ?? p.input)) /
      1_000_000
    );
  }
}

function escapeRegex(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}

/** Input + output + cache read + cache write. */
export function totalTokens(u: TokenUsage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
}
