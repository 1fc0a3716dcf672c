/** Options every SDK-backed provider takes, validated once at construction. */
import type { Logger } from "../../util/logger.js";
import { httpFetch } from "./http-fetch.js";

export interface SdkProviderOptions {
  /** API key. Required: passing it also keeps the SDK's own credential lookup (env, profiles) out. */
  apiKey: string;
  /** Base URL; default the SDK's (OpenAI: with `/v1`; Anthropic: without). */
  baseUrl?: string;
  /** Time allowed until the response headers arrive; default 600_000 ms. */
  requestTimeoutMs?: number;
  /** True when `baseUrl` is the built-in simulator; default false. */
  simulated?: boolean;
  /** Where request failures are logged; default none. */
  logger?: Logger;
  /** Transport seam; default {@link httpFetch} (node:http keep-alive, cheaper than undici). */
  fetch?: typeof fetch;
}

/** Applies defaults and rejects bad values with a message naming the field, the value and what was expected. */
export function checkSdkProviderOptions<T extends SdkProviderOptions>(
  name: string,
  options: T,
): T & { requestTimeoutMs: number; fetch: typeof fetch } {
  if (typeof options.apiKey !== "string" || options.apiKey === "") {
    throw new TypeError(`${name}.apiKey: got an empty value, expected a non-empty string`);
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? 600_000;
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs <= 0) {
    throw new RangeError(`${name}.requestTimeoutMs: got ${requestTimeoutMs}, expected a positive integer`);
  }
  return { ...options, requestTimeoutMs, fetch: options.fetch ?? httpFetch };
}
