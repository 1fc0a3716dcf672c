/**
 * Model references, parsed in one place: `provider/model` as the configuration writes them
 * (`anthropic/claude-sonnet-5-5`, `openai/gpt-4.1`, `simulator/any`). The provider names are
 * the provider registry's keys; `simulator` is the built-in model simulator.
 */

/** Vendors with an adapter in the provider registry. */
export const PROVIDER_NAMES = ["anthropic", "openai"] as const;

/** A vendor with an adapter. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** What may stand before the slash of a model reference. */
export type ModelRefProvider = ProviderName | "simulator";

/** A parsed model reference. */
export interface ModelRef {
  provider: ModelRefProvider;
  /** The vendor's model name, everything after the first slash (it may contain slashes). */
  model: string;
}

/** `provider/model`: a known provider, a slash, a model name without whitespace. */
export const MODEL_REF_PATTERN = new RegExp(
  `^(${[...PROVIDER_NAMES, "simulator"].join("|")})/[^\\s/][^\\s]*$`,
);

/** What a valid reference looks like, for error messages. */
export const MODEL_REF_EXPECTED = `expected "provider/model" where provider is ${[...PROVIDER_NAMES, "simulator"].join(", ")}`;

/** Parses `provider/model`; throws a TypeError naming the value and what was expected. */
export function parseModelRef(ref: string): ModelRef {
  if (!MODEL_REF_PATTERN.test(ref)) throw new TypeError(`model "${ref}": ${MODEL_REF_EXPECTED}`);
  const slash = ref.indexOf("/");
  return { provider: ref.slice(0, slash) as ModelRefProvider, model: ref.slice(slash + 1) };
}
