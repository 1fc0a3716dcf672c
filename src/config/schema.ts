/**
 * The configuration schema (zod). Every object is strict: an unknown key is an error that
 * names it, never silently ignored. Defaults live here and are applied once, at load.
 */
import { z } from "zod";

const port = z.number().int().min(0).max(65_535);
const positiveMs = z.number().int().positive();

/** "provider/model", e.g. "anthropic/claude-sonnet-4-5" or "openai/gpt-4.1". */
export const modelRef = z.string().regex(/^(openai|anthropic|simulator)\/[^\s/][^\s]*$/, {
  message: 'expected "provider/model" where provider is openai, anthropic or simulator',
});

const providerSettings = z.strictObject({
  /** API key; `${OPENAI_API_KEY}` style substitution works. Falls back to the environment. */
  apiKey: z.string().min(1).optional(),
  /** Base URL, for OpenAI-compatible servers (Ollama, vLLM, llama.cpp) or a proxy. */
  baseUrl: z.url().optional(),
  /** Per-request timeout. */
  requestTimeoutMs: positiveMs.default(600_000),
});

export const configSchema = z.strictObject({
  gateway: z
    .strictObject({
      /** Address of the local HTTP server (HTTP channel, health, metrics). Loopback by default. */
      host: z.string().min(1).default("127.0.0.1"),
      port: port.default(7420),
      /** On SIGTERM: how long running turns may finish before they are aborted. */
      drainTimeoutMs: positiveMs.default(30_000),
    })
    .prefault({}),
  agent: z
    .strictObject({
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
    .prefault({}),
  providers: z
    .strictObject({
      openai: providerSettings.prefault({}),
      anthropic: providerSettings.prefault({}),
    })
    .prefault({}),
  lanes: z
    .strictObject({
      /** Concurrent model calls across all sessions. */
      maxConcurrent: z.number().int().min(1).max(256).default(4),
      /** Slots background work (cron, heartbeat) may never take. */
      reservedForHuman: z.number().int().min(0).default(1),
    })
    .prefault({}),
  session: z
    .strictObject({
      /** How direct messages map to sessions. */
      dmScope: z
        .enum(["per-channel-peer", "per-peer", "per-account-channel-peer", "main"])
        .default("per-channel-peer"),
      /** What a message does when its session is busy. */
      queueMode: z.enum(["followup", "collect", "steer"]).default("followup"),
    })
    .prefault({}),
  outbox: z
    .strictObject({
      /** Replies older than this are expired instead of being sent late. */
      maxAgeMs: positiveMs.default(3_600_000),
      maxAttempts: z.number().int().min(1).max(100).default(5),
    })
    .prefault({}),
  logging: z
    .strictObject({
      level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
      /** "auto" pretty-prints on a TTY. */
      format: z.enum(["auto", "json", "pretty"]).default("auto"),
    })
    .prefault({}),
  channels: z
    .strictObject({
      http: z.strictObject({ enabled: z.boolean().default(true) }).prefault({}),
      console: z.strictObject({ enabled: z.boolean().default(true) }).prefault({}),
    })
    .prefault({}),
});

/** The validated configuration with every default applied. */
export type Config = z.infer<typeof configSchema>;
export type ProviderName = "openai" | "anthropic";
