/**
 * A `fetch` for the vendor SDKs over node:http / node:https with keep-alive agents. Node 20's
 * global fetch (undici) costs about half a millisecond more per request here, most of it in
 * the request path; the SDKs take a `fetch` seam, so the gateway gives them this one. It covers
 * what the SDKs send (a URL, a method, headers, a string or byte body, a signal) and hands
 * anything else to the global fetch (which knows no proxy; the SDKs' JSON and streaming calls
 * never need it). It also does what users of the global fetch would miss: proxies from the
 * environment (http-proxy.ts) and gzip / deflate / br response bodies. Without a proxy and
 * with an uncompressed answer, a request costs what it did before either existed.
 */
import http from "node:http";
import https from "node:https";
import { Transform, type TransformCallback } from "node:stream";
import type tls from "node:tls";
import zlib from "node:zlib";
import {
  type ProxyEndpoint,
  type ProxySettings,
  TunnelAgent,
  proxyFor,
  proxyRefusal,
  proxySettingsFromEnv,
} from "./http-proxy.js";

/** Options of {@link createHttpFetch}. */
export interface HttpFetchOptions {
  /**
   * Where proxy settings are read from (`https_proxy`, `HTTPS_PROXY`, `http_proxy`,
   * `HTTP_PROXY`, `no_proxy`, `NO_PROXY`; see http-proxy.ts). Default `{}`: no proxy. Only the
   * composition root passes `process.env`.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * CA certificates trusted for TLS to targets and to https:// proxies, replacing Node's
   * default store. Default: Node's store (which `NODE_EXTRA_CA_CERTS` extends). For tests.
   */
  ca?: tls.SecureContextOptions["ca"];
  /** Time allowed to reach a proxy and get its answer to CONNECT; default 30_000 ms. */
  proxyConnectTimeoutMs?: number;
  /** Sockets kept open per origin (and per proxy and origin); default 64. */
  maxSockets?: number;
}

/** Statuses whose Response must have a null body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** Sent unless the caller chose its own; bodies in these codings are decoded as they stream. */
const ACCEPT_ENCODING = "gzip, deflate, br";

/** More codings than this on one response is not a real server. */
const MAX_CODINGS = 4;

/**
 * Sync flushes make zlib hand out everything decodable so far (an SSE event arrives when its
 * bytes do, not when a buffer fills), and accept a body cut at a flush point, as curl does.
 */
const ZLIB_STREAMING = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI_STREAMING = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};

/** How one origin is reached: the agent, and for an http: target through a proxy, the proxy. */
interface Route {
  agent: http.Agent;
  /** Set when the request goes to the proxy in absolute form (http: target). */
  forwardTo: ProxyEndpoint | undefined;
}

/**
 * Builds a drop-in `fetch` for `string | URL` requests with a string or byte body. The response
 * body streams as it arrives and is decoded when the server compressed it (`content-encoding`
 * gzip, deflate or br; headers stay as received, as with the global fetch); aborting
 * `init.signal` rejects the pending request, or errors the body stream, with the signal's
 * reason (an `AbortError` unless the caller gave another). A proxy that refuses a request
 * rejects it with a ProxyError (http-proxy.ts) naming the proxy. Throws at construction, naming the
 * variable or field, when a proxy variable or an option is malformed.
 */
