/**
 * One MCP server as the gateway sees it: started on first use (the SDK is imported then, so a
 * server that is configured but never used costs nothing), its tools listed at each start and on
 * `notifications/tools/list_changed`, each call bounded by the server's timeout. A server that
 * dies or fails to start is `crashed`: its calls fail at once with one line saying when it is
 * tried again, and it is restarted after the one backoff (util/backoff.ts). `stop` ends it (a
 * stdio server's whole process group).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import { backoffDelayMs } from "../../util/backoff.js";
import type { Clock, TimerHandle } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { McpServerError, oneLine } from "./mcp-error.js";
import type { StdioServerProcess } from "./stdio-transport.js";

/** Where a server is in its life. */
export type McpServerState = "not started" | "starting" | "running" | "crashed" | "stopped";

/** How to reach a server: a process to run, or an HTTP endpoint. */
export type McpEndpoint =
  | { type: "stdio"; process: StdioServerProcess }
  | { type: "http"; url: string; headers: Record<string, string> };

/** A tool as the server listed it, not yet checked (mcp-tools.ts checks it). */
export type McpListedTool = Record<string, unknown>;

/** What a call returned: the result object, loosely checked. */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

/** Options of an {@link McpServerConnection}. */
export interface McpServerConnectionOptions {
  name: string;
  endpoint: McpEndpoint;
  /** Time one call, and the start (at most START_LIMIT_MS), may take. */
  timeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** Told each time the tool list is (re)listed. */
  onTools(tools: readonly McpListedTool[]): void;
  /** Restart after a crash (the gateway); false for a one-off listing (`mcp list`, doctor). Default true. */
  restart?: boolean;
  /** The restart backoff. Default base 1 s, cap 60 s, Math.random. */
  backoff?: { baseMs: number; maxMs: number; random?: () => number };
}

/** Longest a start may take, whatever the server's timeout. */
export const START_LIMIT_MS = 30_000;
/** Pages of tools/list read at most (a server listing forever is cut there). */
const MAX_LIST_PAGES = 20;

const listResult = z.looseObject({
  tools: z.array(z.looseObject({})),
  nextCursor: z.string().optional(),
});
const callResult = z.looseObject({
  content: z.array(z.unknown()).optional(),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
});

/** One configured MCP server: its process or connection, its state, its restarts. */
export class McpServerConnection {
  readonly name: string;
  readonly #o: McpServerConnectionOptions;
  readonly #backoff: { baseMs: number; maxMs: number; random?: () => number };
  #state: McpServerState = "not started";
  #reason: string | undefined;
  #client: Client | undefined;
  #transport: Transport | undefined;
  /** The start in flight, if any; resolves when it settles (never rejects). */
  #starting: Promise<void> | undefined;
  /** Bumped at every start and at stop: callbacks of an older client are ignored. */
  #generation = 0;
  #attempt = 0;
  #startedAt = 0;
  #retryAt = 0;
  #timer: TimerHandle | undefined;
  #everRan = false;

  constructor(options: McpServerConnectionOptions) {
    this.name = options.name;
    this.#o = options;
    this.#backoff = options.backoff ?? { baseMs: 1_000, maxMs: 60_000 };
  }

  /** Its state now. */
  get state(): McpServerState {
    return this.#state;
  }

  /** Why it is crashed (`crashed: exit 1`, `start failed: …`); undefined otherwise. */
  get reason(): string | undefined {
    return this.#reason;
  }

  /** A stdio server's pid while it runs. */
  get pid(): number | undefined {
    const t = this.#transport as { pid?: number } | undefined;
    return t?.pid ?? undefined;
  }

