/**
 * The error table of toProviderError, row by row, with plain objects shaped like the SDKs'
 * errors (no SDK involved); then proxy failures as both real SDKs report them, through the real
 * transport to the fake proxy (the SDK says only "Connection error.", the ProxyError is its cause).
 */
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AnthropicProvider } from "../../../src/harness/providers/anthropic.js";
import { abortedError, toProviderError } from "../../../src/harness/providers/errors.js";
import { createHttpFetch } from "../../../src/harness/providers/http-fetch.js";
import { type ProxyEndpoint, ProxyError, proxyRefusal } from "../../../src/harness/providers/http-proxy.js";
import { OpenAIProvider } from "../../../src/harness/providers/openai.js";
import type { ModelProvider, ProviderErrorKind } from "../../../src/harness/providers/types.js";
import { ProviderError } from "../../../src/harness/providers/provider-error.js";
import { FakeHttpProxy } from "../../fakes/http-proxy.js";
import { TEST_HOST } from "../../fakes/test-tls.js";
import { collect, lastError, request } from "./provider-contract.js";

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

/** A proxy endpoint as http-proxy.ts parses it, with or without credentials. */
const proxyAt = (credentials: boolean): ProxyEndpoint => ({
  tls: false,
  host: "proxy.corp",
  port: 3128,
  authorization: credentials ? "Basic dTpw" : undefined,
  shown: `http://${credentials ? "***@" : ""}proxy.corp:3128`,
});
const refusedBy = (status: number, reason: string, credentials = false) =>
  proxyRefusal(proxyAt(credentials), "CONNECT api.openai.com:443", status, reason);
const unreachableProxy = new ProxyError(
  "proxy_unreachable",
  "proxy http://proxy.corp:3128 could not be reached (connect ECONNREFUSED 10.0.0.1:3128)",
  {
    proxy: "http://proxy.corp:3128",
    cause: Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:3128"), { code: "ECONNREFUSED" }),
  },
);
/** How the SDKs report a failed fetch: "Connection error." with the transport's error as cause. */
const viaSdk = (cause: unknown) => new APIConnectionError("Connection error.", { cause });

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
  ["proxy 407 under Connection error.", viaSdk(refusedBy(407, "Proxy Authentication Required")), "auth"],
  ["proxy 403 under Connection error.", viaSdk(refusedBy(403, "Forbidden")), "auth"],
  ["a ProxyError thrown as it is (407)", refusedBy(407, "Proxy Authentication Required"), "auth"],
  ["proxy 502 under Connection error.", viaSdk(refusedBy(502, "Bad Gateway")), "network"],
  ["unreachable proxy under Connection error.", viaSdk(unreachableProxy), "network"],
  [
    "proxy answering non-HTTP under fetch failed",
    new TypeError("fetch failed", {
      cause: new ProxyError("proxy_bad_response", "proxy http://proxy.corp:3128 answered garbage", {
        proxy: "http://proxy.corp:3128",
      }),
    }),
    "network",
  ],
  [
    "aborted while the proxy refuses",
    new APIUserAbortError("aborted", { cause: refusedBy(407, "x") }),
    "aborted",
  ],
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

  it('names the proxy that failed in the message, not the SDK\'s "Connection error."', () => {
    const refused = toProviderError(viaSdk(refusedBy(407, "Proxy Authentication Required", true)), "openai");
    expect(refused).toMatchObject({ kind: "auth", retryable: false, status: undefined });
    expect(refused.message).toBe(
      "openai auth: proxy http://***@proxy.corp:3128 refused CONNECT api.openai.com:443: 407 Proxy Authentication Required (its credentials were refused)",
    );
    const unreachable = toProviderError(viaSdk(unreachableProxy), "anthropic");
    expect(unreachable).toMatchObject({ kind: "network", retryable: true });
    expect(unreachable.message).toBe(
      "anthropic network: proxy http://proxy.corp:3128 could not be reached (connect ECONNREFUSED 10.0.0.1:3128)",
    );
    // Without a proxy in the chain the message is the error's own, as before.
    expect(toProviderError(new APIConnectionError("Connection error."), "openai").message).toBe(
      "openai network: Connection error.",
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

describe("toProviderError on proxy failures, as the real SDKs report them", () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  /** A "proxy" that answers every connection with `answer` and closes. */
  async function rawProxy(answer: string): Promise<string> {
    const server = net.createServer((socket) => socket.resume().end(answer));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  async function fakeProxy(credentials: string): Promise<FakeHttpProxy> {
    const proxy = new FakeHttpProxy({ credentials });
    await proxy.start();
    closers.push(() => proxy.close());
    return proxy;
  }

  const providers: Array<[string, (fetch: typeof globalThis.fetch) => ModelProvider]> = [
    ["anthropic", (fetch) => new AnthropicProvider({ apiKey: "k", baseUrl: `https://${TEST_HOST}`, fetch })],
    ["openai", (fetch) => new OpenAIProvider({ apiKey: "k", baseUrl: `https://${TEST_HOST}/v1`, fetch })],
  ];
  /** The error a provider's stream ends with when its https: calls go through `proxyUrl`. */
  async function failureThrough(make: (fetch: typeof globalThis.fetch) => ModelProvider, proxyUrl: string) {
    const provider = make(createHttpFetch({ env: { https_proxy: proxyUrl } }));
    const error = lastError(await collect(provider.stream(request(), new AbortController().signal)));
    expect(error).toBeInstanceOf(ProviderError);
    return error;
  }

  it.each(providers)(
    "%s: a proxy that wants credentials (407) is an auth failure naming it",
    async (_, make) => {
      const proxy = await fakeProxy("ann:right");
      const missing = await failureThrough(make, proxy.url());
      expect(missing).toMatchObject({ kind: "auth", retryable: false });
      expect(missing.message).toContain(
        `auth: proxy ${proxy.url()} refused CONNECT ${TEST_HOST}:443: 407 Proxy Authentication Required (it wants credentials`,
      );
      const wrong = await failureThrough(make, proxy.url("ann:wrong-secret"));
      expect(wrong).toMatchObject({ kind: "auth", retryable: false });
      expect(wrong.message).toContain(`proxy ${proxy.url("***")} refused`);
      expect(wrong.message).not.toContain("wrong-secret");
      expect(proxy.seen.map((r) => r.status)).toEqual([407, 407]);
    },
  );

  it.each(providers)("%s: a proxy that forbids the target (403) is an auth failure", async (_, make) => {
    const url = await rawProxy("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
    const error = await failureThrough(make, url);
    expect(error).toMatchObject({ kind: "auth", retryable: false });
    expect(error.message).toContain(`proxy ${url} refused CONNECT ${TEST_HOST}:443: 403 Forbidden`);
  });

  it.each(providers)("%s: an unreachable or broken proxy is a network failure naming it", async (_, make) => {
    const closed = await rawProxy("");
    await closers.pop()?.();
    const unreachable = await failureThrough(make, closed);
    expect(unreachable).toMatchObject({ kind: "network", retryable: true });
    expect(unreachable.message).toContain(`network: proxy ${closed} could not be reached (`);

    const notHttp = await rawProxy("SSH-2.0-OpenSSH_9.6\r\n\r\n");
    const broken = await failureThrough(make, notHttp);
    expect(broken).toMatchObject({ kind: "network", retryable: true });
    expect(broken.message).toContain(`network: proxy ${notHttp} answered CONNECT ${TEST_HOST}:443 with`);
  });
});
