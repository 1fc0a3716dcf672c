/**
 * The one place where vendor SDK failures become {@link ProviderError}s. A table of patterns
 * (error class name, HTTP status, error type/code, message, a proxy's refusal) decides the kind;
 * the first matching row wins. Works on plain objects too: it reads fields, it does not need the
 * SDK. A proxy's failure hides in the cause chain (the SDK only says "Connection error."): its
 * ProxyError decides the kind and gives the message, which names the proxy.
 */
import { ProxyError } from "./http-proxy.js";
import type { ProviderErrorKind } from "./types.js";
import { ProviderError } from "./provider-error.js";

/** What the table looks at, gathered from the error, its body and its cause chain. */
interface ErrorFacts {
  /** Class names along the prototype chain plus `err.name` (e.g. "APIConnectionTimeoutError"). */
  names: string[];
  status: number | undefined;
  /** Error types and codes from the error, its body, and system codes (ECONNRESET) of its causes. */
  codes: string[];
  /** Messages of the error, its body and its causes, joined. */
  text: string;
  /** The first ProxyError of the error and its cause chain: the request never reached the vendor. */
  proxy: ProxyError | undefined;
}

/**
 * One row: every given field must match. `status: "none"` matches errors with no status.
 * `proxy` matches a ProxyError in the chain by its codes and, for a refusal, the proxy's status.
 */
interface ErrorPattern {
  kind: ProviderErrorKind;
  names?: readonly string[];
  status?: readonly number[] | "none" | { atLeast: number };
  codes?: readonly string[];
  text?: RegExp;
  proxy?: { codes: readonly ProxyError["code"][]; status?: readonly number[] };
}

