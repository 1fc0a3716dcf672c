/**
 * The configuration schema (zod). Every object is strict: an unknown key is an error that
 * names it, never silently ignored. Defaults live here and are applied once, at load.
 */
import { z } from "zod";

const port = z.number().int().min(0).max(65_535);

/**
 * An object section: strict (an unknown key is an error naming it), and absent or YAML null (a
 * key whose children are all commented out, as in the README's examples) means "all defaults".
 */
function section<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.preprocess((value) => value ?? {}, z.strictObject(shape));
}

/** An optional object: YAML null (every child commented out) counts as not set. */
function nullAsUnset<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => value ?? undefined, schema.optional());
}
const positiveMs = z.number().int().positive();

/** "provider/model", e.g. "anthropic/claude-sonnet-4-5" or "openai/gpt-4.1". */
export const modelRef = z.string().regex(/^(openai|anthropic|simulator)\/[^\s/][^\s]*$/, {
  message: 'expected "provider/model" where provider is openai, anthropic or simulator',
});

const providerShape = {
  /** API key; `${OPENAI_API_KEY}` style substitution works. Falls back to the environment. */
  apiKey: z.string().min(1).optional(),
  /** Base URL, for OpenAI-compatible servers (Ollama, vLLM, llama.cpp) or a proxy. */
  baseUrl: z.url().optional(),
  /** Per-request timeout. */
  requestTimeoutMs: positiveMs.default(600_000),
};

const openaiSettings = section({
  ...providerShape,
  /**
   * Request field carrying the output-token limit. Default: "max_completion_tokens" for the
   * official API (no baseUrl), "max_tokens" when baseUrl is set, since OpenAI-compatible servers
   * (Ollama, vLLM, llama.cpp) honour only that one.
   */
  maxTokensField: z.enum(["max_completion_tokens", "max_tokens"]).optional(),
});
const anthropicSettings = section(providerShape);

const accountId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, { message: "expected lowercase letters, digits, - or _" });
const chatIdList = z.array(z.union([z.string().min(1), z.number().int()]).transform(String)).default([]);

const telegramWebhook = z.strictObject({
  /** Public HTTPS URL Telegram posts updates to; it must reach this gateway's `path`. */
  url: z.url(),
  /** Checked on every delivery (X-Telegram-Bot-Api-Secret-Token). */
  secret: z.string().regex(/^[A-Za-z0-9_-]{1,256}$/, { message: "expected 1-256 letters, digits, _ or -" }),
  /** Path on the gateway's HTTP server; default /telegram/<account>. */
  path: z.string().startsWith("/").optional(),
});

const telegramAccount = z.strictObject({
  token: z.string().min(1),
  apiRoot: z.url().optional(),
  mode: z.enum(["polling", "webhook"]).optional(),
  webhook: nullAsUnset(telegramWebhook),
});

/** Telegram: one or more bot accounts plus the access policy they share. */
const telegramSettings = section({
  enabled: z.boolean().default(true),
  /** Bot token from BotFather, usually ${TELEGRAM_BOT_TOKEN}: shorthand for accounts.default.token. */
  token: z.string().min(1).optional(),
  /** Bot API root; set it for a local Bot API server (and in tests). */
  apiRoot: z.url().default("https://api.telegram.org"),
  mode: z.enum(["polling", "webhook"]).default("polling"),
  webhook: nullAsUnset(telegramWebhook),
  accounts: z.preprocess((v) => v ?? {}, z.record(accountId, telegramAccount)),
  dmPolicy: z.enum(["pairing", "allowlist", "open", "disabled"]).default("pairing"),
  /** Telegram user ids always allowed in DMs. */
  allowFrom: chatIdList,
  groupPolicy: z.enum(["allowlist", "open", "disabled"]).default("allowlist"),
  /** Group chat ids (e.g. -1001234567890) allowed under groupPolicy allowlist. */
  groups: chatIdList,
  requireMention: z.boolean().default(true),
  /** Extra regular expressions (case-insensitive) that count as addressing the bot in groups. */
  mentionPatterns: z
    .array(
      z.string().refine(
        (p) => {
          try {
            new RegExp(p, "i");
            return true;
          } catch {
            return false;
          }
        },
        { message: "expected a valid regular expression" },
      ),
    )
    .default([]),
  groupHistoryLimit: z.number().int().min(0).max(500).default(50),
  /** "edit": one message edited as the reply streams (at most once a second). */
  streaming: z.enum(["off", "edit"]).default("off"),
  /** Largest attachment downloaded into the workspace. */
  mediaMaxMb: z.number().positive().max(2000).default(20),
  pollTimeoutSeconds: z.number().int().min(1).max(50).default(30),
})
  .refine((t) => !t.enabled || t.token !== undefined || Object.keys(t.accounts).length > 0, {
    message: "set channels.telegram.token (e.g. ${TELEGRAM_BOT_TOKEN}) or channels.telegram.accounts",
  })
  .refine(
    (t) =>
      (t.mode !== "webhook" && Object.values(t.accounts).every((a) => a.mode !== "webhook")) ||
      t.webhook !== undefined ||
      Object.values(t.accounts).every((a) => (a.mode ?? t.mode) !== "webhook" || a.webhook !== undefined),
    {
      message: "webhook mode needs webhook.url and webhook.secret",
    },
  );