  /** Starts it when it never was; resolves once that start settled (see `state`). Never rejects. */
  start(): Promise<void> {
    if (this.#state === "not started") this.#launch();
    return this.#starting ?? Promise.resolve();
  }

  /**
   * Waits for the first start (starting it if needed), at most until `signal` aborts. Later
   * restarts are not waited for: the tools listed before stay offered and their calls say why
   * they fail. Never rejects.
   */
  async ready(signal: AbortSignal): Promise<void> {
    if (this.#everRan || this.#state === "stopped") return;
    const started = this.start();
    if (signal.aborted) return;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([started, aborted]);
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  }

  /**
   * Calls one tool. Throws McpServerError: `restarting` (crashed, with when it is tried again),
   * `stopped`, `start_failed`, `timeout`, `call_failed`; each message is one line.
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult> {
    if (this.#state === "not started" || this.#state === "starting") await this.start();
    const client = this.#client;
    if (this.#state !== "running" || !client) throw this.#unavailable();
    const generation = this.#generation;
    try {
      return await client.request(
        { method: "tools/call", params: { name: tool, arguments: args } },
        callResult,
        {
          timeout: this.#o.timeoutMs,
          signal,
        },
      );
    } catch (err) {
      if (signal.aborted) throw err;
      // The server died under the call: say so, not "connection closed".
      if (generation !== this.#generation || this.#state !== "running") throw this.#unavailable();
      if (isTimeout(err))
        throw new McpServerError(
          "timeout",
          this.name,
          `mcp server ${this.name} did not answer ${tool} within ${this.#o.timeoutMs} ms`,
          { cause: err },
        );
      if (this.#o.endpoint.type === "http" && isConnectionLost(err)) {
        this.#crashed(generation, `connection lost: ${oneLine(err)}`);
        throw this.#unavailable();
      }
      throw new McpServerError("call_failed", this.name, `mcp ${this.name}.${tool} failed: ${oneLine(err)}`, {
        cause: err,
      });
    }
  }

  /** Ends it for good (a stdio server's process group included); no restart follows. */
  async stop(): Promise<void> {
    this.#state = "stopped";
    this.#generation++;
    this.#o.clock.clearTimeout(this.#timer);
    await this.#close();
  }

  /** The error a call gets while the server cannot take it. */
  #unavailable(): McpServerError {
    if (this.#state === "stopped")
      return new McpServerError(
        "stopped",
        this.name,
        `mcp server ${this.name} is stopped (the gateway is shutting down)`,
      );
    if (this.#state === "crashed" && this.#o.restart !== false) {
      const seconds = Math.max(1, Math.ceil((this.#retryAt - this.#o.clock.now()) / 1000));
      return new McpServerError(
        "restarting",
        this.name,
        `mcp server ${this.name} is restarting (${this.#reason ?? "crashed"}); try again in ${seconds} s`,
      );
    }
    return new McpServerError(
      "start_failed",
      this.name,
      `mcp server ${this.name} is not running (${this.#reason ?? "not started"})`,
    );
  }

  #launch(): void {
    this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const generation = ++this.#generation;
    this.#state = "starting";
    this.#starting = this.#connect(generation)
      .catch((err: unknown) => {
        if (generation !== this.#generation) return;
        this.#o.logger.warn({ server: this.name, err: oneLine(err) }, "mcp server did not start");
        this.#crashed(generation, `start failed: ${oneLine(err)}`);
      })
      .finally(() => {
        if (generation === this.#generation) this.#starting = undefined;
      });
  }

  async #connect(generation: number): Promise<void> {
    const limitMs = Math.min(this.#o.timeoutMs, START_LIMIT_MS);
    const [{ Client }, { ToolListChangedNotificationSchema }] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/types.js"),
    ]);
    const transport = await this.#newTransport();
    const client = new Client({ name: "switchyard", version: "1" }, { capabilities: {} });
    this.#client = client;
    this.#transport = transport;
    client.onerror = (err) =>
      this.#o.logger.debug({ server: this.name, err: oneLine(err) }, "mcp server noise");
    client.onclose = () => this.#crashed(generation, `crashed: ${describeEnd(transport)}`);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#list(client, generation).catch((err: unknown) =>
        this.#o.logger.warn({ server: this.name, err: oneLine(err) }, "mcp tools could not be re-listed"),
      );
    });
    try {
      await client.connect(transport, { timeout: limitMs });
      if (generation !== this.#generation) return;
      await this.#list(client, generation, limitMs);
    } catch (err) {
      if (generation === this.#generation) await this.#close();
      throw timeoutMessage(err, limitMs);
    }
    if (generation !== this.#generation) return;
    this.#state = "running";
    this.#reason = undefined;
    this.#everRan = true;
    this.#startedAt = this.#o.clock.now();
    this.#o.logger.info({ server: this.name, pid: this.pid }, "mcp server started");
  }

  async #newTransport(): Promise<Transport> {
    const endpoint = this.#o.endpoint;
    if (endpoint.type === "stdio") {
      const { GroupStdioTransport } = await import("./stdio-transport.js");
      return new GroupStdioTransport(endpoint.process);
    }
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    return new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: endpoint.headers },
    });
  }

  /** Lists every page of tools and hands them on, unless a newer start or a stop came first. */
  async #list(client: Client, generation: number, timeoutMs = this.#o.timeoutMs): Promise<void> {
    const tools: McpListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await client.request(
        { method: "tools/list", params: cursor !== undefined ? { cursor } : {} },
        listResult,
        { timeout: timeoutMs },
      );
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    if (generation === this.#generation) this.#o.onTools(tools);
  }

  #crashed(generation: number, reason: string): void {
    if (generation !== this.#generation || this.#state === "stopped" || this.#state === "crashed") return;
    const wasRunning = this.#state === "running";
    this.#state = "crashed";
    this.#reason = reason;
    if (wasRunning) this.#o.logger.warn({ server: this.name, reason }, "mcp server crashed");
    // A fresh start after a long quiet run begins the backoff again.
    if (this.#everRan && this.#o.clock.now() - this.#startedAt > this.#backoff.maxMs) this.#attempt = 0;
    this.#close().catch(() => {});
    if (this.#o.restart === false) return;
    const delayMs = backoffDelayMs(++this.#attempt, this.#backoff);
    this.#retryAt = this.#o.clock.now() + delayMs;
    this.#timer = this.#o.clock.setTimeout(
      () => {
        if (this.#state === "crashed" && generation === this.#generation) this.#launch();
      },
      delayMs,
      { unref: true },
    );
  }

  async #close(): Promise<void> {
    const client = this.#client;
    const transport = this.#transport;
    this.#client = undefined;
    this.#transport = undefined;
    if (client) client.onclose = undefined;
    try {
      if (client) await client.close();
      else await transport?.close();
    } catch {
      // already gone
    }
  }
}

/** How a stdio server ended (`exit 1`), or that an HTTP connection closed. */
function describeEnd(transport: Transport): string {
  const ended = (transport as { ended?: string }).ended;
  return ended ?? "connection closed";
}

function isTimeout(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === -32001;
}

/** A failed request that means the HTTP server is gone (refused, reset, unreachable). */
function isConnectionLost(err: unknown): boolean {
  const text = `${oneLine(err)} ${oneLine((err as { cause?: unknown })?.cause ?? "")}`;
  return /fetch failed|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|socket hang up/i.test(text);
}

/** A start's timeout said in the server's terms. */
function timeoutMessage(err: unknown, limitMs: number): unknown {
  return isTimeout(err) ? new Error(`did not answer within ${limitMs} ms`) : err;
}
