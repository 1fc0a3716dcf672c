/**
 * How Slack's deliveries reach Bolt without losing one. Bolt's own receivers acknowledge an
 * Events API delivery before its listeners run, so a crash between the ack and the inbox commit
 * would lose the message. These receivers hand each delivery to `App.processEvent` with an ack
 * that only records, and acknowledge the transport once the listener has committed: a Socket
 * Mode envelope is acked (an unacked one Slack sends again), an HTTP request is answered 200
 * (503 makes Slack retry). Socket Mode reconnects on its own; each reconnect is logged and
 * counted. HTTP mode serves the Events API on the gateway's server, checking X-Slack-Signature
 * and refusing requests older than 5 minutes with 401.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { App, Receiver } from "@slack/bolt";
import type { SocketModeClient } from "@slack/socket-mode";
import { readBodyCapped } from "../../http/server.js";
import type { Logger } from "../../util/logger.js";
import type { RouteRegistrar } from "../types.js";

/** What the listener says about one delivery; Bolt's context carries it (customProperties). */
export interface DeliveryState {
  /** The delivery's message was not committed: do not acknowledge it, so Slack sends it again. */
  failed: boolean;
  /** The ack's payload (a slash command's ephemeral answer). */
  response: unknown;
}

/** The context key the delivery state travels under. */
export const DELIVERY = "switchyardDelivery";

/** Runs one delivery through Bolt and reports whether to acknowledge it, and with what. */
async function process(
  app: App,
  body: Record<string, unknown>,
  retryNum: number | undefined,
  retryReason: string | undefined,
): Promise<DeliveryState> {
  const state: DeliveryState = { failed: false, response: undefined };
  await app.processEvent({
    body,
    ack: async (response?: unknown) => {
      if (response !== undefined) state.response = response;
    },
    ...(retryNum !== undefined ? { retryNum } : {}),
    ...(retryReason ? { retryReason } : {}),
    customProperties: { [DELIVERY]: state },
  });
  return state;
}

export interface SocketReceiverOptions {
  appToken: string;
  /** Web API root (apps.connections.open goes there). */
  apiUrl: string;
  /** Bolt's logger shape, for the socket client. */
  slackLogger: import("@slack/logger").Logger;
  logger: Logger;
  /** Pong wait and reconnect step of the socket client (default 5000 ms). */
  clientPingTimeoutMs?: number;
  onReconnected(): void;
}

/** Bolt's Receiver for Socket Mode that acks an envelope only once it is committed. */
export class DurableSocketReceiver implements Receiver {
  readonly #o: SocketReceiverOptions;
  #app: App | undefined;
  #client: SocketModeClient | undefined;
  #connectedOnce = false;
  #reconnecting = false;

  /** The socket was lost and is not back yet. */
  get reconnecting(): boolean {
    return this.#reconnecting;
  }

  constructor(options: SocketReceiverOptions) {
    this.#o = options;
  }

  init(app: App): void {
    this.#app = app;
  }

  async start(): Promise<void> {
    const { SocketModeClient } = await import("@slack/socket-mode");
    const o = this.#o;
    const client = new SocketModeClient({
      appToken: o.appToken,
      logger: o.slackLogger,
      clientOptions: { slackApiUrl: o.apiUrl },
      ...(o.clientPingTimeoutMs !== undefined ? { clientPingTimeout: o.clientPingTimeoutMs } : {}),
    });
    this.#client = client;
    client.on("reconnecting", () => {
      if (this.#reconnecting) return;
      this.#reconnecting = true;
      o.logger.warn("Slack Socket Mode connection lost; reconnecting");
    });
    client.on("connected", () => {
      if (this.#connectedOnce) {
        o.logger.info("Slack Socket Mode reconnected");
        o.onReconnected();
      }
      this.#connectedOnce = true;
      this.#reconnecting = false;
    });
    client.on(
      "slack_event",
      (args: {
        ack: (response?: unknown) => Promise<void>;
        envelope_id: string;
        body: Record<string, unknown>;
        retry_num?: number;
        retry_reason?: string;
      }) => {
        this.#deliver(args).catch((err: unknown) =>
          o.logger.error({ err, envelopeId: args.envelope_id }, "Slack envelope not handled"),
        );
      },
    );
    await client.start();
  }

