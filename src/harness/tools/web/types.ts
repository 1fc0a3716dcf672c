/**
 * Contracts of the guarded HTTP fetch under the future `web_fetch` tool: its options, its
 * result and its error codes. Nothing here runs.
 */
import type { LookupAddress } from "node:dns";
import type tls from "node:tls";
import type { Clock } from "../../../util/clock.js";

/**
 * Why a fetch was refused or failed; stable, for code to branch on.
 * - `bad_url`: not a URL, or one with no host.
 * - `scheme`: not http: or https: (file:, ftp:, data:, …).
 * - `credentials_in_url`: `http://user:pass@host/`.
 * - `private_address`: the host is, or resolves to, an address the SSRF guard refuses
 *   (address-guard.ts), or is a known cloud metadata host name.
 * - `too_many_redirects`: more than `maxRedirects` redirects.
 * - `http_status`: a redirect status with no Location header. Other statuses (404, 500) are
 *   not errors: the page comes back with its `status`.
 * - `unsupported_type`: a PDF, an image, audio, video, an archive or other binary data, or a
 *   Content-Encoding that cannot be decoded.
 * - `timeout`: the whole fetch, redirects included, took longer than `timeoutMs`.
 * - `aborted`: the caller's signal aborted.
 * - `dns`: the host name did not resolve.
 * - `tls`: the TLS handshake failed (certificate not trusted, wrong name).
 * - `network`: the connection failed or the answer was not valid HTTP.
 */
export type WebFetchErrorCode =
  | "bad_url"
  | "scheme"
  | "credentials_in_url"
  | "private_address"
  | "too_many_redirects"
  | "http_status"
  | "unsupported_type"
  | "timeout"
  | "aborted"
  | "dns"
  | "tls"
  | "network";

/** Resolves a host name to every address it has (the shape of `dns.promises.lookup` with `all: true`). */
export type LookupAll = (hostname: string) => Promise<LookupAddress[]>;

/** Options of `safeFetch`; each default is applied once, and a bad value throws a RangeError naming it. */
export interface SafeFetchOptions {
  /**
   * Host names and IP addresses exempt from the private-address rule (compared without case,
   * brackets or a trailing dot). A name exempts every address it resolves to; an address is
   * exempt whichever name resolved to it. Default: none.
   */
  allowHosts?: readonly string[];
  /** Body bytes read at most (after decompression); the rest is not read and `truncated` is set. Default 2 MB (2_097_152). */
  maxBytes?: number;
  /** Time for the whole fetch, redirects included; default 15_000 ms. */
  timeoutMs?: number;
  /** Redirects followed at most; default 5. */
  maxRedirects?: number;
  /** Aborts the fetch (error code `aborted`). */
  signal?: AbortSignal;
  /** DNS seam; default `dns.promises.lookup(host, { all: true })`. */
  lookup?: LookupAll;
  /** The User-Agent header; default `Switchyard-web-fetch/1`. */
  userAgent?: string;
  /** Times the deadline; default the system clock. */
  clock?: Clock;
  /** CA certificates trusted for https:, replacing Node's store; default Node's store. For tests. */
  ca?: tls.SecureContextOptions["ca"];
}

/** A fetched text page. */
export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  /** The HTTP status of the final answer: 2xx, or 4xx/5xx (returned, not thrown), or a 3xx that is no redirect. */
  status: number;
  /** The Content-Type header as received; undefined when the server sent none. */
  contentType: string | undefined;
  /** The body decoded with the charset of Content-Type (UTF-8 when none or unknown). */
  text: string;
  /** Body bytes read (after decompression), at most `maxBytes`. */
  bytes: number;
  /** True when the body was longer than `maxBytes` and was cut there. */
  truncated: boolean;
  /** Each URL a redirect led to, in order; the last is `url`. Empty when there was none. */
  redirects: string[];
}
