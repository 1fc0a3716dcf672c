/**
 * The guarded HTTP GET under the future `web_fetch` tool. Each hop is checked before it
 * connects (fetch-target.ts: scheme, credentials, metadata names, every resolved address
 * against address-guard.ts) and connects to exactly the addresses checked. Redirects are
 * followed by hand, each one checked again. Only text is read (content-policy.ts), at most
 * `maxBytes` of it; past that the socket is closed. One deadline covers the whole fetch.
 * Uses node:http / node:https directly (not the global fetch) to own DNS, redirects and
 * reading; no proxy is used (a proxy would resolve names where this guard cannot see).
 */
import http from "node:http";
import https from "node:https";
import { lookup as dnsLookup } from "node:dns/promises";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import { type Clock, systemClock } from "../../../util/clock.js";
import { decodeBody, judgeContentType, sniffRefusal } from "./content-policy.js";
import { type CheckedTarget, checkTarget, normalizeHost, pinnedLookup, shownUrl } from "./fetch-target.js";
import type { FetchedPage, LookupAll, SafeFetchOptions } from "./types.js";
import { WebFetchError, toWebFetchError } from "./web-fetch-error.js";

/** Default `maxBytes`: 2 MB. */
export const DEFAULT_MAX_BYTES = 2 * 1024 * 1024;
/** Default `timeoutMs`. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Default `maxRedirects`. */
export const DEFAULT_MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Bytes sniffed when a body comes without Content-Type. */
const SNIFF_BYTES = 1024;

interface Settings {
  readonly allowHosts: ReadonlySet<string>;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  readonly lookup: LookupAll;
  readonly userAgent: string;
  readonly clock: Clock;
  readonly ca: SafeFetchOptions["ca"];
}

/**
 * GETs a text page from `url` with the SSRF guard, redirects (≤ `maxRedirects`, each checked),
 * a size cap and one deadline (see {@link SafeFetchOptions} for defaults). Resolves with the
 * page for any final status — a 404 or 500 is returned with its `status` and body, for the
 * caller to report — and a body cut at `maxBytes` has `truncated: true`. Rejects with a
 * {@link WebFetchError} naming the problem and, for a redirect, the hop. Throws a RangeError
 * for a bad option.
 */
export async function safeFetch(url: string, options: SafeFetchOptions = {}): Promise<FetchedPage> {
  const settings = resolveOptions(options);
  const deadline = new AbortController();
  let current = url;
  const timer = settings.clock.setTimeout(() => {
    const seconds = settings.timeoutMs / 1000;
    deadline.abort(new WebFetchError("timeout", `no complete answer from ${current} within ${seconds} s`));
  }, settings.timeoutMs);
  const onAbort = () =>
    deadline.abort(
      new WebFetchError("aborted", `fetch of ${current} aborted`, { cause: options.signal?.reason }),
    );
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await follow(url, settings, deadline.signal, (shown) => {
      current = shown;
    });
  } finally {
    settings.clock.clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

async function follow(
  input: string,
  settings: Settings,
  signal: AbortSignal,
  onHop: (shown: string) => void,
): Promise<FetchedPage> {
  let url = parseUrl(input, undefined, `not a valid URL: ${JSON.stringify(input.slice(0, 200))}`);
  const rules = { allowHosts: settings.allowHosts, lookup: settings.lookup, signal };
  const redirects: string[] = [];
  let where = shownUrl(url);
  for (let hop = 0; ; hop++) {
    onHop(shownUrl(url));
    const target = await checkTarget(url, where, rules);
    if (signal.aborted) throw signal.reason;
    const { req, res } = await request(target, settings, signal);
    const status = res.statusCode ?? 0;
    if (!REDIRECT_STATUSES.has(status)) return await readPage(target, req, res, settings, signal, redirects);
    req.destroy();
    const location = res.headers.location;
    const from = shownUrl(url);
    if (!location)
      throw new WebFetchError("http_status", `${from} answered ${status} with no Location header`, {
        url: from,
      });
    if (hop >= settings.maxRedirects)
      throw new WebFetchError(
        "too_many_redirects",
        `refused ${from}: more than ${settings.maxRedirects} redirects (the next to ${location.slice(0, 200)})`,
        { url: from },
      );
    url = parseUrl(location, url, `refused redirect ${hop + 1} from ${from}: Location is not a valid URL`);
    redirects.push(shownUrl(url));
    where = `redirect ${hop + 1} to ${shownUrl(url)} (from ${from})`;
  }
}

function parseUrl(input: string, base: URL | undefined, message: string): URL {
  try {
    return new URL(input, base);
  } catch (err) {
    throw new WebFetchError("bad_url", message, { cause: err });
  }
}

/** Sends the GET to the checked addresses; resolves once the status line and headers arrived. */
function request(
  target: CheckedTarget,
  settings: Settings,
  signal: AbortSignal,
): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
  const { url, host } = target;
  const secure = url.protocol === "https:";
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: {
          "user-agent": settings.userAgent,
          accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8",
          "accept-encoding": "gzip, deflate, br",
        },
        // A fresh agent per request: no socket reused across hosts, closing it closes the TCP.
        agent: false,
        lookup: pinnedLookup(target.addresses),
        signal,
        ...(secure && settings.ca !== undefined ? { ca: settings.ca } : {}),
      },
      (res) => resolve({ req, res }),
    );
    req.on("error", (err) => reject(signal.aborted ? signal.reason : toWebFetchError(err, shownUrl(url))));
    req.end();
  });
}

