/**
 * A local model server speaking both the OpenAI Chat Completions and the Anthropic Messages
 * wire protocols on 127.0.0.1. Tests and benchmarks script it; the gateway runs it when no
 * model API key is configured. Node built-ins only: it is loaded at start-up.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { anthropicDialect } from "./anthropic-dialect.js";
import { readConversation } from "./conversation.js";
import { demoTurn, SIMULATED } from "./demo-script.js";
import { openaiDialect } from "./openai-dialect.js";
import { estimateTokens, PromptCache } from "./prompt-cache.js";
import type {
  PlannedReply,
  Responder,
  ScriptedTurn,
  SimulatedError,
  SimulatedProtocol,
  SimulatedRequest,
  WireDialect,
} from "./types.js";

export type {
  Responder,
  ScriptedTurn,
  SimulatedError,
  SimulatedProtocol,
  SimulatedRequest,
  SimulatedUsage,
} from "./types.js";

/** Options of {@link ModelSimulator}. */
export interface ModelSimulatorOptions {
  /** Port on 127.0.0.1; default 0 (any free port). */
  port?: number;
  /** Latency before each streamed chunk after the first; default 0. */
  chunkDelayMs?: number;
  /** Latency before the response headers; default 0. */
  firstByteDelayMs?: number;
  /** Characters of text (and of tool arguments) per streamed delta; default 16. */
  chunkChars?: number;
  /**
   * How many requests `requests` keeps, newest last; default all (tests read them). The
   * gateway's built-in simulator keeps a few, so a long-running daemon does not grow.
   */
  keepRequests?: number;
}

const MAX_ECHO_CHARS = 200;

/**
 * The reply when nothing is scripted: the demo script's next step when the conversation is one
 * of its requests (see demo-script.ts: reminders, memory, assignments), else a deterministic text
 * that says it is simulated and echoes the last user text (truncated to 200 characters).
 */
export const defaultResponder: Responder = (request) => {
  const conversation = readConversation(request.body);
  const demo = demoTurn(conversation);
  if (demo) return demo;
  const said = conversation.ask;
  const echo = said.length > MAX_ECHO_CHARS ? `${said.slice(0, MAX_ECHO_CHARS)}…` : said;
  return { text: `${SIMULATED}: you said "${echo}".` };
};

const DIALECTS: Record<SimulatedProtocol, WireDialect> = {
  openai: openaiDialect,
  anthropic: anthropicDialect,
};
const ROUTES: Record<string, SimulatedProtocol> = {
  "/v1/chat/completions": "openai",
  "/v1/messages": "anthropic",
};

/**
 * The simulator. Lifecycle: `start()`, then `url`; `close()` drops every connection, hanging
 * ones included. Every request is recorded in `requests` before it is answered; each request
 * consumes one scripted turn (FIFO, across both protocols): its API key's own turns first
 * (`scriptFor`), else the shared script's (`script`), else the default responder answers.
 */
export class ModelSimulator {
  /** Every request received, in arrival order. */
  readonly requests: SimulatedRequest[] = [];
  readonly #port: number;
  readonly #chunkDelayMs: number;
  readonly #keepRequests: number;
  readonly #firstByteDelayMs: number;
  readonly #chunkChars: number;
  readonly #cache = new PromptCache();
  readonly #closing = new AbortController();
  readonly #waiters = new Set<() => void>();
  #script: ScriptedTurn[] = [];
  /** Per-API-key scripts (`scriptFor`); a key's entry is removed once it runs empty. */
  readonly #scriptsByKey = new Map<string, ScriptedTurn[]>();
  #responder: Responder = defaultResponder;
  #server: Server | undefined;
  #url: string | undefined;
  #seq = 0;

  constructor(options: ModelSimulatorOptions = {}) {
    this.#port = checkInteger("port", options.port ?? 0, 0);
    this.#chunkDelayMs = checkInteger("chunkDelayMs", options.chunkDelayMs ?? 0, 0);
    this.#keepRequests = checkInteger("keepRequests", options.keepRequests ?? Number.MAX_SAFE_INTEGER, 0);
    this.#firstByteDelayMs = checkInteger("firstByteDelayMs", options.firstByteDelayMs ?? 0, 0);
    this.#chunkChars = checkInteger("chunkChars", options.chunkChars ?? 16, 1);
  }

