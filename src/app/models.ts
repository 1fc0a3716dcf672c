/**
 * Who answers model calls: the model router over the chain `agent.model` + `agent.fallbacks`,
 * each provider's auth profiles (adapters built from the provider registry, one per profile,
 * lazily), their health written behind to the store, and the usage meter for the caps — or the
 * built-in simulator speaking the primary's protocol when no key is configured, booked as provider
 * `simulator` at no cost (see simulatedEntry).
 */
import type { Config } from "../config/schema.js";
import { type ChainEntry, chooseProvider, resolveProviders } from "../config/provider-choice.js";
import { AuthProfiles } from "../harness/models/auth-profiles.js";
import { ModelRouter, type RouterEvent } from "../harness/models/model-router.js";
import { PriceTable } from "../harness/models/prices.js";
import { UsageMeter } from "../harness/models/usage-meter.js";
import { createHttpFetch } from "../harness/providers/http-fetch.js";
import { providerModules } from "../harness/providers/registry.js";
import type { ModelProvider } from "../harness/providers/types.js";
import type { ModelSimulator } from "../simulator/model-simulator.js";
import type { GatewayMetrics } from "../gateway/metrics.js";
import type { Store } from "../store/types.js";
import { type Clock, systemClock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** What building the model router needs. */
export interface ModelRouterSetup {
  config: Config;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  store?: Pick<Store, "authProfiles" | "usage">;
  clock?: Clock;
  /** Test seam: this provider answers for every profile instead of the registry's adapters. */
  provider?: ModelProvider;
  /** Where calls, failovers and cooldowns are counted. */
  metrics?: GatewayMetrics;
}

/** Counts router events in the gateway's metrics. */
function countIn(metrics: GatewayMetrics): (event: RouterEvent) => void {
  return (event) => {
    if (event.type === "failover") {
      metrics.failovers.inc({ from: event.from, to: event.to });
      return;
    }
    const labels = { provider: event.provider, model: event.model, profile: event.profileId };
    metrics.modelCalls.inc({ ...labels, outcome: event.outcome });
    if (event.tokens > 0) metrics.modelCallTokens.inc(labels, event.tokens);
    if (event.costUsd > 0) metrics.modelCostUsd.inc(labels, event.costUsd);
  };
}

/**
 * The chain entry of the simulator standing in for `entry`: provider `simulator`, model the one it
 * stands in for (`anthropic/claude-sonnet-5-5` → `simulator/claude-sonnet-5-5`), so usage rows,
 * metrics and status never book a simulated reply as a call to a real, priced model.
 */
function simulatedEntry(entry: ChainEntry): ChainEntry {
  if (entry.provider === "simulator") return entry;
  return { ref: `simulator/${entry.model}`, provider: "simulator", model: entry.model };
}

/** The router, the simulator when it answers, and the usage meter (see the file header). */
export async function buildModelRouter(
  options: ModelRouterSetup,
  onOpened: (what: string, close: () => unknown) => void,
): Promise<{ router: ModelRouter; simulator: ModelSimulator | undefined; usage: UsageMeter }> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const choice = chooseProvider(config, options.env);
  const usage = new UsageMeter({
    prices: new PriceTable(config.prices),
    limits: config.limits,
    ...(options.store ? { repo: options.store.usage } : {}),
    clock,
    logger: logger.child({ name: "usage" }),
  });
  const authProfiles = new AuthProfiles({
    cooldowns: config.providers.cooldowns,
    ...(options.store ? { repo: options.store.authProfiles } : {}),
    clock,
    logger: logger.child({ name: "auth" }),
    onCooldown: (provider, profileId, kind, ms) =>
      options.metrics?.profileCooldown.inc({ provider, profile: profileId, kind }, ms / 1000),
  });
  const common = {
    authProfiles,
    usage,
    maxWaitMs: Math.max(0, Math.min(config.providers.maxWaitMs, config.agent.progressTimeoutMs - 1_000)),
    fallbackRetryPrimaryMs: config.agent.fallbackRetryPrimaryMs,
    clock,
    logger: logger.child({ name: "router" }),
    ...(options.metrics ? { onEvent: countIn(options.metrics) } : {}),
  };
  const profiles: Record<string, string[]> = {};
  for (const p of resolveProviders(config, options.env))
    if (!p.unconfigured) profiles[p.name] = p.profiles.map((x) => x.id);

  let simulator: ModelSimulator | undefined;
  let router: ModelRouter;
  if (options.provider) {
    const provider = options.provider;
    for (const e of choice.chain) profiles[e.provider] ??= ["default"];
    router = new ModelRouter({
      ...common,
      chain: choice.chain,
      profiles,
      connect: () => provider,
      simulated: provider.simulated,
    });
  } else if (choice.simulated) {
    const { ModelSimulator } = await import("../simulator/model-simulator.js");
    const sim = new ModelSimulator({ keepRequests: 20 });
    simulator = sim;
    onOpened("model simulator", () => sim.close());
    await sim.start();
    const module = providerModules[choice.primaryType];
    const entry = simulatedEntry(choice.chain[0] as (typeof choice.chain)[number]);
    router = new ModelRouter({
      ...common,
      // The simulator is no credential: its health lives in memory only (never in `auth status`).
      authProfiles: new AuthProfiles({ cooldowns: config.providers.cooldowns, clock }),
      chain: [entry],
      profiles: { [entry.provider]: ["default"] },
      simulated: true,
      connect: () =>
        module.create({
          apiKey: "simulated-no-key",
          baseUrl: module.simulatorBaseUrl(sim.url),
          requestTimeoutMs: 60_000,
          simulated: true,
          logger: logger.child({ name: `provider.${choice.primaryType}` }),
        }),
    });
    logger.warn(
      { model: config.agent.model },
      "no model API key configured: replies are SIMULATED by the built-in model simulator (set ANTHROPIC_API_KEY or OPENAI_API_KEY for real answers)",
    );
  } else {
    const resolved = new Map(resolveProviders(config, options.env).map((p) => [p.name, p]));
    // HTTPS_PROXY / NO_PROXY from the environment; gzip and br responses decoded. One transport
    // (one pool of keep-alive sockets) for every adapter.
    const fetch = createHttpFetch({ env: options.env });
    router = new ModelRouter({
      ...common,
      chain: choice.chain,
      profiles,
      connect: (name, profileId) => {
        const p = resolved.get(name);
        const profile = p?.profiles.find((x) => x.id === profileId);
        if (!p || !profile) throw new Error(`no auth profile ${name}:${profileId}`);
        return providerModules[p.type].create({
          apiKey: profile.apiKey,
          ...(p.baseUrl ? { baseUrl: p.baseUrl } : {}),
          requestTimeoutMs: p.requestTimeoutMs,
          simulated: false,
          logger: logger.child({ name: `provider.${name}`, profile: profileId }),
          ...(p.maxTokensField ? { maxTokensField: p.maxTokensField } : {}),
          fetch,
        });
      },
    });
    for (const s of choice.skipped) logger.warn({ model: s.ref }, `fallback left out: ${s.reason}`);
  }
  await authProfiles.load();
  await usage.load();
  onOpened("model router", () => router.close());
  return { router, simulator, usage };
}