export const configSchema = section({
  gateway: section({
    /**
     * Address of the local HTTP server (HTTP channel, health, metrics). Loopback by default:
     * /v1/chat has no authentication and the agent has file tools.
     */
    host: z.string().min(1).default("127.0.0.1"),
    /**
     * Must be true for a non-loopback `host` (anything but 127.0.0.0/8, ::1, localhost);
     * without it the gateway refuses to start. Default false.
     */
    allowRemote: z.boolean().default(false),
    port: port.default(7420),
    /** On SIGTERM: how long running turns may finish before they are aborted. */
    drainTimeoutMs: positiveMs.default(30_000),
    /**
     * Authentication of the HTTP API. With `token` set (usually `${SWITCHYARD_TOKEN}`), every
     * `/v1/*` request and `/metrics` need `Authorization: Bearer <token>`; `/healthz`, `/readyz`
     * and platform webhooks (which carry their own secret) stay open. A non-loopback `host`
     * without a token is refused at start unless `mode: none` says so explicitly.
     */
    auth: section({
      /** "token" (default): a token is used when set. "none": explicitly no authentication. */
      mode: z.enum(["token", "none"]).default("token"),
      token: z.string().min(16, { message: "expected at least 16 characters" }).optional(),
    }).superRefine((a, ctx) => {
      if (a.mode !== "none" || a.token === undefined) return;
      ctx.addIssue({
        code: "custom",
        message: "mode is none but a token is set: remove one of them",
        params: { namesValues: true },
      });
    }),
  }),
  agent: section({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]*$/, { message: "expected lowercase letters, digits, - or _" })
      .default("main"),
    /** Primary model as provider/model. Without a key for that provider, the simulator answers. */
    model: modelRef.default("anthropic/claude-sonnet-5-5"),
    /** Workspace folder; default <home>/workspace. */
    workspace: z.string().min(1).optional(),
    maxTokens: z.number().int().positive().default(4096),
    maxToolCallsPerRun: z.number().int().positive().default(50),
    /** A run with no token and no tool event for this long is aborted. */
    progressTimeoutMs: positiveMs.default(120_000),
    /** Transcript events loaded into each run. */
    historyLimit: z.number().int().positive().default(200),
    bootstrapMaxChars: z.number().int().positive().default(20_000),
    bootstrapTotalMaxChars: z.number().int().positive().default(60_000),
    toolTimeoutMs: positiveMs.default(60_000),
  })
    // Starting a tool counts as progress and the tool's own timeout bounds it: the watchdog
    // must outlast that timeout, or a long but healthy tool would be killed as a stall.
    .superRefine((a, ctx) => {
      if (a.toolTimeoutMs < a.progressTimeoutMs) return;
      ctx.addIssue({
        code: "custom",
        path: ["toolTimeoutMs"],
        // Either value may be a default the file never mentions, so the message names both.
        message: `toolTimeoutMs is ${a.toolTimeoutMs} and progressTimeoutMs ${a.progressTimeoutMs}, expected toolTimeoutMs less than progressTimeoutMs`,
        params: { namesValues: true },
      });
    }),
  providers: section({
    openai: openaiSettings,
    anthropic: anthropicSettings,
  }),
  lanes: section({
    /** Concurrent model calls across all sessions. */
    maxConcurrent: z.number().int().min(1).max(256).default(4),
    /** Slots background work (cron, heartbeat) may never take. */
    reservedForHuman: z.number().int().min(0).default(1),
  }),
  session: section({
    /** How direct messages map to sessions. */
    dmScope: z
      .enum(["per-channel-peer", "per-peer", "per-account-channel-peer", "main"])
      .default("per-channel-peer"),
    /** What a message does when its session is busy. */
    queueMode: z.enum(["followup", "collect", "steer"]).default("followup"),
  }),
  heartbeat: section({
    /**
     * A background turn every this often in the heartbeat session, following HEARTBEAT.md;
     * skipped without a model call while HEARTBEAT.md holds nothing to act on. 0 turns it off.
     */
    everyMs: z.number().int().min(0).default(1_800_000),
    /** Where an alert goes: the chat that last addressed the agent directly, or nowhere. */
    target: z.enum(["last", "none"]).default("last"),
    /** An answer that says HEARTBEAT_OK with at most this many other characters is not sent. */
    ackMaxChars: z.number().int().min(0).default(300),
  }).refine((h) => h.everyMs === 0 || h.everyMs >= 60_000, {
    message: "expected 0 (off) or at least 60000 (one minute)",
    path: ["everyMs"],
  }),
  outbox: section({
    /** Replies older than this are expired instead of being sent late. */
    maxAgeMs: positiveMs.default(3_600_000),
    maxAttempts: z.number().int().min(1).max(100).default(5),
  }),
  logging: section({
    level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    /** "auto" pretty-prints on a TTY. */
    format: z.enum(["auto", "json", "pretty"]).default("auto"),
    /** `<home>/logs/switchyard.log` is rotated (renamed `switchyard.log.1`) when it reaches this many MB; default 10. */
    maxFileMb: z.number().min(1).default(10),
    /** Rotated log files kept in addition to the current one (`switchyard.log.1` … `.N`); default 5. */
    maxFiles: z.number().int().min(1).default(5),
  }),
  channels: section({
    http: section({ enabled: z.boolean().default(true) }),
    console: section({ enabled: z.boolean().default(true) }),
    telegram: telegramSettings.optional(),
  }),
});

/** The validated configuration with every default applied. */
export type Config = z.infer<typeof configSchema>;
export type ProviderName = "openai" | "anthropic";
export type TelegramSettings = z.infer<typeof telegramSettings>;
