/**
 * The provider registry: one entry per vendor adapter, and nothing else in the code switches on
 * a provider's name. An entry knows how to build its provider (the SDK is imported lazily by
 * the adapter, on the first call), where its API lives, which environment variable holds its
 * key, how to check a key for `doctor`, and how to classify its errors.
 */
import type { Logger } from "../../util/logger.js";
import { networkReason } from "../../util/network-reason.js";
import { AnthropicProvider } from "./anthropic.js";
import { toProviderError } from "./errors.js";
import type { ProviderType } from "./model-ref.js";
import { type MaxTokensField, OpenAIProvider } from "./openai.js";
import type { ModelProvider } from "./types.js";
import type { ProviderError } from "./provider-error.js";

/** What building a provider takes (the settings of `providers.<name>`, resolved). */
export interface ProviderBuildOptions {
  apiKey: string;
  baseUrl?: string;
  requestTimeoutMs: number;
  /** True when `baseUrl` is the built-in simulator. */
  simulated: boolean;
  logger?: Logger;
  /** OpenAI only: the request field of the output-token limit. */
  maxTokensField?: MaxTokensField;
  /** The transport (default: node:http keep-alive without proxies); see createHttpFetch. */
  fetch?: typeof fetch;
}

/** A `doctor` verdict on one provider's key and address. */
export interface ProbeResult {
  verdict: "ok" | "warn" | "fail";
  detail: string;
}

/** One vendor adapter. */
export interface ProviderModule {
  /** The environment variable read for the key when the config names none. */
  readonly keyEnv: string;
  /** The vendor's API root when no `baseUrl` is set. */
  readonly defaultBaseUrl: string;
  /** The base URL that reaches the built-in simulator speaking this vendor's protocol. */
  simulatorBaseUrl(simulatorUrl: string): string;
  create(options: ProviderBuildOptions): ModelProvider;
  /** Checks a key with a model listing (bounded by `timeoutMs`); never throws. */
  probe(options: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    timeoutMs: number;
  }): Promise<ProbeResult>;
  /** The adapter's error classifier (one table of patterns). */
  classify(err: unknown): ProviderError;
}

const anthropic: ProviderModule = {
  keyEnv: "ANTHROPIC_API_KEY",
  defaultBaseUrl: "https://api.anthropic.com",
  simulatorBaseUrl: (url) => url,
  create: (o) => new AnthropicProvider(withoutUndefined(o)),
  probe: (o) =>
    probeModelListing(root(o.baseUrl, "https://api.anthropic.com"), "/v1/models", o.timeoutMs, {
      "x-api-key": o.apiKey ?? "",
      "anthropic-version": "2023-06-01",
    }),
  classify: (err) => toProviderError(err, "anthropic"),
};

const openai: ProviderModule = {
  keyEnv: "OPENAI_API_KEY",
  defaultBaseUrl: "https://api.openai.com/v1",
  simulatorBaseUrl: (url) => `${url}/v1`,
  create: (o) => new OpenAIProvider(withoutUndefined(o)),
  probe: (o) =>
    probeModelListing(root(o.baseUrl, "https://api.openai.com/v1"), "/models", o.timeoutMs, {
      authorization: `Bearer ${o.apiKey ?? ""}`,
    }),
  classify: (err) => toProviderError(err, "openai"),
};

/** Every vendor adapter, by the name model references use. */
export const providerModules = { anthropic, openai } satisfies Record<ProviderType, ProviderModule>;

function root(baseUrl: string | undefined, fallback: string): string {
  return (baseUrl ?? fallback).replace(/\/+$/, "");
}

/** The options with undefined members dropped (the adapters' options are exact). */
function withoutUndefined<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as T;
}

/** GET a model listing with the key: accepted, rejected, unreachable, or answering oddly. */
async function probeModelListing(
  where: string,
  path: string,
  timeoutMs: number,
  headers: Record<string, string>,
): Promise<ProbeResult> {
  try {
    const res = await fetch(`${where}${path}`, { headers, signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    if (res.ok) return { verdict: "ok", detail: `${where} accepts the key` };
    if (res.status === 401 || res.status === 403)
      return { verdict: "fail", detail: `${where} rejected the API key (HTTP ${res.status})` };
    if (res.status === 404)
      return {
        verdict: "warn",
        detail: `${where} answers, but has no model listing (HTTP 404), so the key was not checked`,
      };
    return { verdict: "warn", detail: `${where} answered HTTP ${res.status} to a model listing` };
  } catch (err) {
    return { verdict: "fail", detail: `cannot reach ${where}: ${networkReason(err, timeoutMs)}` };
  }
}
