/**
 * The model-access sections of the configuration: `providers` (built-in and named providers,
 * their auth profiles, cooldowns by failure kind), `limits` (token and spend caps) and `prices`.
 */
import { z } from "zod";
import { type CooldownCurve, DEFAULT_COOLDOWNS } from "../harness/models/cooldown.js";
import { PROVIDER_NAME_PATTERN } from "../harness/providers/model-ref.js";
import { section } from "../util/zod-sections.js";

const positiveMs = z.number().int().positive();

/** One credential of a provider. */
const profile = z.strictObject({
  /** Shown by `auth status`, stored with its state; unique within the provider. */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@-]*$/, {
    message: "expected letters, digits, '.', '_', '@' or '-'",
  }),
  /** The key (`${ENV_VAR}` substitution works). */
  apiKey: z.string().min(1, { message: "a profile needs an apiKey (it is empty)" }),
});

const commonShape = {
  /** One key: a single profile named `default`. Falls back to the vendor's environment variable. */
  apiKey: z.string().min(1).optional(),
  /** Several keys, tried in turn when one is rate-limited, out of quota or rejected. */
  profiles: z.array(profile).min(1).optional(),
  /** Base URL, for OpenAI-compatible servers (Ollama, vLLM, llama.cpp) or a proxy. */
  baseUrl: z.url().optional(),
  /** Per-request timeout. */
  requestTimeoutMs: positiveMs.default(600_000),
  /**
   * OpenAI protocol only: the request field carrying the output-token limit. Default
   * "max_completion_tokens" for the official API (no baseUrl), "max_tokens" with a baseUrl.
   */
  maxTokensField: z.enum(["max_completion_tokens", "max_tokens"]).optional(),
};

/** apiKey and profiles are two ways to say the same thing: one of them. */
function oneKeySource(
  p: { apiKey?: string | undefined; profiles?: Array<{ id: string }> | undefined },
  ctx: z.RefinementCtx,
) {
  if (p.apiKey !== undefined && p.profiles !== undefined) {
    ctx.addIssue({ code: "custom", path: ["apiKey"], message: "set either apiKey or profiles, not both" });
  }
  const seen = new Set<string>();
  for (const [i, { id }] of (p.profiles ?? []).entries()) {
    if (seen.has(id)) {
      ctx.addIssue({
        code: "custom",
        path: ["profiles", i, "id"],
        message: `profile id "${id}" is used twice`,
      });
    }
    seen.add(id);
  }
}

const { maxTokensField: _openaiOnly, ...anthropicShape } = commonShape;
const openaiProvider = section(commonShape).superRefine(oneKeySource);
const anthropicProvider = section(anthropicShape).superRefine(oneKeySource);

/** `providers.<name>` other than the built-ins: an OpenAI- or Anthropic-protocol server. */
const namedProvider = z
  .strictObject({
    /** Which wire protocol it speaks. */
    type: z.enum(["openai", "anthropic"]),
    ...commonShape,
  })
  .superRefine((p, ctx) => {
    oneKeySource(p, ctx);
    if (p.type === "anthropic" && p.maxTokensField !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["maxTokensField"],
        message: "only OpenAI-protocol providers take maxTokensField",
      });
  });

/** A cooldown: `baseMs` after the first failure, × `factor` per further consecutive one, at most `maxMs`. */
function cooldown({ baseMs, factor, maxMs }: CooldownCurve) {
  return section({
    baseMs: z.number().int().min(0).default(baseMs),
    factor: z.number().min(1).default(factor),
    maxMs: z.number().int().min(0).default(maxMs),
  });
}

/** How long a profile rests after each kind of failure (invalid requests and overflows never cool one). */
export const cooldownsSettings = section({
  /** Without the server's `retry-after`: 60 s, ×5 per consecutive failure, at most 1 h. */
  rate_limit: cooldown(DEFAULT_COOLDOWNS.rate_limit),
  overloaded: cooldown(DEFAULT_COOLDOWNS.overloaded),
  /** A rejected key: 5 min, then longer (doctor and status warn). */
  auth: cooldown(DEFAULT_COOLDOWNS.auth),
  /** Out of credit or quota: 5 h, doubling to 24 h. */
  billing: cooldown(DEFAULT_COOLDOWNS.billing),
  timeout: cooldown(DEFAULT_COOLDOWNS.timeout),
  network: cooldown(DEFAULT_COOLDOWNS.network),
  /** A failure the classifier does not know: short, like a network blip. */
  unknown: cooldown(DEFAULT_COOLDOWNS.unknown),
});

/** Names under `providers:` that are not providers. */
export const RESERVED_PROVIDER_KEYS = ["cooldowns", "maxWaitMs", "simulator"] as const;

export const providersSettings = z.preprocess(
  (value) => value ?? {},
  z
    .strictObject({
      anthropic: anthropicProvider,
      openai: openaiProvider,
      cooldowns: cooldownsSettings,
      /**
       * Longest a run waits for a cooling profile when every profile of every model in the chain
       * is cooling; past it the run fails with the reason. Capped a second under
       * agent.progressTimeoutMs, so the no-progress watchdog never mistakes a wait for a stall.
       */
      maxWaitMs: z.number().int().min(0).default(90_000),
    })
    .catchall(namedProvider)
    .superRefine((providers, ctx) => {
      for (const name of Object.keys(providers)) {
        if (
          (RESERVED_PROVIDER_KEYS as readonly string[]).includes(name) ||
          name === "anthropic" ||
          name === "openai"
        )
          continue;
        if (!PROVIDER_NAME_PATTERN.test(name)) {
          ctx.addIssue({
            code: "custom",
            path: [name],
            message: "a provider name is lowercase letters, digits, - or _, starting with a letter",
          });
        }
      }
    }),
);

/** Token and spend caps; each is off when unset. */
export const limitsSettings = section({
  /** Tokens (input + output, cache included) one run may use; the run stops with the reason. */
  maxTokensPerRun: z.number().int().positive().default(2_000_000),
  /** Tokens one session may use per UTC day; further turns in it are refused with the reason. */
  sessionDailyTokens: z.number().int().positive().optional(),
  /** Spend per UTC day (USD) at which background work (heartbeat, cron, wakes) pauses. */
  dailySpendUsd: z.number().min(0).optional(),
  /** Spend per UTC day (USD) at which every model call stops, human chats included. */
  dailySpendHardUsd: z.number().min(0).optional(),
});

const pricePerMillion = z.number().min(0, { message: "a price cannot be negative" });

/**
 * USD per million tokens, by `provider/model` pattern (`*` matches any characters; the most
 * specific pattern wins). Merged over the built-in table; local providers cost 0.
 */
export const pricesSettings = z
  .preprocess(
    (value) => value ?? {},
    z.record(
      z.string().regex(/^[a-z*][a-z0-9_*-]*\/\S+$/, { message: 'expected "provider/model" (may contain *)' }),
      z.strictObject({
        input: pricePerMillion,
        output: pricePerMillion,
        cacheRead: pricePerMillion.optional(),
        cacheWrite: pricePerMillion.optional(),
      }),
    ),
  )
  .default({});

export type ProvidersSettings = z.output<typeof providersSettings>;
export type CooldownsSettings = z.output<typeof cooldownsSettings>;
export type LimitsSettings = z.output<typeof limitsSettings>;
export type PricesSettings = z.output<typeof pricesSettings>;
export type NamedProviderSettings = z.output<typeof namedProvider>;
