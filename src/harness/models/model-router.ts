/**
 * The seam between the harness and the providers: the harness asks for a model call, the router
 * decides who answers it — which model of the chain (`agent.model`, then `agent.fallbacks`) and
 * which auth profile of that model's provider — so the harness never knows which key or model
 * answered: the stream says so with an `attempt` event before every attempt.
 *
 * A call that fails with a kind that says something about the key or the service (rate limit,
 * overload, timeout, network, auth, billing) cools that profile (cooldown.ts) and goes on: first
 * the other profiles of the same model, then the next model of the chain. An invalid request or
 * a context overflow ends the call (overflow is compaction's business). When every profile of
 * every model is cooling, the call waits for the one that frees soonest (`retry_wait`, so the
 * harness gives its model slot back), at most `maxWaitMs` in all.
 *
 * Per session: the profile that answered is kept while it is healthy (prompt-cache locality);
 * after a fallback the session stays on the fallback and tries the primary again after
 * `fallbackRetryPrimaryMs`; a model chosen with `/model` is strict (no fallback, it fails
 * visibly); the first request to a model the session has not used carries a short note.
 */
import { type Clock, systemClock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { ProviderError } from "../providers/provider-error.js";
import { MODEL_REF_EXPECTED, MODEL_REF_PATTERN, parseModelRef } from "../providers/model-ref.js";
import type { ModelProvider, ModelRequest, ProviderEvent } from "../providers/types.js";
import { AuthProfiles } from "./auth-profiles.js";
import { TriedModels, exhausted } from "./chain-failure.js";
import { type CooldownTable, DEFAULT_COOLDOWNS, isCoolingKind } from "./cooldown.js";
import { type RouteEntry, SessionRoutes } from "./session-routes.js";
import { totalTokens } from "./prices.js";
import type { UsageContext, UsageMeter } from "./usage-meter.js";

/** A model call as the harness makes it: no model name (the router's choice). */
export type ModelCall = Omit<ModelRequest, "model">;

/** Who a call is for. */
export interface CallContext extends UsageContext {
  /** A model the session chose with `/model` (strict: no fallback). */
  modelOverride?: string | null | undefined;
}

/** What the harness calls models through. */
export interface ModelAccess {
  /** True when the built-in simulator answers (no real model). */
  readonly simulated: boolean;
  /** The model a session is on now, as `provider/model` (for the prompt). */
  currentRef?(sessionKey: string, modelOverride?: string | null): string;
  /**
   * The ProviderEvent contract, with `attempt` before each attempt and `attempt_failed` after
   * one that another follows. Never throws.
   */
  stream(call: ModelCall, signal: AbortSignal, ctx?: CallContext): AsyncIterable<ProviderEvent>;
}

export type { RouteEntry };

/** What the router tells metrics. */
export type RouterEvent =
  | {
      type: "call";
      provider: string;
      model: string;
      profileId: string;
      outcome: string;
      tokens: number;
      costUsd: number;
    }
  | { type: "failover"; from: string; to: string };

/** Options of {@link ModelRouter}. */
export interface ModelRouterOptions {
  /** The primary, then the fallbacks. */
  chain: RouteEntry[];
  /** Profile ids of each provider the chain (or a `/model` choice) may use, in config order. */
  profiles: Readonly<Record<string, readonly string[]>>;
  /** The adapter for one provider and profile (built once, cached by the router). */
  connect(provider: string, profileId: string): ModelProvider;
  /** Cooldown curves; default the config defaults. */
  cooldowns?: CooldownTable;
  /** Profile health (shared with status); default an in-memory one. */
  authProfiles?: AuthProfiles;
  /** Caps and prices; default none (nothing is capped or priced). Not used when `simulated`. */
  usage?: UsageMeter;
  /** Longest total wait for cooling profiles in one call; default 90_000 ms. */
  maxWaitMs?: number;
  /** After a fallback, the session tries the primary again this long later; default 600_000 ms. */
  fallbackRetryPrimaryMs?: number;
  /** True when the simulator answers: calls are free, so no cap applies and none is fed. */
  simulated?: boolean;
  clock?: Clock;
  logger?: Logger;
  onEvent?(event: RouterEvent): void;
}

/** Owns the choice of model and auth profile for every model call (see the file header). */
export class ModelRouter implements ModelAccess {
  readonly simulated: boolean;
  readonly authProfiles: AuthProfiles;
  readonly #o: ModelRouterOptions & { clock: Clock; maxWaitMs: number; fallbackRetryPrimaryMs: number };
  readonly #adapters = new Map<string, ModelProvider>();
  readonly #routes: SessionRoutes;

  constructor(options: ModelRouterOptions) {
    const first = options.chain[0];
    if (!first)
      throw new TypeError("ModelRouter.chain: got an empty chain, expected at least the primary model");
    for (const e of options.chain) {
      if (e.model === "") throw new TypeError(`ModelRouter.chain: "${e.ref}" has an empty model name`);
      if (!options.profiles[e.provider]?.length)
        throw new TypeError(
          `ModelRouter.profiles: provider "${e.provider}" of "${e.ref}" has no auth profile`,
        );
    }
    this.#o = { clock: systemClock, maxWaitMs: 90_000, fallbackRetryPrimaryMs: 600_000, ...options };
    this.simulated = options.simulated ?? false;
    this.#routes = new SessionRoutes({
      chain: options.chain,
      fallbackRetryPrimaryMs: this.#o.fallbackRetryPrimaryMs,
      clock: this.#o.clock,
      logger: options.logger,
    });
    this.authProfiles =
      options.authProfiles ??
      new AuthProfiles({ cooldowns: options.cooldowns ?? DEFAULT_COOLDOWNS, clock: this.#o.clock });
  }

  /** A router with one provider, one model and one profile (tests, and the `provider` seam). */
  static single(
    provider: ModelProvider,
    model: string,
    options: { profileId?: string; clock?: Clock } = {},
  ): ModelRouter {
    const profileId = options.profileId ?? "default";
    return new ModelRouter({
      chain: [{ ref: `${provider.id}/${model}`, provider: provider.id, model }],
      profiles: { [provider.id]: [profileId] },
      connect: () => provider,
      simulated: provider.simulated,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  }

  /** The primary model and its first profile (for status lines). */
  get primary(): { provider: string; model: string; profileId: string } {
    const e = this.#o.chain[0] as RouteEntry;
    return {
      provider: e.provider,
      model: e.model,
      profileId: this.#o.profiles[e.provider]?.[0] ?? "default",
    };
  }

  /** The configured chain, primary first. */
  get chain(): readonly RouteEntry[] {
    return this.#o.chain;
  }

  /** The model a session is on now (its `/model` choice, else where the chain has it). */
  currentRef(sessionKey: string, modelOverride?: string | null): string {
    if (modelOverride) return modelOverride;
    return (
      this.#routes.entries(this.#routes.peek(sessionKey)).at(0)?.ref ?? (this.#o.chain[0] as RouteEntry).ref
    );
  }

  /** Why `ref` cannot be chosen with `/model`, or undefined when it can. */
  refusal(ref: string): string | undefined {
    if (!MODEL_REF_PATTERN.test(ref)) return `"${ref}" is not a model reference (${MODEL_REF_EXPECTED})`;
    const { provider } = parseModelRef(ref);
    if (this.simulated)
      return "replies are simulated (no model API key is configured), so there is no model to choose";
    if (!this.#o.profiles[provider]?.length) {
      const known = Object.keys(this.#o.profiles).join(", ");
      return `provider "${provider}" is not configured (configured: ${known})`;
    }
    return undefined;
  }

  async *stream(call: ModelCall, signal: AbortSignal, ctx?: CallContext): AsyncIterable<ProviderEvent> {
    const clock = this.#o.clock;
    const sessionKey = ctx?.sessionKey ?? "";
    // Simulated calls cost nothing: no cap stops them and none is fed by them.
    const meter = this.simulated ? undefined : this.#o.usage;
    const refusal = ctx && meter ? await meter.check(ctx) : undefined;
    if (refusal) {
      yield { type: "error", error: new ProviderError("budget", refusal.reason) };
      return;
    }
    const route = this.#routes.get(sessionKey);
    const strict = ctx?.modelOverride ? ctx.modelOverride : undefined;
    const entries = strict ? [{ ref: strict, ...parseModelRef(strict) }] : this.#routes.entries(route);
    const budgetStart = clock.now();
    let attempt = 0;
    let waitedMs = 0;
    let pendingWaitMs = 0;
    let last: ProviderError | undefined;
    let lastRef: string | undefined;
    const tried = new TriedModels();
    const maxAttempts = 3 + 2 * entries.reduce((n, e) => n + (this.#o.profiles[e.provider]?.length ?? 0), 0);

    while (attempt < maxAttempts) {
      if (signal.aborted) {
        yield { type: "error", error: new ProviderError("aborted", "aborted", { cause: signal.reason }) };
        return;
      }
      const pick = this.#pick(entries, route);
      if (!pick) {
        // Everything is cooling: wait for the soonest, if the budget allows.
        const soonest = this.#soonest(entries);
        const waitMs = Math.max(0, soonest - clock.now());
        if (waitedMs + waitMs > this.#o.maxWaitMs) {
          yield { type: "error", error: tried.final(exhausted(last, entries, soonest, clock.now())) };
          return;
        }
        const reason = last ?? new ProviderError("rate_limit", "every auth profile is cooling down");
        yield { type: "retry_wait", attempt, waitMs, error: reason };
        try {
          await clock.sleep(waitMs, signal);
        } catch (err) {
          yield {
            type: "error",
            error: new ProviderError("aborted", "aborted while waiting for a cooling auth profile", {
              cause: err,
            }),
          };
          return;
        }
        waitedMs += waitMs;
        pendingWaitMs += waitMs;
        yield { type: "retry_resume", attempt: attempt + 1 };
        continue;
      }
      const { entry, profileId } = pick;
      attempt++;
      if (lastRef !== undefined && lastRef !== entry.ref)
        this.#o.onEvent?.({ type: "failover", from: lastRef, to: entry.ref });
      lastRef = entry.ref;
      yield {
        type: "attempt",
        provider: entry.provider,
        model: entry.model,
        profileId,
        attempt,
        at: clock.now(),
        waitMs: pendingWaitMs,
      };
      pendingWaitMs = 0;
      // A model taking over a conversation another model answered is told so, once.
      const before =
        route.lastRef ??
        (call.messages.some((m) => m.role === "assistant") ? this.#o.chain[0]?.ref : undefined);
      const note = before && before !== entry.ref ? switchNote(before, entry.ref) : "";
      const request: ModelRequest = {
        ...call,
        model: entry.model,
        ...(note ? { system: `${call.system}${note}` } : {}),
      };
      let failure: ProviderError | undefined;
      let tokens = 0;
      let costUsd = 0;
      try {
        for await (const event of this.#adapter(entry.provider, profileId).stream(request, signal)) {
          if (event.type === "error") {
            failure = event.error;
            break;
          }
          if (event.type === "usage") {
            const cost = meter?.record(sessionKey, entry.ref, event.usage) ?? 0;
            tokens += totalTokens(event.usage);
            costUsd += cost;
            yield { ...event, costUsd: cost };
            continue;
          }
          yield event;
        }
      } catch (err) {
        failure = new ProviderError("unknown", `${entry.provider} stream threw`, {
          cause: err,
          provider: entry.provider,
        });
      }
      const outcome = failure?.kind ?? "ok";
      this.#o.onEvent?.({
        type: "call",
        provider: entry.provider,
        model: entry.model,
        profileId,
        outcome,
        tokens,
        costUsd,
      });
      if (!failure) {
        this.authProfiles.succeeded(entry.provider, profileId);
        this.#routes.answered(route, sessionKey, entry, profileId, strict !== undefined);
        return;
      }
      last = failure;
      if (failure.kind === "aborted" || signal.aborted) {
        yield { type: "error", error: failure };
        return;
      }
      this.authProfiles.failed(entry.provider, profileId, failure);
      tried.failed(entry.ref, failure.kind);
      route.pins.delete(entry.provider);
      if (!isCoolingKind(failure.kind)) {
        yield { type: "error", error: tried.final(failure) };
        return;
      }
      this.#o.logger?.warn(
        { provider: entry.provider, model: entry.model, profile: profileId, kind: failure.kind, attempt },
        "model call failed; trying the next auth profile or model",
      );
      yield { type: "attempt_failed", error: failure };
    }
    yield {
      type: "error",
      error: tried.final(
        last ??
          new ProviderError("unknown", `gave up after ${attempt} attempts (${clock.now() - budgetStart} ms)`),
      ),
    };
  }

  /** Writes profile state behind one last time and stops its sync. */
  async close(): Promise<void> {
    await this.authProfiles.close();
    this.#o.usage?.close();
  }

  /** The first model with a profile not cooling, and that profile. */
  #pick(
    entries: RouteEntry[],
    route: { pins: Map<string, string> },
  ): { entry: RouteEntry; profileId: string } | undefined {
    const now = this.#o.clock.now();
    for (const entry of entries) {
      const ids = this.#o.profiles[entry.provider] ?? [];
      const ordered = this.authProfiles.order(entry.provider, ids, route.pins.get(entry.provider));
      const profileId = ordered.find((id) => this.authProfiles.coolingUntil(entry.provider, id, now) === 0);
      if (profileId) return { entry, profileId };
    }
    return undefined;
  }

  /**
   * Loads the primary model's SDK ahead of its first call. A restart that redoes turns calls the
   * model at once; loaded here, before a platform SDK's long synchronous load holds the event loop,
   * the call goes out while the channels start instead of after.
   */
  async prepare(): Promise<void> {
    const entry = this.#o.chain[0];
    const profileId = entry ? this.#o.profiles[entry.provider]?.[0] : undefined;
    if (!entry || !profileId) return;
    try {
      await this.#adapter(entry.provider, profileId).prepare?.();
    } catch {
      // connect failed: the call itself reports it
    }
  }

  /** When the first profile of any of `entries` frees. */
  #soonest(entries: RouteEntry[]): number {
    let soonest = Number.POSITIVE_INFINITY;
    for (const entry of entries)
      for (const id of this.#o.profiles[entry.provider] ?? [])
        soonest = Math.min(soonest, this.authProfiles.coolingUntil(entry.provider, id));
    return soonest;
  }

  #adapter(provider: string, profileId: string): ModelProvider {
    const k = `${provider}\u0000${profileId}`;
    let adapter = this.#adapters.get(k);
    if (!adapter) {
      adapter = this.#o.connect(provider, profileId);
      this.#adapters.set(k, adapter);
    }
    return adapter;
  }
}

/** The note the first request to a new model carries. */
function switchNote(before: string, now: string): string {
  return `\n\n[Note: earlier replies in this conversation came from the model ${before}; you (${now}) are taking over. The transcript is yours: continue it as your own.]`;
}
