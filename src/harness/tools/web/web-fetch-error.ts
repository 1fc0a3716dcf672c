/**
 * The guarded fetch's one error class, and the one place where node's socket, DNS and TLS
 * failures become one: a table of system error codes decides the kind.
 */
import type { WebFetchErrorCode } from "./types.js";

/** A refused or failed fetch: a stable code, a one-line message, the URL it concerned. */
export class WebFetchError extends Error {
  readonly code: WebFetchErrorCode;
  /** The URL (credentials removed) of the hop that failed; undefined when the input was no URL. */
  readonly url: string | undefined;
  constructor(code: WebFetchErrorCode, message: string, options: { url?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "WebFetchError";
    this.code = code;
    this.url = options.url;
  }
}

/** Node system error codes, by what they mean for a fetch; first matching row wins. */
const CODE_TABLE: ReadonlyArray<{ code: WebFetchErrorCode; match: RegExp; what: string }> = [
  { code: "dns", match: /^(ENOTFOUND|EAI_AGAIN|EAI_NODATA|EAI_NONAME|EAI_FAIL)$/, what: "cannot resolve" },
  {
    code: "tls",
    match: /^(CERT_|ERR_TLS_|ERR_SSL_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_|HOSTNAME_MISMATCH)/,
    what: "TLS failed for",
  },
  { code: "network", match: /^HPE_/, what: "not a valid HTTP answer from" },
  { code: "network", match: /./, what: "cannot reach" },
];

/**
 * Turns anything a request threw into a WebFetchError about `url` (returned as is when it
 * already is one): "cannot reach http://x/: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:9)".
 */
export function toWebFetchError(err: unknown, url: string): WebFetchError {
  if (err instanceof WebFetchError) return err;
  const code = systemCode(err);
  const row = CODE_TABLE.find((r) => r.match.test(code ?? "")) ?? CODE_TABLE[CODE_TABLE.length - 1]!;
  const message = err instanceof Error ? err.message : String(err);
  const detail = code && !message.includes(code) ? `${code} (${message})` : message;
  return new WebFetchError(row.code, `${row.what} ${url}: ${detail}`, { url, cause: err });
}

/** The first system error code (`err.code`) along the cause chain. */
function systemCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}
