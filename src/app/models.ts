/**
 * Who answers model calls: the provider `agent.model` names (built from the provider registry,
 * wrapped in its retry policy), or the built-in simulator speaking that provider's protocol when
 * no key is configured; behind the model router.
 */
import type { Config } from "../config/schema.js";
import { chooseProvider } from "../config/provider-choice.js";
import { createHttpFetch } from "../harness/providers/http-fetch.js";
import { ModelRouter } from "../harness/providers/model-router.js";
import { providerModules } from "../harness/providers/registry.js";
import { RetryingProvider } from "../harness/providers/retrying-provider.js";
import type { ModelProvider } from "../harness/providers/types.js";
import type { ModelSimulator } from "../simulator/model-simulator.js";
import { type Clock, systemClock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** What building the model router needs. */
export interface ModelRouterSetup {
  config: Config;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  clock?: Clock;
  /** Test seam: this provider instead of the registry's. */
  provider?: ModelProvider;
}

/**
 * The provider `agent.model` names (from the provider registry, with its retries), or the
 * built-in simulator speaking its protocol when no key is configured; behind the model router.
 */
export async function buildModelRouter(
  options: ModelRouterSetup,
  onOpened: (what: string, close: () => unknown) => void,
): Promise<{ router: ModelRouter; simulator: ModelSimulator | undefined; provider: ModelProvider }> {
  const { config, logger } = options;
  const choice = chooseProvider(config, options.env);
  if (options.provider) {
    return {
      router: new ModelRouter({ provider: options.provider, model: choice.model }),
      simulator: undefined,
      provider: options.provider,
    };
  }
  const module = providerModules[choice.provider];
  let simulator: ModelSimulator | undefined;
  let baseUrl = choice.baseUrl;
  let apiKey = choice.apiKey;
  if (choice.simulated) {
    const { ModelSimulator } = await import("../simulator/model-simulator.js");
    const sim = new ModelSimulator({ keepRequests: 20 });
    simulator = sim;
    onOpened("model simulator", () => sim.close());
    await sim.start();
    baseUrl = module.simulatorBaseUrl(sim.url);
    apiKey = "simulated-no-key";
  }
  const maxTokensField = config.providers.openai.maxTokensField;
  const inner = module.create({
    apiKey: apiKey ?? "no-key",
    ...(baseUrl ? { baseUrl } : {}),
    requestTimeoutMs: choice.requestTimeoutMs,
    simulated: choice.simulated,
    logger: logger.child({ name: `provider.${choice.provider}` }),
    ...(maxTokensField ? { maxTokensField } : {}),
    // HTTPS_PROXY / NO_PROXY from the environment; gzip and br responses decoded.
    fetch: createHttpFetch({ env: options.env }),
  });
  const provider = new RetryingProvider(inner, {
    clock: options.clock ?? systemClock,
    logger: logger.child({ name: "provider.retry" }),
  });
  if (provider.simulated) {
    logger.warn(
      { model: config.agent.model },
      "no model API key configured: replies are SIMULATED by the built-in model simulator (set ANTHROPIC_API_KEY or OPENAI_API_KEY for real answers)",
    );
  }
  return { router: new ModelRouter({ provider, model: choice.model }), simulator, provider };
}
