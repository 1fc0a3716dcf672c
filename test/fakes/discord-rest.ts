/**
 * The HTTP side of the fake Discord: routes `/api/v10/...` requests to their handlers, checks
 * `Authorization: Bot <token>`, records every call, applies scripted faults (429s, error
 * statuses, hangs), adds X-RateLimit-* headers, and serves attachment bytes under `/cdn/` and
 * `/media/`.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  DiscordError,
  type ParsedBody,
  answerFault,
  faultMatches,
  parseBody,
  rateLimitHeaders,
  readBody,
  sendJson,
} from "./discord-http.js";
import type { RestReply, RouteDef } from "./discord-routes.js";
import type { DiscordStore } from "./discord-store.js";
import type { FaultMatch, RecordedCall, RestFault } from "./discord-types.js";

/** Told after each REST response is written: method, path (after /api/v10), request body, status. */
export type AnsweredListener = (method: string, path: string, body: unknown, status: number) => void;

/** Selects recorded calls: method, exact path or RegExp, route template. */
export interface CallFilter {
  method?: string;
  path?: string | RegExp;
  route?: string;
}

interface CompiledRoute {
  def: RouteDef;
  regex: RegExp;
  names: string[];
}

interface QueuedFault {
  match: FaultMatch;
  fault: RestFault;
  remaining: number;
}

const API_PREFIX = "/api/v10";

function compile(def: RouteDef): CompiledRoute {
  const names: string[] = [];
  const source = def.template
    .split("/")
    .map((part) => {
      if (!part.startsWith(":")) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(part.slice(1));
      return "([^/]+)";
    })
    .join("/");
  return { def, regex: new RegExp(`^${source}/?$`), names };
}

/** Answers the fake's HTTP requests (everything but the gateway upgrade). */
export class RestApi {
  readonly calls: RecordedCall[] = [];
  readonly answered = new Set<AnsweredListener>();
  readonly #routes: CompiledRoute[];
  readonly #token: string;
  readonly #store: DiscordStore;
  readonly #now: () => number;
  readonly #changed: () => void;
  readonly #faults: QueuedFault[] = [];
  readonly #hung = new Set<ServerResponse>();

  constructor(deps: {
    routes: RouteDef[];
    token: string;
    store: DiscordStore;
    now: () => number;
    changed: () => void;
  }) {
    this.#routes = deps.routes.map(compile);
    this.#token = deps.token;
    this.#store = deps.store;
    this.#now = deps.now;
    this.#changed = deps.changed;
  }

  /** Queues a fault for the next `times` requests matching `match` (FIFO among matching faults). */
  failNext(match: FaultMatch, fault: RestFault, times: number): void {
    if (!Number.isInteger(times) || times < 1) throw new Error(`failNext: times must be ≥ 1, got ${times}`);
    this.#faults.push({ match, fault, remaining: times });
  }

  /** Recorded calls matching `filter`. */
  filtered(filter: CallFilter): RecordedCall[] {
    return this.calls.filter(
      (c) =>
        (filter.method === undefined || c.method === filter.method.toUpperCase()) &&
        (filter.route === undefined || c.route === filter.route) &&
        (filter.path === undefined ||
          (typeof filter.path === "string" ? c.path === filter.path : filter.path.test(c.path))),
    );
  }