/** Reads a text body, at most `maxBytes` of it (then closes the socket), and decodes it. */
async function readPage(
  target: CheckedTarget,
  req: http.ClientRequest,
  res: http.IncomingMessage,
  settings: Settings,
  signal: AbortSignal,
  redirects: string[],
): Promise<FetchedPage> {
  const shown = shownUrl(target.url);
  const contentType = res.headers["content-type"];
  const refuse = (reason: string) => {
    req.destroy();
    return new WebFetchError("unsupported_type", `refused ${shown}: ${reason}`, { url: shown });
  };
  const verdict = judgeContentType(contentType);
  if (verdict.type === "refuse") throw refuse(verdict.reason);
  const body = decoded(res);
  if (typeof body === "string") throw refuse(body);
  const chunks: Buffer[] = [];
  let bytes = 0;
  let truncated = false;
  let sniffed = verdict.type !== "sniff";
  const sniff = () => {
    sniffed = true;
    const reason = sniffRefusal(Buffer.concat(chunks, bytes));
    if (reason) throw refuse(reason);
  };
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = settings.maxBytes - bytes;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        bytes += room;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      bytes += chunk.length;
      if (!sniffed && bytes >= SNIFF_BYTES) sniff();
    }
    if (!sniffed) sniff();
  } catch (err) {
    throw signal.aborted ? signal.reason : toWebFetchError(err, shown);
  } finally {
    // Whatever is left unread stays unread: closing the socket stops the server sending it.
    body.destroy();
    req.destroy();
  }
  const charset = verdict.type === "text" ? verdict.charset : undefined;
  return {
    url: target.url.href,
    status: res.statusCode ?? 0,
    contentType,
    text: decodeBody(Buffer.concat(chunks, bytes), charset, truncated),
    bytes,
    truncated,
    redirects,
  };
}

/** The body stream decoded per Content-Encoding, or why it cannot be. */
function decoded(res: http.IncomingMessage): Readable | string {
  const coding = (res.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  const decoder =
    coding === "gzip" || coding === "x-gzip" || coding === "deflate"
      ? zlib.createUnzip()
      : coding === "br"
        ? zlib.createBrotliDecompress()
        : undefined;
  if (decoder) return pipeline(res, decoder, () => {});
  if (coding === "identity" || coding === "") return res;
  return `its Content-Encoding ${coding} cannot be decoded`;
}

function resolveOptions(options: SafeFetchOptions): Settings {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw new RangeError(`safeFetch: maxBytes is ${maxBytes}, expected a positive whole number of bytes`);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new RangeError(`safeFetch: timeoutMs is ${timeoutMs}, expected a positive number of milliseconds`);
  if (!Number.isSafeInteger(maxRedirects) || maxRedirects < 0)
    throw new RangeError(`safeFetch: maxRedirects is ${maxRedirects}, expected a whole number >= 0`);
  return {
    allowHosts: new Set((options.allowHosts ?? []).map(normalizeHost)),
    maxBytes,
    timeoutMs,
    maxRedirects,
    lookup: options.lookup ?? ((host) => dnsLookup(host, { all: true })),
    userAgent: options.userAgent ?? "Switchyard-web-fetch/1",
    clock: options.clock ?? systemClock,
    ca: options.ca,
  };
}
