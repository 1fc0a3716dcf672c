/**
 * The configuration schema (zod). Every object is strict: an unknown key is an error that
 * names it, never silently ignored. Defaults live here and are applied once, at load.
 */
import { BUILTIN_JIT_RULE_IDS } from "../harness/jit/builtin-rules.js";
import type { BuiltinJitRuleId } from "../harness/jit/types.js";
import { z } from "zod";
import { channelModules } from "../channels/registry.js";
import type { ChannelModule } from "../channels/types.js";
import { MODEL_REF_EXPECTED, MODEL_REF_PATTERN } from "../harness/providers/model-ref.js";
import { modelLimitsSettings } from "../harness/context/model-limits.js";
import { section } from "../util/zod-sections.js";
import { TOOL_PROFILES, type ToolProfile } from "../harness/tools/tool-groups.js";
import { DEFAULT_TOOL_POLICY, toolPolicyProblems } from "../harness/tools/tool-policy.js";
import { DEFAULT_MAX_PARALLEL_TOOLS, MAX_PARALLEL_TOOLS } from "../harness/tools/parallel-plan.js";
import {
  limitsSettings,
  pricesSettings,
  providersSettings,
  RESERVED_PROVIDER_KEYS,
} from "./providers-schema.js";
import { webSettings } from "../capabilities/web/settings.js";
import { execSettings } from "./tools-schema.js";
import { assignmentsSettings } from "../capabilities/assignments/settings.js";
import { cronSettings } from "../capabilities/cron/settings.js";
import { heartbeatSettings } from "../capabilities/heartbeat/settings.js";
import { mcpSettings } from "../capabilities/mcp/settings.js";
import { hookSettings } from "../capabilities/hooks/settings.js";
import { subagentSettings } from "../capabilities/subagents/settings.js";

const port = z.number().int().min(0).max(65_535);

const positiveMs = z.number().int().positive();

/** Tool names or `group:<name>` (checked against the known tools and groups below). */
const toolRules = z.array(z.string().min(1));
const toolRuleSet = z.strictObject({ allow: toolRules.optional(), deny: toolRules.optional() });

/** "provider/model", e.g. "anthropic/claude-sonnet-4-5" or "openai/gpt-4.1" (see model-ref.ts). */
/** `provider/model`; a bare `simulator` is the built-in simulator (`simulator/default`). */
export const modelRef = z.preprocess(
  (v) => (v === "simulator" ? "simulator/default" : v),
  z.string().regex(MODEL_REF_PATTERN, { message: MODEL_REF_EXPECTED }),
);

/** The settings schema of every module, by its config key. */
type ModuleSettings<M> = { [K in keyof M]: M[K] extends ChannelModule<infer S> ? S : never };

/** `{ name: module.settings }` for every channel module. */
function channelSettings<M extends Record<string, ChannelModule>>(modules: M): ModuleSettings<M> {
  return Object.fromEntries(
    Object.entries(modules).map(([name, m]) => [name, m.settings]),
  ) as ModuleSettings<M>;
}

/**
 * The configuration schema for a set of channel modules (`channels.<name>` is each module's own
 * settings schema). The gateway's is `configSchema`, for the registry's modules.
 */