  /** Drops requests held by hang faults. */
  close(): void {
    for (const res of this.#hung) res.destroy();
    this.#hung.clear();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = (req.method ?? "GET").toUpperCase();
    const at = this.#now();
    if (/^\/(cdn|media)\/attachments\//.test(url.pathname)) return this.#serveFile(res, method, url, at);
    const inApi = url.pathname.startsWith(`${API_PREFIX}/`);
    const path = inApi ? url.pathname.slice(API_PREFIX.length) : url.pathname;
    const call: RecordedCall = {
      method,
      path,
      query: Object.fromEntries(url.searchParams),
      body: undefined,
      status: 0,
      at,
    };
    this.calls.push(call);
    let body: ParsedBody;
    try {
      body = await parseBody(String(req.headers["content-type"] ?? ""), await readBody(req));
    } catch (error) {
      const e =
        error instanceof DiscordError
          ? error
          : new DiscordError(400, 50109, "The request body contains invalid JSON.");
      return this.#finish(res, call, e.status, e.toBody(), {}, undefined);
    }
    call.body = body.files.length > 0 ? { ...body.json, files: body.files.map((f) => f.name) } : body.value;
    const found = inApi ? this.#match(method, path) : undefined;
    if (!found || found === "method") {
      const [status, message] =
        found === "method" ? [405, "405: Method Not Allowed"] : [404, "404: Not Found"];
      return this.#finish(res, call, status, { message, code: 0 }, {}, body);
    }
    const { route, params } = found;
    call.route = route.def.template;
    if (route.def.auth && req.headers.authorization !== `Bot ${this.#token}`) {
      return this.#finish(res, call, 401, { message: "401: Unauthorized", code: 0 }, {}, body);
    }
    if (body.invalid) {
      return this.#finish(
        res,
        call,
        400,
        { message: "The request body contains invalid JSON.", code: 50109 },
        {},
        body,
      );
    }
    const bucket = createHash("sha1").update(`${method} ${route.def.template}`).digest("hex").slice(0, 32);
    let fault = this.#takeFault(method, path, body.value);
    if (fault && "until" in fault) {
      await fault.until.then(
        () => undefined,
        () => undefined,
      );
      fault = undefined;
    }
    if (fault && "hang" in fault) return this.#hold(res);
    if (fault && !("hangAfter" in fault)) {
      call.status = answerFault(res, fault, bucket, this.#now());
      return this.#answered(call, body);
    }
    let reply: RestReply;
    try {
      reply = route.def.handle({ method, path, params, query: url.searchParams, body });
    } catch (error) {
      const e =
        error instanceof DiscordError
          ? error
          : new DiscordError(
              500,
              0,
              `500: Internal Server Error (fake: ${error instanceof Error ? error.message : String(error)})`,
            );
      reply = { status: e.status, body: e.toBody() };
    }
    // Carried out, but the answer never leaves: the client cannot tell it worked.
    if (fault) return this.#hold(res);
    this.#finish(res, call, reply.status, reply.body, rateLimitHeaders(bucket, this.#now()), body);
  }

  #match(
    method: string,
    path: string,
  ): { route: CompiledRoute; params: Record<string, string> } | "method" | undefined {
    let methodMismatch = false;
    for (const route of this.#routes) {
      const m = route.regex.exec(path);
      if (!m) continue;
      if (route.def.method !== method) {
        methodMismatch = true;
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] ?? "");
      });
      return { route, params };
    }
    return methodMismatch ? "method" : undefined;
  }

  #takeFault(method: string, path: string, body: unknown): RestFault | undefined {
    const at = this.#faults.findIndex(
      (f) => faultMatches(f.match, method, path) && (f.match.when === undefined || f.match.when(body)),
    );
    const queued = this.#faults[at];
    if (!queued) return undefined;
    queued.remaining -= 1;
    if (queued.remaining <= 0) this.#faults.splice(at, 1);
    return queued.fault;
  }

  #hold(res: ServerResponse): void {
    this.#hung.add(res);
    res.on("close", () => this.#hung.delete(res));
    this.#changed();
  }

  #finish(
    res: ServerResponse,
    call: RecordedCall,
    status: number,
    body: unknown,
    headers: Record<string, string>,
    parsed: ParsedBody | undefined,
  ): void {
    call.status = status;
    sendJson(res, status, body, headers);
    this.#answered(call, parsed);
  }

  #answered(call: RecordedCall, parsed: ParsedBody | undefined): void {
    for (const listener of this.answered) listener(call.method, call.path, parsed?.value, call.status);
    this.#changed();
  }

  #serveFile(res: ServerResponse, method: string, url: URL, at: number): void {
    const path = url.pathname.replace(/^\/(cdn|media)/, "");
    const file = method === "GET" || method === "HEAD" ? this.#store.file(path) : undefined;
    const call: RecordedCall = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: undefined,
      status: 0,
      at,
    };
    this.calls.push(call);
    if (!file) {
      call.status = 404;
      res.writeHead(404, { "content-type": "text/plain", "content-length": "9" });
      res.end("Not Found");
    } else {
      call.status = 200;
      res.writeHead(200, { "content-type": file.contentType, "content-length": String(file.bytes.length) });
      res.end(method === "HEAD" ? undefined : file.bytes);
    }
    this.#changed();
  }
}