const ERROR_PATTERNS: readonly ErrorPattern[] = [
  { kind: "aborted", names: ["APIUserAbortError", "AbortError"] },
  { kind: "timeout", names: ["APIConnectionTimeoutError", "TimeoutError"] },
  // A proxy that wants (other) credentials, or forbids the target: no retry helps until the
  // proxy URL or its policy is fixed. Any other proxy failure may pass: a network error.
  { kind: "auth", proxy: { codes: ["proxy_refused"], status: [407, 403] } },
  { kind: "network", proxy: { codes: ["proxy_refused", "proxy_unreachable", "proxy_bad_response"] } },
  // Quota exhaustion arrives as 429 from OpenAI but is not transient: billing, before rate_limit.
  { kind: "billing", status: [402] },
  { kind: "billing", codes: ["insufficient_quota", "billing_error"] },
  { kind: "billing", text: /credit balance is too low/i },
  { kind: "context_overflow", codes: ["context_length_exceeded", "model_context_window_exceeded"] },
  {
    kind: "context_overflow",
    status: [400, 413],
    text: /prompt is too long|maximum context length|context window/i,
  },
  { kind: "rate_limit", status: [429] },
  { kind: "rate_limit", codes: ["rate_limit_error", "rate_limit_exceeded"] },
  { kind: "auth", status: [401, 403] },
  { kind: "auth", codes: ["authentication_error", "permission_error", "invalid_api_key"] },
  { kind: "overloaded", status: [503, 529] },
  { kind: "overloaded", codes: ["overloaded_error"] },
  { kind: "timeout", status: [408, 504] },
  { kind: "timeout", codes: ["timeout_error", "ETIMEDOUT"] },
  { kind: "invalid_request", status: [400, 404, 413, 422] },
  { kind: "invalid_request", codes: ["invalid_request_error", "not_found_error", "request_too_large"] },
  // Other server errors (500, 502, ...) are transient on the vendor's side, like an overload:
  // retry them after a wait rather than fail over at once.
  { kind: "overloaded", status: { atLeast: 500 } },
  { kind: "network", names: ["APIConnectionError"] },
  {
    kind: "network",
    codes: ["ECONNRESET", "ECONNREFUSED", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_SOCKET"],
  },
  {
    kind: "network",
    text: /ECONNRESET|ECONNREFUSED|socket hang up|terminated|fetch failed|other side closed/i,
  },
  // An error event inside a started stream (the SDK throws APIError without a status).
  { kind: "network", names: ["APIError"], status: "none" },
];

/**
 * Converts anything an SDK call or stream threw into a ProviderError: kind from the table,
 * plus status, request id and the server's requested wait (`retry-after-ms`, else
 * `retry-after` in seconds or as an HTTP date). The message is `<provider>[ <status>] <kind>:
 * <detail>`, the detail being a proxy's own message when one failed (it names the proxy,
 * credentials redacted), else the error's first message line. A ProviderError passes through
 * unchanged.
 */
export function toProviderError(err: unknown, provider: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const facts = gatherFacts(err);
  const kind = ERROR_PATTERNS.find((pattern) => matches(pattern, facts))?.kind ?? "unknown";
  const record = asRecord(err);
  const headers = record.headers;
  const requestId =
    stringField(record, "requestID") ?? header(headers, "request-id") ?? header(headers, "x-request-id");
  const retryAfterMs = parseRetryAfter(headers);
  const detail = firstLine(facts.proxy?.message ?? facts.text) || "no detail";
  const status = facts.status === undefined ? "" : ` ${facts.status}`;
  return new ProviderError(kind, `${provider}${status} ${kind}: ${detail}`, {
    cause: err,
    provider,
    ...(facts.status === undefined ? {} : { status: facts.status }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** The ProviderError for a call the caller aborted through its AbortSignal. */
export function abortedError(provider: string, cause?: unknown): ProviderError {
  return new ProviderError("aborted", `${provider} aborted: the request was cancelled`, { cause, provider });
}

function matches(pattern: ErrorPattern, facts: ErrorFacts): boolean {
  if (pattern.names && !pattern.names.some((name) => facts.names.includes(name))) return false;
  if (pattern.codes && !pattern.codes.some((code) => facts.codes.includes(code))) return false;
  if (pattern.text && !pattern.text.test(facts.text)) return false;
  if (pattern.proxy && !matchesProxy(pattern.proxy, facts.proxy)) return false;
  const { status } = pattern;
  if (status === "none") return facts.status === undefined;
  if (Array.isArray(status)) return facts.status !== undefined && status.includes(facts.status);
  if (status && "atLeast" in status) return facts.status !== undefined && facts.status >= status.atLeast;
  return true;
}

function matchesProxy(pattern: NonNullable<ErrorPattern["proxy"]>, proxy: ProxyError | undefined): boolean {
  if (!proxy || !pattern.codes.includes(proxy.code)) return false;
  if (!pattern.status) return true;
  return proxy.proxyStatus !== undefined && pattern.status.includes(proxy.proxyStatus);
}

function gatherFacts(err: unknown): ErrorFacts {
  const record = asRecord(err);
  const names: string[] = [];
  for (let proto: unknown = Object.getPrototypeOf(err ?? {}); proto; proto = Object.getPrototypeOf(proto)) {
    const ctor = asRecord(proto).constructor;
    if (typeof ctor === "function" && ctor.name && ctor.name !== "Object") names.push(ctor.name);
  }
  const name = stringField(record, "name");
  if (name) names.push(name);
  const status = typeof record.status === "number" ? record.status : undefined;
  // OpenAI: err.error = { type, code, message }; Anthropic: err.error = { type: "error", error: {...} }.
  const body = asRecord(record.error);
  const inner = asRecord(body.error);
  const codes = [
    stringField(record, "type"),
    stringField(record, "code"),
    stringField(record, "errorCode"),
    stringField(body, "type"),
    stringField(body, "code"),
    stringField(inner, "type"),
    stringField(inner, "code"),
    stringField(asRecord(inner.details), "error_code"),
  ];
  const texts = [
    stringField(record, "message"),
    stringField(record, "apiMessage"),
    stringField(body, "message"),
    stringField(inner, "message"),
  ];
  if (typeof err === "string") texts.push(err);
  let proxy = err instanceof ProxyError ? err : undefined;
  // System errors and proxy failures hide in the cause chain (fetch failed ← ECONNREFUSED,
  // Connection error. ← ProxyError).
  let cause: unknown = record.cause;
  for (let depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    const causeRecord = asRecord(cause);
    codes.push(stringField(causeRecord, "code"));
    texts.push(stringField(causeRecord, "message"));
    if (!proxy && cause instanceof ProxyError) proxy = cause;
    cause = causeRecord.cause;
  }
  return {
    names,
    status,
    codes: codes.filter((code): code is string => code !== undefined && code !== "error"),
    text: texts.filter((text): text is string => Boolean(text)).join("\n"),
    proxy,
  };
}

function parseRetryAfter(headers: unknown): number | undefined {
  const ms = header(headers, "retry-after-ms");
  if (ms !== undefined && Number.isFinite(Number.parseFloat(ms))) return Math.max(0, Number.parseFloat(ms));
  const value = header(headers, "retry-after");
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() !== "" && Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Reads a header from a Headers object or a plain record. */
function header(headers: unknown, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const entry = Object.entries(asRecord(headers)).find(([key]) => key.toLowerCase() === name);
  return typeof entry?.[1] === "string" ? entry[1] : undefined;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").slice(0, 300);
}