export function createHttpFetch(options: HttpFetchOptions = {}): typeof fetch {
  const maxSockets = positiveInt("maxSockets", options.maxSockets ?? 64);
  const connectTimeoutMs = positiveInt("proxyConnectTimeoutMs", options.proxyConnectTimeoutMs ?? 30_000);
  const ca = options.ca;
  const tlsOptions = ca ? { ca } : {};
  const direct = {
    "http:": { agent: new http.Agent({ keepAlive: true, maxSockets }), forwardTo: undefined },
    "https:": {
      agent: new https.Agent({ keepAlive: true, maxSockets, ...tlsOptions }),
      forwardTo: undefined,
    },
  } satisfies Record<string, Route>;
  const proxies = proxySettingsFromEnv(options.env ?? {});
  const routes = new Map<string, Route>();

  /**
   * Direct, or one keep-alive agent per (proxy, target origin), decided once per origin (the
   * SDKs talk to the one or two origins of the configuration).
   */
  const routeThroughProxy = (settings: ProxySettings, url: URL, protocol: "http:" | "https:"): Route => {
    const key = `${protocol}//${url.host}`;
    const known = routes.get(key);
    if (known) return known;
    const proxy = proxyFor(settings, url);
    let route: Route = direct[protocol];
    if (proxy && protocol === "https:") {
      route = { agent: new TunnelAgent({ proxy, maxSockets, connectTimeoutMs, ca }), forwardTo: undefined };
    } else if (proxy) {
      const agent = proxy.tls
        ? new https.Agent({ keepAlive: true, maxSockets, ...tlsOptions })
        : new http.Agent({ keepAlive: true, maxSockets });
      route = { agent, forwardTo: proxy };
    }
    routes.set(key, route);
    return route;
  };

  return (input, init) => {
    const body = init?.body;
    const simpleBody =
      body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
    if (input instanceof Request || !simpleBody) return globalThis.fetch(input, init);
    const url = input instanceof URL ? input : new URL(input);
    const protocol = url.protocol;
    if (protocol !== "http:" && protocol !== "https:") return globalThis.fetch(input, init);
    const route = proxies ? routeThroughProxy(proxies, url, protocol) : direct[protocol];
    return request(url, route, init ?? {}, body ?? undefined);
  };
}

/** The transport without a proxy (nothing read from the environment); see {@link createHttpFetch}. */
export const httpFetch: typeof fetch = createHttpFetch();

function request(
  url: URL,
  route: Route,
  init: RequestInit,
  body: string | Uint8Array | undefined,
): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value;
  });
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  headers["accept-encoding"] ??= ACCEPT_ENCODING;
  const method = init.method ?? "GET";
  const proxy = route.forwardTo;
  let req: http.ClientRequest;
  if (proxy) {
    // Absolute form to the proxy: it opens the connection to the target itself.
    headers.host = url.host;
    if (proxy.authorization) headers["proxy-authorization"] = proxy.authorization;
    const send = proxy.tls ? https.request : http.request;
    req = send({
      host: proxy.host,
      port: proxy.port,
      path: `${url.protocol}//${url.host}${url.pathname}${url.search}`,
      method,
      headers,
      agent: route.agent,
    });
  } else {
    const send = url.protocol === "https:" ? https.request : http.request;
    req = send(url, { method, headers, agent: route.agent });
  }
  return new Promise<Response>((resolve, reject) => {
    const onAbort = () => req.destroy(abortReason(signal as AbortSignal));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.once("error", (err) => {
      signal?.removeEventListener("abort", onAbort);
      reject(err);
    });
    req.once("response", (res) => {
      const status = res.statusCode ?? 0;
      // From here an abort errors the body stream instead of the request.
      signal?.removeEventListener("abort", onAbort);
      if (proxy && status === 407) {
        // Only the proxy says 407: the request never reached the target.
        res.destroy();
        reject(proxyRefusal(proxy, `${method} ${url.protocol}//${url.host}`, 407, res.statusMessage));
        return;
      }
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
        else if (value !== undefined) responseHeaders.set(name, value);
      }
      const onBodyAbort = () => res.destroy(abortReason(signal as AbortSignal));
      signal?.addEventListener("abort", onBodyAbort, { once: true });
      res.once("close", () => signal?.removeEventListener("abort", onBodyAbort));
      const nullBody = NULL_BODY_STATUSES.has(status) || method === "HEAD";
      if (nullBody) res.resume();
      const encoding = res.headers["content-encoding"];
      resolve(
        new Response(
          nullBody ? null : encoding === undefined ? toWebStream(res) : decodedBody(res, encoding),
          {
            status,
            statusText: res.statusMessage ?? "",
            headers: responseHeaders,
          },
        ),
      );
    });
    req.end(body);
  });
}

/**
 * The response body as a web stream, with backpressure (the socket pauses while the reader is
 * behind). Leaner than `Readable.toWeb`, which costs a noticeable share of a streamed call.
 */
