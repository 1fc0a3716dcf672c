/**
 * The gateway's loopback HTTP server: health, readiness, metrics, status, and the routes the
 * HTTP and console channels register. Plain node:http; requests and bodies are bounded.
 */
import { SinkUnavailableError } from "../channels/types.js";
import { StoreError } from "../store/types.js";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../util/logger.js";

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void;

/** A request problem with the HTTP status to answer. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = "bad_request",
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export interface HttpServerOptions {
  host: string;
  port: number;
  logger: Logger;
  /** Largest accepted request body (default 1 MiB). */
  maxBodyBytes?: number;
}

/** Routes by exact method + path. */
export class GatewayHttpServer {
  readonly #routes = new Map<string, RouteHandler>();
  readonly #server: Server;
  readonly #options: HttpServerOptions;
  readonly maxBodyBytes: number;

  constructor(options: HttpServerOptions) {
    this.#options = options;
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.keepAliveTimeout = 5_000;
  }

  /** Registers a handler; a second handler for the same route is a programming error. */
  route(method: "GET" | "POST", path: string, handler: RouteHandler): void {
    const key = `${method} ${path}`;
    if (this.#routes.has(key)) throw new Error(`route ${key} is already registered`);
    this.#routes.set(key, handler);
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        reject(
          err.code === "EADDRINUSE"
            ? new Error(
                `port ${this.#options.port} on ${this.#options.host} is already in use (is another gateway running? use --port or gateway.port)`,
                { cause: err },
              )
            : err,
        );
      };
      this.#server.once("error", onError);
      this.#server.listen(this.#options.port, this.#options.host, () => {
        this.#server.off("error", onError);
        resolve();
      });
    });
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://${this.#options.host}:${this.port}`;
  }

  /** Stops accepting connections and closes idle ones; open requests are cut after `graceMs`. */
  async close(graceMs = 1_000): Promise<void> {
    if (!this.#server.listening) return;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    const timer = setTimeout(() => this.#server.closeAllConnections(), graceMs);
    try {
      await closed;
    } finally {
      clearTimeout(timer);
    }
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const handler = this.#routes.get(`${req.method} ${url.pathname}`);
    try {
      if (!handler) {
        const otherMethod = [...this.#routes.keys()].some((k) => k.endsWith(` ${url.pathname}`));
        throw otherMethod
          ? new HttpError(405, `method ${req.method} not allowed on ${url.pathname}`, "method_not_allowed")
          : new HttpError(404, `no route ${req.method} ${url.pathname}`, "not_found");
      }
      await handler(req, res, url);
    } catch (err) {
      const { status, code, retryAfterS } = httpStatusOf(err);
      if (status >= 500 && status !== 503)
        this.#options.logger.error({ err, path: url.pathname }, "http handler failed");
      else if (status === 503)
        this.#options.logger.warn({ path: url.pathname, code, err }, "request refused for now");
      if (!res.headersSent) {
        if (retryAfterS !== undefined) res.setHeader("retry-after", String(retryAfterS));
        sendJson(res, status, { error: { code, message: err instanceof Error ? err.message : String(err) } });
      } else res.end();
    }
  }
}

/**
 * The HTTP answer for a failed request. Nothing was committed for a 503: the client may send
 * the same request (with the same `id`) again and it will be processed exactly once.
 */
function httpStatusOf(err: unknown): { status: number; code: string; retryAfterS?: number } {
  if (err instanceof HttpError) return { status: err.status, code: err.code };
  if (err instanceof SinkUnavailableError)
    return { status: 503, code: "unavailable", retryAfterS: Math.ceil(err.retryAfterMs / 1000) };
  if (err instanceof StoreError) return { status: 503, code: `store_${err.code}`, retryAfterS: 1 };
  return { status: 500, code: "internal" };
}

/** Reads a JSON object body, bounded by `maxBytes`; clear errors for oversize, bad JSON, non-objects. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes)
      throw new HttpError(413, `request body is larger than ${maxBytes} bytes`, "too_large");
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, "request body is not valid JSON", "invalid_json");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "request body must be a JSON object", "invalid_body");
  }
  return value as Record<string, unknown>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  contentType = "text/plain; charset=utf-8",
): void {
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
  res.end(text);
}
