/**
 * Context window and output limits by `provider/model` pattern (`*` matches anything; the most
 * specific pattern, the one with the most literal characters, wins). The built-in table covers
 * current Anthropic and OpenAI models; `models:` in the config (modelLimitsSettings) is consulted
 * first. An unknown model gets deliberately small limits, so budgets err on the safe side.
 */
import { z } from "zod";
import { nullAsUnset } from "../../util/zod-sections.js";
import type { ModelLimits, ResolvedModelLimits } from "./types.js";

/** Built-in limits (tokens), as the vendors publish them for their default (non-beta) tiers. */
export const DEFAULT_MODEL_LIMITS: Readonly<Record<string, ModelLimits>> = {
  "anthropic/claude-*": { contextWindow: 200_000, maxOutput: 8_192 },
  "anthropic/claude-3-7-sonnet*": { contextWindow: 200_000, maxOutput: 64_000 },
  "anthropic/claude-sonnet-4*": { contextWindow: 200_000, maxOutput: 64_000 },
  "anthropic/claude-sonnet-4-5*": { contextWindow: 200_000, maxOutput: 64_000 },
  "anthropic/claude-opus-4*": { contextWindow: 200_000, maxOutput: 32_000 },
  "anthropic/claude-opus-4-5*": { contextWindow: 200_000, maxOutput: 64_000 },
  "anthropic/claude-haiku-4*": { contextWindow: 200_000, maxOutput: 64_000 },
  "openai/gpt-4.1*": { contextWindow: 1_047_576, maxOutput: 32_768 },
  "openai/gpt-5*": { contextWindow: 400_000, maxOutput: 128_000 },
  "openai/gpt-5-chat*": { contextWindow: 128_000, maxOutput: 16_384 },
  "openai/gpt-4o*": { contextWindow: 128_000, maxOutput: 16_384 },
  "openai/o3*": { contextWindow: 200_000, maxOutput: 100_000 },
  "openai/o4-mini*": { contextWindow: 200_000, maxOutput: 100_000 },
  "simulator/*": { contextWindow: 200_000, maxOutput: 8_192 },
};

/** What a model no pattern matches is assumed to allow: small enough for any current model. */
export const UNKNOWN_MODEL_LIMITS: Readonly<ModelLimits> = { contextWindow: 32_000, maxOutput: 4_096 };

const tokens = z.int().positive();

/**
 * The `models:` config section: limits by `provider/model` pattern (`*` allowed), consulted
 * before the built-in table, e.g. `"ollama/qwen3*": { contextWindow: 32768, maxOutput: 8192 }`.
 * Optional; YAML null counts as not set. `maxOutput` must be below `contextWindow`.
 */
export const modelLimitsSettings = nullAsUnset(
  z.record(
    z.string().regex(/^[a-z*][a-z0-9_*-]*\/\S+$/, { message: 'expected "provider/model" (may contain *)' }),
    z
      .strictObject({ contextWindow: tokens, maxOutput: tokens })
      .refine((l) => l.maxOutput < l.contextWindow, {
        message: "maxOutput must be less than contextWindow",
        path: ["maxOutput"],
      }),
  ),
);

export type ModelLimitsSettings = z.output<typeof modelLimitsSettings>;

interface Compiled {
  regex: RegExp;
  literal: number;
  pattern: string;
  limits: ModelLimits;
}

/** Most literal characters first; ties by pattern, so the order never depends on key order. */
function compile(table: Readonly<Record<string, ModelLimits>>): Compiled[] {
  return Object.entries(table)
    .map(([pattern, limits]) => ({
      pattern,
      limits,
      literal: pattern.replace(/\*/g, "").length,
      regex: new RegExp(`^${pattern.split("*").map(escapeRegex).join(".*")}$`),
    }))
    .sort((a, b) => b.literal - a.literal || (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0));
}

const DEFAULTS = compile(DEFAULT_MODEL_LIMITS);
/**
 * Override tables compiled once per object: the config's is one object for the life of the
 * process (a table mutated after its first use keeps its first compilation).
 */
const compiledOverrides = new WeakMap<object, Compiled[]>();

/**
 * The limits of `ref` ("provider/model"): the most specific matching pattern of `overrides`
 * (the `models:` section) if any matches, else of DEFAULT_MODEL_LIMITS, else
 * UNKNOWN_MODEL_LIMITS with `known: false`.
 */
export function limitsFor(
  ref: string,
  overrides?: Readonly<Record<string, ModelLimits>>,
): ResolvedModelLimits {
  if (overrides !== undefined) {
    let compiled = compiledOverrides.get(overrides);
    if (compiled === undefined) {
      compiled = compile(overrides);
      compiledOverrides.set(overrides, compiled);
    }
    const hit = compiled.find((e) => e.regex.test(ref));
    if (hit) return resolved(hit.limits, true);
  }
  const hit = DEFAULTS.find((e) => e.regex.test(ref));
  return hit ? resolved(hit.limits, true) : resolved(UNKNOWN_MODEL_LIMITS, false);
}

function resolved(limits: ModelLimits, known: boolean): ResolvedModelLimits {
  return { contextWindow: limits.contextWindow, maxOutput: limits.maxOutput, known };
}

function escapeRegex(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}