function toWebStream(res: http.IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        res.on("data", (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) res.pause();
        });
        res.once("end", () => controller.close());
        res.once("error", (err) => controller.error(err));
        res.once("close", () => {
          // Destroyed before its end (an abort, a dropped connection): the reader must not hang.
          if (!res.complete)
            controller.error(res.errored ?? new Error("the connection closed before the response ended"));
        });
      },
      pull() {
        res.resume();
      },
      cancel(reason) {
        res.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    { highWaterMark: 16 },
  );
}

/**
 * A compressed body, decoded as it streams: `content-encoding` codings are undone last first.
 * A coding this transport does not know leaves the body as it came (as the global fetch does).
 * Wired with `pipe` rather than `stream.pipeline`, which costs about twice the decoding of a
 * small answer; a failure of any stage (a cut connection, corrupt data) errors the body.
 */
function decodedBody(res: http.IncomingMessage, contentEncoding: string): ReadableStream<Uint8Array> {
  const codings = contentEncoding
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (
    codings.length === 0 ||
    codings.length > MAX_CODINGS ||
    !codings.every((c) => Object.hasOwn(DECODERS, c))
  )
    return toWebStream(res);
  const decoders: Transform[] = codings.reverse().map((c) => DECODERS[c as keyof typeof DECODERS]());
  const [first, ...rest] = decoders;
  if (!first) return toWebStream(res);
  const last = rest.reduce<Transform>((from, to) => from.pipe(to), first);
  let settled = false;
  const stop = (err?: Error) => {
    for (const decoder of decoders) decoder.destroy();
    res.destroy(err);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const fail = (err: Error) => {
          if (settled) return;
          settled = true;
          controller.error(err);
          stop();
        };
        for (const decoder of decoders) decoder.on("error", fail);
        res.on("error", fail);
        res.once("close", () => {
          // Destroyed before its end (an abort, a dropped connection): the reader must not hang.
          if (!res.complete)
            fail(res.errored ?? new Error("the connection closed before the response ended"));
        });
        last.on("data", (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) last.pause();
        });
        last.once("end", () => {
          if (settled) return;
          settled = true;
          controller.close();
        });
        res.pipe(first);
      },
      pull() {
        last.resume();
      },
      cancel(reason) {
        settled = true;
        stop(reason instanceof Error ? reason : undefined);
      },
    },
    { highWaterMark: 16 },
  );
}

/** A decoder per content coding this transport undoes. */
const DECODERS = {
  gzip: () => zlib.createGunzip(ZLIB_STREAMING),
  "x-gzip": () => zlib.createGunzip(ZLIB_STREAMING),
  deflate: () => new DeflateDecoder(),
  br: () => zlib.createBrotliDecompress(BROTLI_STREAMING),
} satisfies Record<string, () => Transform>;

/**
 * `deflate` is the zlib format by the RFC, but some servers send raw deflate; the first byte
 * tells them apart (a zlib header's low nibble is 8, the deflate method), as curl and browsers do.
 */
class DeflateDecoder extends Transform {
  #inner: zlib.Inflate | zlib.InflateRaw | undefined;
  #pendingFlush: TransformCallback | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (!this.#inner) {
      const zlibHeader = ((chunk[0] ?? 0) & 0x0f) === 0x08;
      const inner = zlibHeader ? zlib.createInflate(ZLIB_STREAMING) : zlib.createInflateRaw(ZLIB_STREAMING);
      inner.on("data", (data: Buffer) => {
        if (!this.push(data)) inner.pause();
      });
      inner.once("error", (err) => this.destroy(err));
      inner.once("end", () => this.#pendingFlush?.());
      this.#inner = inner;
    }
    this.#inner.write(chunk, () => callback());
  }

  override _read(size: number): void {
    this.#inner?.resume();
    super._read(size);
  }

  override _flush(callback: TransformCallback): void {
    if (!this.#inner) {
      callback();
      return;
    }
    this.#pendingFlush = callback;
    this.#inner.end();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.#inner?.destroy();
    callback(err);
  }
}

function positiveInt(field: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`HttpFetchOptions.${field}: got ${String(value)}, expected a positive integer`);
  }
  return value;
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException("This operation was aborted", "AbortError");
}
