/**
 * The gateway's loopback HTTP server: health, readiness, metrics, status, and the routes the
 * HTTP and console channels and Telegram webhooks register. Plain node:http; requests and
 * bodies are bounded. A leaf: it knows HTTP, not the gateway (errors of other layers are mapped
 * by the `errorStatus` option the composition root gives it).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../util/logger.js";
import { PortInUseError } from "./port-in-use-error.js";

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void;

/** A request problem with the HTTP status to answer; `param` names the offending field. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = "bad_request",
    readonly param: string | null = null,
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
  /**
   * Maps errors other than HttpError to an HTTP answer (e.g. "the gateway cannot take it now" →
   * 503 with Retry-After); undefined: 500.
   */
  errorStatus?: (err: unknown) => ErrorStatus | undefined;
  /**
   * When set, every `/v1/*` request and `/metrics` must carry `Authorization: Bearer <token>`
   * (401 otherwise); health, readiness and platform webhooks (their own secret) stay open.
   */
  authToken?: string;
}

/** An error's HTTP answer: status, stable code, and a Retry-After in seconds for 503s. */
export interface ErrorStatus {
  status: number;
  code: string;
  retryAfterS?: number;
}

/** Paths that need the bearer token when one is configured. */
function needsToken(path: string): boolean {
  return path.startsWith("/v1/") || path === "/metrics";
}

/** Routes by exact method + path. */
export class GatewayHttpServer {
  readonly #routes = new Map<string, RouteHandler>();
  readonly #prefixes: Array<{ method: string; prefix: string; handler: RouteHandler }> = [];
  readonly #server: Server;
  readonly #options: HttpServerOptions;
  /** SHA-256 of the token: compared in constant time whatever the length of what is sent. */
  readonly #tokenDigest: Buffer | undefined;
  readonly maxBodyBytes: number;

  constructor(options: HttpServerOptions) {
    this.#options = options;
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.#tokenDigest = options.authToken ? sha256(options.authToken) : undefined;
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.keepAliveTimeout = 5_000;
  }

  /** Registers a handler; a second handler for the same route is a programming error. */
  route(method: "GET" | "POST", path: string, handler: RouteHandler): void {
    const key = `${method} ${path}`;
    if (this.#routes.has(key)) throw new Error(`route ${key} is already registered`);
    this.#routes.set(key, handler);
  }

  /**
   * Registers a handler for every path under `prefix` (e.g. "/ui/") that no exact route takes;
   * the first registered prefix that matches wins.
   */
  routePrefix(method: "GET", prefix: string, handler: RouteHandler): void {
    if (this.#prefixes.some((p) => p.method === method && p.prefix === prefix))
      throw new Error(`route prefix ${method} ${prefix} is already registered`);
    this.#prefixes.push({ method, prefix, handler });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        reject(
          err.code === "EADDRINUSE"
            ? new PortInUseError(this.#options.port, this.#options.host, { cause: err })
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
    const handler =
      this.#routes.get(`${req.method} ${url.pathname}`) ??
      this.#prefixes.find((p) => p.method === req.method && url.pathname.startsWith(p.prefix))?.handler;
    try {
      if (this.#tokenDigest && needsToken(url.pathname)) this.#authenticate(req);
      if (!handler) {
        const allowed = this.#methodsOf(url.pathname);
        if (allowed.length === 0)
          throw new HttpError(404, `no route ${req.method} ${url.pathname}`, "not_found");
        // RFC 9110: a 405 says which methods the resource takes.
        res.setHeader("allow", allowed.join(", "));
        throw new HttpError(
          405,
          `method ${req.method} not allowed on ${url.pathname} (use ${allowed.join(" or ")})`,
          "method_not_allowed",
        );
      }
      await handler(req, res, url);
    } catch (err) {
      const { status, code, retryAfterS } = this.#statusOf(err);
      if (status >= 500 && status !== 503)
        this.#options.logger.error({ err, path: url.pathname }, "http handler failed");
      else if (status === 503)
        this.#options.logger.warn({ path: url.pathname, code, err }, "request refused for now");
      if (!res.headersSent) {
        if (retryAfterS !== undefined) res.setHeader("retry-after", String(retryAfterS));
        if (status === 401) res.setHeader("www-authenticate", 'Bearer realm="switchyard"');
        const message = err instanceof Error ? err.message : String(err);
        sendJson(res, status, errorBody(status, code, message, err instanceof HttpError ? err.param : null));
      } else res.end();
    }
  }

  /** The methods registered for `path`, in registration order. */
  #methodsOf(path: string): string[] {
    const methods: string[] = [];
    for (const key of this.#routes.keys()) {
      const space = key.indexOf(" ");
      if (key.slice(space + 1) === path) methods.push(key.slice(0, space));
    }
    return methods;
  }

  /** The HTTP answer for a failed request; nothing was committed for a 503 (send it again). */
  #statusOf(err: unknown): ErrorStatus {
    if (err instanceof HttpError) return { status: err.status, code: err.code };
    return this.#options.errorStatus?.(err) ?? { status: 500, code: "internal" };
  }

  /** Throws a 401 unless the request carries the configured bearer token. */
  #authenticate(req: IncomingMessage): void {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) {
      throw new HttpError(
        401,
        "this gateway requires a token: send Authorization: Bearer <gateway.auth.token>",
        "missing_token",
      );
    }
    // Digests have one length, so the comparison takes the same time for every wrong token.
    if (!timingSafeEqual(sha256(match[1]), this.#tokenDigest as Buffer))
      throw new HttpError(401, "the bearer token is not this gateway's gateway.auth.token", "invalid_token");
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** OpenAI's `error.type` for an HTTP status, so OpenAI clients report our errors as theirs. */
function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status === 503) return "service_unavailable";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/**
 * Every JSON error of the gateway, in OpenAI's shape: `{"error": {"message", "type", "code",
 * "param"}}` (`code` is ours and stable; `type` follows the status).
 */
export function errorBody(status: number, code: string, message: string, param: string | null = null) {
  return { error: { message, type: errorType(status), code, param } };
}

/** Reads a JSON object body, bounded by `maxBytes`; clear errors for oversize, bad JSON, non-objects. */
/**
 * The whole request body, or undefined once it passes `maxBytes` (reading stops there); each
 * caller answers that in its own protocol's words.
 */
export async function readBodyCapped(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > maxBytes) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const body = await readBodyCapped(req, maxBytes);
  if (!body) throw new HttpError(413, `request body is larger than ${maxBytes} bytes`, "too_large");
  const text = body.toString("utf8");
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
