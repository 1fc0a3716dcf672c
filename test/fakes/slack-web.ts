/**
 * The HTTP side of the fake Slack server: Web API requests under `/api/<method>` (call log,
 * token checks, scripted faults, Slack's always-200 envelope), private file downloads, and the
 * response_urls of slash commands.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FileStore } from "./slack-files.js";
import { type MethodContext, slackMethods } from "./slack-methods.js";
import {
  HttpError,
  type Params,
  SlackApiError,
  parseParams,
  readBody,
  requestToken,
} from "./slack-params.js";
import type { SocketHub } from "./slack-socket.js";
import type { RecordedCall, RecordedResponse, SlackFault } from "./slack-types.js";

/** Which calls a queued fault applies to: a test of the call's parameters (token removed). */
export type FaultPredicate = (params: Record<string, unknown>) => boolean;

/** What the Web API needs from the server around it. */
export interface WebApiDeps {
  readonly botToken: string;
  readonly appToken: string;
  readonly ctx: MethodContext;
  readonly files: FileStore;
  readonly hub: SocketHub;
  readonly now: () => number;
  readonly maxBodyBytes: number;
  /** "http://127.0.0.1:PORT". */
  base(): string;
  port(): number;
}

/** Routes and answers the fake's HTTP requests (everything but the WebSocket upgrade). */
export class WebApi {
  /** Every Web API request, in order, errors included. */
  readonly calls: RecordedCall[] = [];
  /** Told of every call answered `ok: true`, as it is answered (benchmarks time replies by it). */
  readonly answered = new Set<(method: string, params: Record<string, unknown>) => void>();
  /**
   * Told of every call carried out successfully, before its answer is written (or withheld by a
   * `hangAfter` fault), with what it returned (`ts` of a post…).
   */
  readonly carriedOut = new Set<
    (method: string, params: Record<string, unknown>, result: Record<string, unknown>) => void
  >();
  /** Every POST to an issued response_url, in order. */
  readonly responses: RecordedResponse[] = [];
  readonly #deps: WebApiDeps;
  readonly #responseUrls = new Set<string>();
  readonly #faults = new Map<
    string,
    Array<{ fault: SlackFault; remaining: number; when: FaultPredicate | undefined }>
  >();
  readonly #hung = new Set<ServerResponse>();

  constructor(deps: WebApiDeps) {
    this.#deps = deps;
  }

  /** A fresh response_url whose POSTs are recorded. */
  issueResponseUrl(): string {
    const url = `${this.#deps.base()}/commands/${this.#deps.ctx.teamId}/${this.#responseUrls.size + 1}/${randomUUID()}`;
    this.#responseUrls.add(url);
    return url;
  }

  /**
   * Answers the next `times` calls of `method` with `fault`; FIFO per method. With `when`, only
   * calls whose parameters (token removed) pass it.
   */
  failNext(method: string, fault: SlackFault, times: number, when?: FaultPredicate): void {
    if (!Number.isInteger(times) || times < 1) throw new Error(`failNext: times must be ≥ 1, got ${times}`);
    const queue = this.#faults.get(method) ?? [];
    queue.push({ fault, remaining: times, when });
    this.#faults.set(method, queue);
  }

