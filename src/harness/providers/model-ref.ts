/**
 * Model references, parsed in one place: `provider/model` as the configuration writes them
 * (`anthropic/claude-sonnet-5-5`, `openai/gpt-4.1`, `ollama/llama3.3`, `simulator/any`). The
 * provider is a name under `providers:` — a built-in vendor (`anthropic`, `openai`) or a named
 * provider of either type — or `simulator`, the built-in model simulator.
 */

/** The wire protocols with an adapter in the provider registry. */
export const PROVIDER_TYPES = ["anthropic", "openai"] as const;

/** A wire protocol with an adapter (the built-in providers are named after theirs). */
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** A parsed model reference. */
export interface ModelRef {
  /** A provider name under `providers:`, or `simulator`. */
  provider: string;
  /** The vendor's model name, everything after the first slash (it may contain slashes). */
  model: string;
}

/** What a provider name looks like (a key under `providers:`). */
export const PROVIDER_NAME_PATTERN = /^[a-z][a-z0-9_-]*$/;

/** `provider/model`: a provider name, a slash, a model name without whitespace. */
export const MODEL_REF_PATTERN = /^[a-z][a-z0-9_-]*\/[^\s/][^\s]*$/;

/** What a valid reference looks like, for error messages. */
export const MODEL_REF_EXPECTED =
  'expected "provider/model", e.g. anthropic/claude-sonnet-4-5, openai/gpt-5.1 or ollama/llama3.3';

/** Parses `provider/model`; throws a TypeError naming the value and what was expected. */
export function parseModelRef(ref: string): ModelRef {
  if (!MODEL_REF_PATTERN.test(ref)) throw new TypeError(`model "${ref}": ${MODEL_REF_EXPECTED}`);
  const slash = ref.indexOf("/");
  return { provider: ref.slice(0, slash), model: ref.slice(slash + 1) };
}