export function buildConfigSchema<M extends Record<string, ChannelModule>>(modules: M) {
  return section({
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
       * Lifetime of this process's leases on sessions and in-progress rows, renewed every third
       * of it. When gateways share one database, a crashed one's work is taken over this long
       * after it stopped renewing (at once by a gateway restarted in the same home folder).
       */
      leaseTtlMs: z.number().int().min(1_000).max(600_000).default(30_000),
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
      /**
       * Models tried in order when the primary's every auth profile is cooling or failing with a
       * retryable kind (rate limit, overload, timeout, network, auth, billing); never on an
       * invalid request or a context overflow.
       */
      fallbacks: z.array(modelRef).default([]),
      /** After a fallback, a session tries its primary again this long later. */
      fallbackRetryPrimaryMs: positiveMs.default(600_000),
      /** Workspace folder; default <home>/workspace. */
      workspace: z.string().min(1).optional(),
      maxTokens: z.number().int().positive().default(4096),
      maxToolCallsPerRun: z.number().int().positive().default(50),
      /**
       * Read-only calls (and spawn_agent) of one model turn run this many at once; any other call
       * runs alone, in the model's order (harness/tools/parallel-plan.ts). 1: one after another.
       */
      maxParallelTools: z.number().int().min(1).max(MAX_PARALLEL_TOOLS).default(DEFAULT_MAX_PARALLEL_TOOLS),
      /**
       * Tool-loop detection: the same call with the same result `warnAt` times warns the model,
       * `stopAt` times ends the run as stalled; two calls alternating unchanged end it at
       * `pingPongStopAt`; an unknown tool called twice ends it.
       */
      toolLoop: section({
        enabled: z.boolean().default(true),
        warnAt: z.number().int().min(2).max(100).default(5),
        stopAt: z.number().int().min(3).max(200).default(10),
        pingPongStopAt: z.number().int().min(4).max(200).default(10),
      }).refine((t) => t.stopAt > t.warnAt, {
        message: "expected stopAt greater than warnAt",
        path: ["stopAt"],
      }),
      /**
       * Just-in-time instructions (harness/jit/): before each model call the built-in rules read
       * the run's state, and one that fires adds a line to that call only. `disable` names rule ids.
       */
      jit: section({
        enabled: z.boolean().default(true),
        disable: z
          .array(z.enum(BUILTIN_JIT_RULE_IDS as [BuiltinJitRuleId, ...BuiltinJitRuleId[]]))
          .default([]),
      }),
      /** A run with no token and no tool event for this long is aborted. */
      progressTimeoutMs: positiveMs.default(120_000),
      /**
       * Transcript events loaded into each run at most (since the last compaction); compaction
       * keeps what they cost in tokens under the model's window.
       */
      historyLimit: z.number().int().positive().default(2_000),
      /** Tokens of one workspace context file in the prompt (AGENTS.md, …); longer ones are cut. */
      contextFileMaxTokens: z.number().int().positive().default(5_000),
      /** Tokens of all workspace context files together. */
      contextMaxTokens: z.number().int().positive().default(15_000),
      /** IANA timezone of the prompt's date and time and of daily notes; default the machine's. */
      timezone: z
        .string()
        .refine(validTimeZone, { message: "expected an IANA timezone such as Europe/Berlin or UTC" })
        .optional(),
      /**
       * Before each turn in a private chat, search memory for the newest message and put up to
       * three lines in the prompt. Off by default: it costs about 1.7 ms of gateway time a turn
       * (see the issue notes); the agent can always search with memory_search.
       */
      memoryRecall: z.boolean().default(false),
      /** When and how a long conversation is compacted. */
      compaction: section({
        /** Share of the model's context window past which a turn compacts first. */
        threshold: z.number().min(0.2).max(0.95).default(0.8),
        /** Tokens of the newest turns always kept verbatim (at most a quarter of the window). */
        keepRecentTokens: z.number().int().min(1_000).default(20_000),
        /** A cheaper model for summaries, as provider/model; default the session's. */
        model: modelRef.optional(),
      }),
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
    providers: providersSettings,
    limits: limitsSettings,
    prices: pricesSettings,
    /**
     * Context window and output limit per model, by `provider/model` glob, over the built-in
     * table (current Anthropic and OpenAI models; an unknown model gets a conservative 32k).
     */
    models: modelLimitsSettings,
    lanes: section({
      /** Concurrent model calls across all sessions. */
      maxConcurrent: z.number().int().min(1).max(256).default(4),
      /** Slots background work (cron, heartbeat) may never take. */
      reservedForHuman: z.number().int().min(0).default(1),
      /**
       * Concurrent model calls across every gateway sharing the store (a shared API key's
       * concurrency), enforced with leased permits in the store, person first across nodes;
       * `reservedForHuman` applies to it too (at most `clusterMaxConcurrent - 1`). Absent: no
       * cluster cap and no store query per model call; `maxConcurrent` still caps each node.
       */
      clusterMaxConcurrent: z.number().int().min(1).max(100_000).optional(),
    }),
    session: section({
      /** How direct messages map to sessions. */
      dmScope: z
        .enum(["per-channel-peer", "per-peer", "per-account-channel-peer", "main"])
        .default("per-channel-peer"),
      /** What a message does when its session is busy. */
      queueMode: z.enum(["followup", "collect", "steer"]).default("followup"),
    }),
    heartbeat: heartbeatSettings,
    cron: cronSettings,
    /** Multi-day assignments (`/task`, `switchyard task`): each run bounded, the whole bounded. */
    assignments: assignmentsSettings,
    /** Which tools a turn may use (harness/tools/tool-policy.ts; profiles in tool-groups.ts). */
    tools: section({
      /** Named set of groups: full (all), coding, messaging, minimal. Default full. */
      profile: z
        .enum(Object.keys(TOOL_PROFILES) as [ToolProfile, ...ToolProfile[]])
        .default(DEFAULT_TOOL_POLICY.profile),
      /** Tool names or group:<name>; empty: the profile's set. */
      allow: toolRules.default([]),
      /** Tool names or group:<name>; always wins. */
      deny: toolRules.default([]),
      /** Narrower sets per channel: `{ discord: { deny: [group:exec] } }`. */
      byChannel: z.record(z.string(), toolRuleSet).default({}),
      /** Any group chat; default no exec and no file writes. */
      groups: toolRuleSet.default({ deny: [...(DEFAULT_TOOL_POLICY.groups.deny ?? [])] }),
      /** The `exec` tool (config/tools-schema.ts); off by default. */
      exec: execSettings,
      /** `web_fetch` and `web_search` (capabilities/web/settings.ts); fetch on by default. */
      web: webSettings,
    }),
    /** MCP servers whose tools the agent is offered (capabilities/mcp/settings.ts). */
    /**
     * Where the gateway's state lives: `sqlite` (default), the file `<home>/switchyard.db` on
     * this machine; `postgres`, a PostgreSQL database that gateways on several machines share.
     */
    store: section({
      engine: z.enum(["sqlite", "postgres"]).default("sqlite"),
      /** `postgres://user:pass@host:5432/database` (engine postgres), usually `${DATABASE_URL}`. */
      url: z.string().min(1).optional(),
      /** Connections this process keeps to PostgreSQL. */
      poolSize: z.number().int().min(1).max(100).default(10),
    }).superRefine((s, ctx) => {
      if (s.engine === "postgres" && s.url === undefined)
        ctx.addIssue({
          code: "custom",
          path: ["url"],
          message: "engine is postgres but no url is set: add store.url (e.g. ${DATABASE_URL})",
          params: { namesValues: true },
        });
      else if (s.url !== undefined && !/^postgres(ql)?:\/\//.test(s.url))
        ctx.addIssue({
          code: "custom",
          path: ["url"],
          message: "expected a postgres:// URL (postgres://user:pass@host:5432/database)",
        });
    }),
    mcp: mcpSettings,
    /** Programs run at fixed points of a turn (capabilities/hooks/settings.ts); default none. */
    hooks: hookSettings,
    /** Helpers a turn may spawn, and their limits (capabilities/subagents/settings.ts). */
    subagents: subagentSettings,
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
    /** `channels.<name>`: one section per channel module, its schema the module's own. */
    channels: section(channelSettings(modules)),
  }).superRefine((config, ctx) => {
    for (const [path, message] of toolPolicyProblems(config.tools)) {
      ctx.addIssue({ code: "custom", path: ["tools", ...path], message, params: { namesValues: true } });
    }
    // Every model reference names a configured provider.
    const refs: Array<[string, (string | number)[]]> = [
      [config.agent.model, ["agent", "model"]],
      ...config.agent.fallbacks.map((ref, i): [string, (string | number)[]] => [
        ref,
        ["agent", "fallbacks", i],
      ]),
    ];
    const known = configuredProviderNames(config.providers);
    for (const [ref, path] of refs) {
      const slash = ref.indexOf("/");
      if (slash < 0) continue; // not a reference at all: the pattern's own message says so
      const name = ref.slice(0, slash);
      if (name === "simulator" || known.includes(name)) continue;
      ctx.addIssue({
        code: "custom",
        path,
        message: `"${ref}" names provider "${name}", which is not configured (configured: ${known.join(", ")}; add providers.${name} with type and baseUrl)`,
        params: { namesValues: true },
      });
    }
  });
}

/** The provider names `providers:` configures: the built-ins and every named one. */
export function configuredProviderNames(providers: Record<string, unknown>): string[] {
  return Object.keys(providers).filter((k) => !(RESERVED_PROVIDER_KEYS as readonly string[]).includes(k));
}

/** The configuration schema of the registry's channel modules. */
export const configSchema = buildConfigSchema(channelModules);

/** The validated configuration with every default applied. */
export type Config = z.infer<typeof configSchema>;

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