  async stop(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    client.removeAllListeners("slack_event");
    await client.disconnect().catch(() => undefined);
  }

  async #deliver(args: {
    ack: (response?: unknown) => Promise<void>;
    envelope_id: string;
    body: Record<string, unknown>;
    retry_num?: number;
    retry_reason?: string;
  }): Promise<void> {
    const app = this.#app;
    if (!app || !this.#client) return; // stopping: unacked, Slack sends it again
    const state = await process(app, args.body, args.retry_num, args.retry_reason);
    if (state.failed) {
      this.#o.logger.warn(
        { envelopeId: args.envelope_id },
        "Slack envelope not acknowledged: its message was not committed; Slack sends it again",
      );
      return;
    }
    await args.ack(state.response);
  }
}

export interface HttpReceiverOptions {
  signingSecret: string;
  path: string;
  server: RouteRegistrar;
  logger: Logger;
  /** Bolt's request check (loaded with Bolt); throws when the signature or timestamp is wrong. */
  verify(): typeof import("@slack/bolt").verifySlackRequest | undefined;
  /** Time source of the 5-minute window (default Date.now). */
  now?: () => number;
}

/**
 * Bolt's Receiver for the Events API on the gateway's HTTP server: the route is registered at
 * construction and answers 503 until the app has started.
 */
export class GatewayHttpReceiver implements Receiver {
  readonly #o: HttpReceiverOptions;
  #app: App | undefined;
  #running = false;

  constructor(options: HttpReceiverOptions) {
    this.#o = options;
    options.server.route("POST", options.path, (req, res) => this.#handle(req, res));
  }

  init(app: App): void {
    this.#app = app;
  }

  async start(): Promise<void> {
    this.#running = true;
  }

  async stop(): Promise<void> {
    this.#running = false;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const bytes = await readBodyCapped(req, this.#o.server.maxBodyBytes);
    if (bytes === undefined) {
      res.writeHead(413).end();
      return;
    }
    const raw = bytes.toString("utf8");
    const verify = this.#o.verify();
    const app = this.#app;
    if (!verify || !app || !this.#running) {
      res.writeHead(503, { "retry-after": "5" }).end();
      return;
    }
    try {
      verify({
        signingSecret: this.#o.signingSecret,
        body: raw,
        headers: {
          "x-slack-signature": String(req.headers["x-slack-signature"] ?? ""),
          "x-slack-request-timestamp": Number(req.headers["x-slack-request-timestamp"]),
        },
        nowMilliseconds: (this.#o.now ?? Date.now)(),
      });
    } catch (err) {
      this.#o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "Slack request refused: bad signature or stale timestamp",
      );
      res.writeHead(401).end();
      return;
    }
    const body = parseBody(raw, String(req.headers["content-type"] ?? ""));
    if (!body) {
      res.writeHead(400).end();
      return;
    }
    if (body.ssl_check !== undefined) {
      res.writeHead(200).end();
      return;
    }
    if (body.type === "url_verification") {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ challenge: body.challenge }));
      return;
    }
    const retryNum = Number(req.headers["x-slack-retry-num"]);
    const retryReason = req.headers["x-slack-retry-reason"];
    const state = await process(
      app,
      body,
      Number.isInteger(retryNum) ? retryNum : undefined,
      typeof retryReason === "string" ? retryReason : undefined,
    );
    if (state.failed) {
      res.writeHead(503, { "retry-after": "5" }).end();
      return;
    }
    if (state.response === undefined) res.writeHead(200).end();
    else if (typeof state.response === "string") res.writeHead(200).end(state.response);
    else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(state.response));
  }
}

/** JSON (events), or form fields (slash commands), or a form `payload` of JSON (interactivity). */
function parseBody(raw: string, contentType: string): Record<string, unknown> | undefined {
  try {
    if (contentType.includes("application/x-www-form-urlencoded")) {
      const form = new URLSearchParams(raw);
      const payload = form.get("payload");
      if (payload !== null) return JSON.parse(payload) as Record<string, unknown>;
      return Object.fromEntries(form);
    }
    const parsed = JSON.parse(raw) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
