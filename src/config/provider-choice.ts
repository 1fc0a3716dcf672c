/**
 * Who answers model calls, resolved from config and environment: every configured provider with
 * its auth profiles (`providers.<name>.profiles`, else `apiKey` as profile `default`, else the
 * vendor's environment variable), and the model chain (`agent.model`, then `agent.fallbacks`).
 * With neither a key nor a base URL for the primary — or with `simulator/…` — the built-in
 * simulator answers, and the chain is that one entry.
 */
import type { ProviderType } from "../harness/providers/model-ref.js";
import { parseModelRef } from "../harness/providers/model-ref.js";
import { providerModules } from "../harness/providers/registry.js";
import type { NamedProviderSettings } from "./providers-schema.js";
import { type Config, configuredProviderNames } from "./schema.js";

/** One credential, resolved. */
export interface ResolvedProfile {
  id: string;
  apiKey: string;
  /** Where the key came from, for messages (never the key). */
  source: string;
}

/** A configured provider, resolved. */
export interface ResolvedProvider {
  name: string;
  type: ProviderType;
  baseUrl: string | undefined;
  requestTimeoutMs: number;
  maxTokensField: NamedProviderSettings["maxTokensField"];
  /** Its credentials; a keyless server with a base URL has one profile `default` (key "no-key"). */
  profiles: ResolvedProfile[];
  /** True when neither a key nor a base URL is configured: only the simulator could answer. */
  unconfigured: boolean;
}

/** One model of the chain. */
export interface ChainEntry {
  ref: string;
  provider: string;
  model: string;
}

/** Which models answer, in order, and whether the simulator stands in for them. */
export interface ProviderChoice {
  /** The primary and the usable fallbacks, in order. */
  chain: ChainEntry[];
  /** True when the built-in simulator answers (speaking the primary's protocol). */
  simulated: boolean;
  /** The primary's provider type (the simulator's protocol when simulated). */
  primaryType: ProviderType;
  /** Fallbacks left out, with the reason (their provider has no key). */
  skipped: Array<{ ref: string; reason: string }>;
}

/** The environment variable a provider type's key is read from when the config names none. */
export function providerKeyEnv(type: ProviderType): string {
  return providerModules[type].keyEnv;
}

/** Settings of `providers.<name>`, or undefined when it is not configured. */
function settingsOf(
  config: Config,
  name: string,
): (NamedProviderSettings & { type: ProviderType }) | undefined {
  if (!configuredProviderNames(config.providers).includes(name)) return undefined;
  const raw = (config.providers as unknown as Record<string, NamedProviderSettings>)[name];
  if (!raw) return undefined;
  const type: ProviderType = name === "anthropic" || name === "openai" ? name : raw.type;
  return { ...raw, type };
}

/** A configured provider with its profiles, or undefined when `name` is not configured. */
export function resolveProvider(
  config: Config,
  env: NodeJS.ProcessEnv,
  name: string,
): ResolvedProvider | undefined {
  const s = settingsOf(config, name);
  if (!s) return undefined;
  const builtin = name === "anthropic" || name === "openai";
  let profiles: ResolvedProfile[];
  if (s.profiles) {
    profiles = s.profiles.map((p, i) => ({
      id: p.id,
      apiKey: p.apiKey,
      source: `providers.${name}.profiles[${i}]`,
    }));
  } else if (s.apiKey) {
    profiles = [{ id: "default", apiKey: s.apiKey, source: `providers.${name}.apiKey` }];
  } else {
    const envName = builtin ? providerKeyEnv(s.type) : undefined;
    const fromEnv = envName ? env[envName] || undefined : undefined;
    if (fromEnv && envName) profiles = [{ id: "default", apiKey: fromEnv, source: envName }];
    else profiles = s.baseUrl ? [{ id: "default", apiKey: "no-key", source: "no key (keyless server)" }] : [];
  }
  return {
    name,
    type: s.type,
    baseUrl: s.baseUrl,
    requestTimeoutMs: s.requestTimeoutMs,
    maxTokensField: s.maxTokensField,
    profiles,
    unconfigured: profiles.length === 0,
  };
}

/** Every configured provider, resolved: the built-ins first, then the named ones. */
export function resolveProviders(config: Config, env: NodeJS.ProcessEnv): ResolvedProvider[] {
  return configuredProviderNames(config.providers).flatMap(
    (name) => resolveProvider(config, env, name) ?? [],
  );
}

/** The model chain (see the file header). */
export function chooseProvider(config: Config, env: NodeJS.ProcessEnv): ProviderChoice {
  const primary = parseModelRef(config.agent.model);
  const entry = (ref: string): ChainEntry => {
    const { provider, model } = parseModelRef(ref);
    return { ref, provider, model };
  };
  if (primary.provider === "simulator") {
    return { chain: [entry(config.agent.model)], simulated: true, primaryType: "anthropic", skipped: [] };
  }
  const resolved = resolveProvider(config, env, primary.provider);
  const primaryType = resolved?.type ?? "anthropic";
  if (!resolved || resolved.unconfigured) {
    return { chain: [entry(config.agent.model)], simulated: true, primaryType, skipped: [] };
  }
  const chain = [entry(config.agent.model)];
  const skipped: ProviderChoice["skipped"] = [];
  for (const ref of config.agent.fallbacks) {
    if (chain.some((c) => c.ref === ref)) continue;
    const e = entry(ref);
    const p = e.provider === "simulator" ? undefined : resolveProvider(config, env, e.provider);
    if (!p || p.unconfigured) {
      skipped.push({
        ref,
        reason:
          e.provider === "simulator"
            ? "the simulator is never a fallback for a real model"
            : `providers.${e.provider} has no key (set its apiKey or profiles${p && (e.provider === "anthropic" || e.provider === "openai") ? `, or ${providerKeyEnv(p.type)}` : ""})`,
      });
      continue;
    }
    chain.push(e);
  }
  return { chain, simulated: false, primaryType, skipped };
}
