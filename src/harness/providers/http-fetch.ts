/**
 * A `fetch` for the vendor SDKs over node:http / node:https with keep-alive agents. Node 20's
 * global fetch (undici) costs about half a millisecond more per request here, most of it in
 * the request path; the SDKs take a `fetch` seam, so the gateway gives them this one. It covers
 * what the SDKs send (a URL, a method, headers, a string or byte body, a signal) and hands
 * anything else to the global fetch.
 */
import http from "node:http";
import https from "node:https";

/** Sockets kept open per host; model calls are capped by the lane queue well below this. */
const MAX_SOCKETS = 64;

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
};

/** Statuses whose Response must have a null body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * Drop-in `fetch` for `string | URL` requests with a string or byte body. The response body
 * streams as it arrives; aborting `init.signal` rejects the pending request, or errors the
 * body stream, with the signal's reason (an `AbortError` unless the caller gave another).
 */
export const httpFetch: typeof fetch = (input, init) => {
  const body = init?.body;
  const simpleBody =
    body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
  if (input instanceof Request || !simpleBody) return globalThis.fetch(input, init);
  const url = input instanceof URL ? input : new URL(input);
  const agent = url.protocol === "http:" || url.protocol === "https:" ? agents[url.protocol] : undefined;
  if (!agent) return globalThis.fetch(input, init);
  return request(url, agent, init ?? {}, body ?? undefined);
};

function request(
  url: URL,
  agent: http.Agent,
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
  const send = url.protocol === "https:" ? https.request : http.request;
  return new Promise<Response>((resolve, reject) => {
    const req = send(url, { method: init.method ?? "GET", headers, agent });
    const onAbort = () => req.destroy(abortReason(signal as AbortSignal));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.once("error", (err) => {
      signal?.removeEventListener("abort", onAbort);
      reject(err);
    });
    req.once("response", (res) => {
      const status = res.statusCode ?? 0;
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
        else if (value !== undefined) responseHeaders.set(name, value);
      }
      // From here an abort errors the body stream instead of the request.
      signal?.removeEventListener("abort", onAbort);
      const onBodyAbort = () => res.destroy(abortReason(signal as AbortSignal));
      signal?.addEventListener("abort", onBodyAbort, { once: true });
      res.once("close", () => signal?.removeEventListener("abort", onBodyAbort));
      const nullBody = NULL_BODY_STATUSES.has(status) || init.method === "HEAD";
      if (nullBody) res.resume();
      resolve(
        new Response(nullBody ? null : toWebStream(res), {
          status,
          statusText: res.statusMessage ?? "",
          headers: responseHeaders,
        }),
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

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException("This operation was aborted", "AbortError");
}
