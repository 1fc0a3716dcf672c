/**
 * The error table of toProviderError, row by row, with plain objects shaped like the SDKs'
 * errors (no SDK involved).
 */
import { describe, expect, it } from "vitest";
import { abortedError, toProviderError } from "../../../src/harness/providers/errors.js";
import type { ProviderErrorKind } from "../../../src/harness/providers/types.js";
import { ProviderError } from "../../../src/harness/providers/provider-error.js";

/** A plain object shaped like an SDK APIError (class name simulated through a named class). */
function apiError(status: number | undefined, error: unknown, extra: Record<string, unknown> = {}) {
  return { status, error, headers: new Headers(), message: `${status ?? ""} error`, ...extra };
}

class APIConnectionTimeoutError extends Error {}
class APIConnectionError extends Error {}
class APIUserAbortError extends Error {}
class APIError extends Error {
  readonly status = undefined;
}

const cases: Array<[string, unknown, ProviderErrorKind]> = [
  [
    "openai 429 rate_limit_exceeded",
    apiError(429, { type: "requests", code: "rate_limit_exceeded" }),
    "rate_limit",
  ],
  [
    "anthropic 429 rate_limit_error",
    apiError(429, { type: "error", error: { type: "rate_limit_error" } }),
    "rate_limit",
  ],
  ["rate_limit_error type without status", { type: "rate_limit_error", message: "slow down" }, "rate_limit"],
  [
    "openai 429 insufficient_quota",
    apiError(429, { type: "insufficient_quota", code: "insufficient_quota" }),
    "billing",
  ],
  ["402", apiError(402, { type: "error", error: { type: "billing_error" } }), "billing"],
  [
    "credit balance too low (400)",
    apiError(400, {}, { message: "400 Your credit balance is too low" }),
    "billing",
  ],
  ["anthropic 529", apiError(529, { type: "error", error: { type: "overloaded_error" } }), "overloaded"],
  ["503", apiError(503, { type: "server_error" }), "overloaded"],
  [
    "mid-stream overloaded_error (no status)",
    apiError(undefined, { type: "error", error: { type: "overloaded_error" } }),
    "overloaded",
  ],
  ["500 (transient server error)", apiError(500, { type: "api_error" }), "overloaded"],
  ["502", apiError(502, {}), "overloaded"],
  ["401", apiError(401, { type: "invalid_request_error", code: "invalid_api_key" }), "auth"],
  ["403 permission_error", apiError(403, { type: "error", error: { type: "permission_error" } }), "auth"],
  ["invalid_api_key code only", { code: "invalid_api_key", message: "bad key" }, "auth"],
  [
    "anthropic prompt is too long",
    apiError(400, {
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long: 208310 tokens > 200000 maximum" },
    }),
    "context_overflow",
  ],
  [
    "openai context_length_exceeded",
    apiError(400, { type: "invalid_request_error", code: "context_length_exceeded" }),
    "context_overflow",
  ],
  [
    "maximum context length text",
    apiError(400, { message: "This model's maximum context length is 8192 tokens" }),
    "context_overflow",
  ],
  [
    "model_context_window_exceeded",
    { type: "model_context_window_exceeded", message: "x" },
    "context_overflow",
  ],
  [
    "400 other",
    apiError(400, { type: "invalid_request_error", message: "messages: field required" }),
    "invalid_request",
  ],
  ["404", apiError(404, { type: "error", error: { type: "not_found_error" } }), "invalid_request"],
  ["413", apiError(413, {}), "invalid_request"],
  ["422", apiError(422, {}), "invalid_request"],
  ["408", apiError(408, {}), "timeout"],
  ["504", apiError(504, {}), "timeout"],
  ["APIConnectionTimeoutError", new APIConnectionTimeoutError("Request timed out."), "timeout"],
  ["APIConnectionError", new APIConnectionError("Connection error."), "network"],
  [
    "ECONNRESET in the cause chain",
    new TypeError("fetch failed", { cause: { code: "ECONNRESET" } }),
    "network",
  ],
  [
    "ECONNREFUSED",
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
    "network",
  ],
  ["socket hang up", new Error("socket hang up"), "network"],
  ["undici terminated", new TypeError("terminated"), "network"],
  ["mid-stream APIError without status", new APIError("server_error"), "network"],
  ["APIUserAbortError", new APIUserAbortError("Request was aborted."), "aborted"],
  ["DOM AbortError", new DOMException("This operation was aborted", "AbortError"), "aborted"],
  ["409 is not classified", apiError(409, {}), "unknown"],
  ["a string", "something odd", "unknown"],
  ["undefined", undefined, "unknown"],
];

describe("toProviderError", () => {
  it.each(cases)("%s", (_name, err, kind) => {
    const error = toProviderError(err, "openai");
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.kind).toBe(kind);
    expect(error.provider).toBe("openai");
    expect(error.cause).toBe(err);
  });

  it("keeps status and request id (openai: requestID, anthropic: request-id header)", () => {
    const openai = toProviderError(apiError(429, {}, { requestID: "req_1" }), "openai");
    expect(openai.status).toBe(429);
    expect(openai.requestId).toBe("req_1");
    const anthropic = toProviderError(
      apiError(500, {}, { headers: new Headers({ "request-id": "req_2" }) }),
      "anthropic",
    );
    expect(anthropic.requestId).toBe("req_2");
    expect(anthropic.message).toMatch(/^anthropic 500 overloaded: /);
  });

  it("reads retry-after-ms, then retry-after as seconds or an HTTP date", () => {
    const withHeaders = (headers: Record<string, string>) =>
      toProviderError(apiError(429, {}, { headers: new Headers(headers) }), "anthropic").retryAfterMs;
    expect(withHeaders({ "retry-after-ms": "150", "retry-after": "9" })).toBe(150);
    expect(withHeaders({ "retry-after": "2" })).toBe(2_000);
    expect(withHeaders({ "retry-after": "0.5" })).toBe(500);
    const date = withHeaders({ "retry-after": new Date(Date.now() + 30_000).toUTCString() });
    expect(date).toBeGreaterThan(28_000);
    expect(date).toBeLessThanOrEqual(30_000);
    expect(withHeaders({ "retry-after": "soon" })).toBeUndefined();
    expect(withHeaders({})).toBeUndefined();
    // Plain header records work too.
    expect(toProviderError({ status: 429, headers: { "Retry-After": "1" } }, "openai").retryAfterMs).toBe(
      1_000,
    );
  });

  it("passes a ProviderError through unchanged", () => {
    const original = new ProviderError("auth", "x");
    expect(toProviderError(original, "anthropic")).toBe(original);
  });

  it("marks retryable kinds", () => {
    expect(toProviderError(apiError(429, {}), "openai").retryable).toBe(true);
    expect(toProviderError(apiError(401, {}), "openai").retryable).toBe(false);
    expect(abortedError("anthropic").kind).toBe("aborted");
    expect(abortedError("anthropic").retryable).toBe(false);
  });
});
