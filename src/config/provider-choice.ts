/**
 * Which provider answers `agent.model`, with which key: the configuration's `providers.<name>`
 * settings, else the vendor's environment variable (named by the provider registry). With
 * neither a key nor a base URL — or with `simulator/…` — the built-in simulator answers.
 */
import { type ModelRefProvider, parseModelRef, type ProviderName } from "../harness/providers/model-ref.js";
import { providerModules } from "../harness/providers/registry.js";
import type { Config } from "./schema.js";

/** Which provider answers, resolved from config and environment. */
export interface ProviderChoice {
  provider: ProviderName;
  model: string;
  apiKey: string | undefined;
  baseUrl: string | undefined;
  requestTimeoutMs: number;
  /** True when no key (and no base URL) is configured: the built-in simulator answers. */
  simulated: boolean;
}

/** The environment variable a provider's key is read from when the config names none. */
export function providerKeyEnv(provider: ProviderName): string {
  return providerModules[provider].keyEnv;
}

/** A provider's API key: `providers.<name>.apiKey`, else its environment variable (if not empty). */
export function providerApiKey(
  config: Config,
  env: NodeJS.ProcessEnv,
  provider: ProviderName,
): string | undefined {
  return config.providers[provider].apiKey ?? (env[providerKeyEnv(provider)] || undefined);
}

/** Which provider answers `agent.model`, with its key and base URL (see the file header). */
export function chooseProvider(config: Config, env: NodeJS.ProcessEnv): ProviderChoice {
  const ref = parseModelRef(config.agent.model);
  if (ref.provider === "simulator") {
    return {
      provider: "anthropic",
      model: ref.model,
      apiKey: undefined,
      baseUrl: undefined,
      requestTimeoutMs: 60_000,
      simulated: true,
    };
  }
  const provider: ProviderName = ref.provider;
  const settings = config.providers[provider];
  const apiKey = providerApiKey(config, env, provider);
  return {
    provider,
    model: ref.model,
    apiKey,
    baseUrl: settings.baseUrl,
    requestTimeoutMs: settings.requestTimeoutMs,
    simulated: !apiKey && !settings.baseUrl,
  };
}

/** True for the `simulator/…` model references (the simulator chosen on purpose). */
export function isSimulatorRef(provider: ModelRefProvider): boolean {
  return provider === "simulator";
}