  /** Drops the requests held by `{hang: true}` and `{hangAfter: true}` faults. */
  close(): void {
    for (const res of this.#hung) res.destroy();
    this.#hung.clear();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    try {
      const method = /^\/api\/([A-Za-z0-9_.]+)$/.exec(url.pathname)?.[1];
      if (method !== undefined && req.method === "POST") return await this.#api(req, res, url, method);
      if (this.#deps.files.serve(req, res, url.pathname, this.#deps.botToken)) return;
      if (url.pathname.startsWith("/commands/") && req.method === "POST") {
        return await this.#responseUrl(req, res, `${this.#deps.base()}${url.pathname}`);
      }
      this.#send(res, 404, { ok: false, error: "unknown_method" });
    } catch (error) {
      const status = error instanceof HttpError ? error.status : 500;
      this.#send(res, status, { ok: false, error: error instanceof Error ? error.message : String(error) });
    }
  }

  async #responseUrl(req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
    const body = (await readBody(req, this.#deps.maxBodyBytes)).toString("utf8");
    if (!this.#responseUrls.has(url)) return this.#send(res, 404, { ok: false, error: "expired_url" });
    let parsed: unknown = body;
    try {
      parsed = JSON.parse(body);
    } catch {
      // Recorded as text.
    }
    this.responses.push({ url, body: parsed, at: this.#deps.now() });
    this.#send(res, 200, { ok: true });
  }

  async #api(req: IncomingMessage, res: ServerResponse, url: URL, method: string): Promise<void> {
    const at = this.#deps.now();
    let params: Params;
    try {
      const body = await readBody(req, this.#deps.maxBodyBytes);
      params = parseParams(url.searchParams, req.headers["content-type"] ?? "", body);
    } catch (error) {
      if (!(error instanceof SlackApiError)) throw error;
      this.calls.push({ method, params: {}, token: requestToken(req, {}), at });
      return this.#send(res, 200, error.toBody());
    }
    const token = requestToken(req, params);
    const { token: _token, ...recorded } = params;
    this.calls.push({ method, params: recorded, token, at });
    const fault = this.#takeFault(method, recorded);
    if (fault && !("hangAfter" in fault)) return this.#answerFault(res, fault);
    const headers: Record<string, string> = {};
    try {
      const result = this.#call(method, params, token, headers);
      for (const listener of this.carriedOut) listener(method, recorded, result);
      // Done, but the answer never leaves: the client cannot know it worked (a crash, a timeout).
      if (fault) return this.#answerFault(res, { hang: true });
      this.#send(res, 200, { ok: true, ...result }, headers);
      for (const listener of this.answered) listener(method, recorded);
    } catch (error) {
      if (!(error instanceof SlackApiError)) throw error;
      this.#send(res, 200, error.toBody(), headers);
    }
  }

  /**
   * Authenticates and runs one method. apps.connections.open takes the app token, everything
   * else the bot token; the other kind is `not_allowed_token_type`, no token `not_authed`, a
   * wrong one `invalid_auth`. Once the bot token is accepted, `x-oauth-scopes` lists its scopes.
   */
  #call(
    method: string,
    params: Params,
    token: string | undefined,
    headers: Record<string, string>,
  ): Record<string, unknown> {
    const { botToken, appToken, ctx, hub } = this.#deps;
    if (method === "apps.connections.open") {
      if (token === undefined) throw new SlackApiError("not_authed");
      if (token === botToken) throw new SlackApiError("not_allowed_token_type");
      if (token !== appToken) throw new SlackApiError("invalid_auth");
      return { url: hub.issueUrl(this.#deps.port()) };
    }
    const handler = slackMethods[method];
    if (!handler) throw new SlackApiError("unknown_method", { req_method: method });
    if (token === undefined) throw new SlackApiError("not_authed");
    if (token === appToken) throw new SlackApiError("not_allowed_token_type");
    if (token !== botToken) throw new SlackApiError("invalid_auth");
    headers["x-oauth-scopes"] = ctx.scopes.join(",");
    return handler(ctx, params);
  }

  #takeFault(method: string, params: Record<string, unknown>): SlackFault | undefined {
    const queue = this.#faults.get(method);
    const at = queue?.findIndex((f) => f.when === undefined || f.when(params)) ?? -1;
    const head = queue?.[at];
    if (!queue || !head) return undefined;
    head.remaining -= 1;
    if (head.remaining <= 0) queue.splice(at, 1);
    return head.fault;
  }

  #answerFault(res: ServerResponse, fault: SlackFault): void {
    if ("hang" in fault || "hangAfter" in fault) {
      this.#hung.add(res);
      res.on("close", () => this.#hung.delete(res));
    } else if ("error" in fault) {
      this.#send(res, 200, { ok: false, error: fault.error, ...fault.fields });
    } else if (fault.status === 429 && "retryAfter" in fault) {
      this.#send(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(fault.retryAfter) });
    } else {
      const text = `fake HTTP ${fault.status}`;
      res.writeHead(fault.status, {
        "content-type": "text/plain",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    }
  }

  #send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  }
}