  /** Listens on 127.0.0.1. */
  async start(): Promise<void> {
    if (this.#server) throw new Error("ModelSimulator already started");
    const server = createServer((req, res) => void this.#handle(req, res));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#port, "127.0.0.1", () => resolve());
    });
    this.#url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Base URL, e.g. `http://127.0.0.1:PORT` (the OpenAI SDK wants `${url}/v1`); kept after close(). */
  get url(): string {
    if (this.#url === undefined) throw new Error("ModelSimulator is not started");
    return this.#url;
  }

  /** Stops listening and destroys every open connection (streams and hanging requests). */
  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#closing.abort();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** Appends turns to the FIFO script. */
  script(...turns: ScriptedTurn[]): void {
    this.#script.push(...turns);
  }

  /**
   * Appends turns to the FIFO script of one API key: a request carrying `apiKey` (see
   * `SimulatedRequest.apiKey`) takes its next turn from here first, and falls through to the
   * shared script once these are used up. Lets a test fail one key (a 429 on key A) while
   * another answers. Throws a RangeError for an empty key.
   */
  scriptFor(apiKey: string, ...turns: ScriptedTurn[]): void {
    if (apiKey === "") throw new RangeError("ModelSimulator.scriptFor: got an empty apiKey, expected a key");
    const queue = this.#scriptsByKey.get(apiKey) ?? [];
    queue.push(...turns);
    if (queue.length > 0) this.#scriptsByKey.set(apiKey, queue);
  }

  /** Drops every scripted turn not yet consumed, the per-key ones (`scriptFor`) included. */
  clearScript(): void {
    this.#script = [];
    this.#scriptsByKey.clear();
  }

  /** Sets the responder used when the script is empty. */
  setDefault(responder: Responder): void {
    this.#responder = responder;
  }

  /** Resolves with `requests` once at least `n` were received; rejects after `timeoutMs`. */
  waitForRequests(n: number, timeoutMs: number): Promise<SimulatedRequest[]> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.requests.length < n) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(this.requests);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`waitForRequests: ${this.requests.length}/${n} requests after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const routed = req.method === "POST" ? ROUTES[path] : undefined;
    const protocol = routed ?? guessProtocol(path, req);
    const dialect = DIALECTS[protocol];
    const seq = ++this.#seq;
    const requestId = `req_sim_${seq}`;
    // Stops pacing and writing once the client goes away or the simulator closes.
    const gone = new AbortController();
    res.once("close", () => gone.abort());
    const signal = AbortSignal.any([gone.signal, this.#closing.signal]);
    try {
      const raw = await readBody(req);
      const body = parseJson(raw);
      const apiKey = apiKeyOf(protocol, req);
      const request: SimulatedRequest = {
        protocol,
        method: req.method ?? "GET",
        path,
        headers: flattenHeaders(req),
        ...(apiKey !== undefined ? { apiKey } : {}),
        body,
        timeMs: Date.now(),
      };
      this.#record(request);
      const fail = (error: SimulatedError) => sendError(res, dialect, error, requestId);
      if (!routed) return fail({ status: 404, message: `Unknown path ${req.method} ${path}` });
      if (apiKey === undefined) return fail({ status: 401 });
      if (!isRecord(body) || !Array.isArray(body.messages) || typeof body.model !== "string") {
        return fail({ status: 400, message: "body must be JSON with `model` and `messages`" });
      }
      const turn = this.#nextTurn(apiKey) ?? (await this.#responder(request));
      if ("hang" in turn) return; // the socket stays open until the client or close() ends it
      if (this.#firstByteDelayMs > 0) await delay(this.#firstByteDelayMs, undefined, { signal });
      if ("error" in turn) return fail(turn.error);
      const reply = this.#plan(protocol, body, turn, seq);
      const headers = { [dialect.requestIdHeader]: requestId };
      if (body.stream !== true) {
        if ("dropAfterChunks" in turn) return void res.destroy();
        if ("midStreamError" in turn) return fail({ status: 500, ...turn.midStreamError });
        res.writeHead(200, { "content-type": "application/json", ...headers });
        return void res.end(JSON.stringify(dialect.json(reply)));
      }
      const frames =
        "midStreamError" in turn
          ? dialect.midStreamFrames(reply, turn.midStreamError)
          : dialect.streamFrames(reply);
      // A drop always happens before the terminating frame.
      const dropAt =
        "dropAfterChunks" in turn ? Math.min(turn.dropAfterChunks, frames.length - 1) : undefined;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
      res.flushHeaders();
      const chunkDelayMs = turn.chunkDelayMs ?? this.#chunkDelayMs;
      for (const [i, frame] of frames.entries()) {
        if (i === dropAt) break;
        if (i > 0 && chunkDelayMs > 0) await delay(chunkDelayMs, undefined, { signal });
        await writeFrame(res, frame);
      }
      if (dropAt !== undefined) res.destroy();
      else res.end();
    } catch {
      // The client left, the simulator closed, or a write failed: nothing left to answer.
      res.destroy();
    }
  }

  /** The key's next scripted turn, else the shared script's; undefined when both are empty. */
  #nextTurn(apiKey: string): ScriptedTurn | undefined {
    const own = this.#scriptsByKey.get(apiKey);
    const turn = own?.shift();
    if (own?.length === 0) this.#scriptsByKey.delete(apiKey);
    return turn ?? this.#script.shift();
  }

  #record(request: SimulatedRequest): void {
    this.requests.push(request);
    if (this.requests.length > this.#keepRequests)
      this.requests.splice(0, this.requests.length - this.#keepRequests);
    for (const waiter of [...this.#waiters]) waiter();
  }

  #plan(
    protocol: SimulatedProtocol,
    body: Record<string, unknown>,
    turn: ScriptedTurn,
    seq: number,
  ): PlannedReply {
    const text = "text" in turn && typeof turn.text === "string" ? turn.text : "";
    const prefix = protocol === "openai" ? "call_sim" : "toolu_sim";
    const toolCalls =
      "toolCalls" in turn
        ? turn.toolCalls.map((call, i) => ({
            id: `${prefix}_${seq}_${i}`,
            name: call.name,
            argsJson: JSON.stringify(call.args ?? {}),
          }))
        : [];
    const outputChars = text.length + toolCalls.reduce((n, c) => n + c.name.length + c.argsJson.length, 0);
    const measured = this.#cache.measure(protocol, body);
    const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
    return {
      seq,
      model: body.model as string,
      text,
      toolCalls,
      usage: { ...measured, outputTokens: Math.max(1, estimateTokens(outputChars)), ...turn.usage },
      stopReason: toolCalls.length > 0 ? "tool_use" : "end_turn",
      chunkChars: this.#chunkChars,
      includeUsage: streamOptions.include_usage === true,
    };
  }
}

function checkInteger(field: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`ModelSimulatorOptions.${field}: got ${value}, expected an integer >= ${min}`);
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function guessProtocol(path: string, req: IncomingMessage): SimulatedProtocol {
  return path.startsWith("/v1/messages") || req.headers["anthropic-version"] !== undefined
    ? "anthropic"
    : "openai";
}

/**
 * The request's credential: each protocol's own header first (Anthropic `x-api-key`, OpenAI
 * `authorization: Bearer`), then the other one (Anthropic OAuth tokens come as a bearer).
 */
function apiKeyOf(protocol: SimulatedProtocol, req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  const bearer = typeof auth === "string" ? /^Bearer (\S+)/.exec(auth)?.[1] : undefined;
  const header = req.headers["x-api-key"];
  const xApiKey = typeof header === "string" ? header : undefined;
  return protocol === "anthropic" ? (xApiKey ?? bearer) : (bearer ?? xApiKey);
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(raw: string): unknown {
  try {
    return raw === "" ? undefined : JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function writeFrame(res: ServerResponse, frame: string): Promise<void> {
  return new Promise((resolve, reject) => res.write(frame, (err) => (err ? reject(err) : resolve())));
}

function sendError(
  res: ServerResponse,
  dialect: WireDialect,
  error: SimulatedError,
  requestId: string,
): void {
  const rendered = dialect.error(error, requestId);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [dialect.requestIdHeader]: requestId,
  };
  if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(error.retryAfterSeconds);
  if (error.retryAfterMs !== undefined) headers["retry-after-ms"] = String(error.retryAfterMs);
  res.writeHead(rendered.status, headers);
  res.end(JSON.stringify(rendered.body));
}
