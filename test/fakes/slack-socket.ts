/**
 * Socket Mode for the fake Slack server: the `/link` WebSocket endpoint behind one-use tickets
 * from `apps.connections.open`, the `hello` / `disconnect` frames, envelopes and their acks.
 * As on Slack, an envelope not acked when its socket closes is sent again (retry_attempt + 1,
 * retry_reason "timeout") on the next connection; optionally also after a timeout on the same one.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import type { EnvelopeAck } from "./slack-types.js";

/** Envelope kinds Slack sends over Socket Mode. */
export type EnvelopeType = "events_api" | "slash_commands" | "interactive";

interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

interface Envelope {
  readonly id: string;
  /** Delivery order: envelopes sent again after a socket dies keep their place. */
  readonly seq: number;
  readonly type: EnvelopeType;
  readonly payload: unknown;
  readonly acceptsResponsePayload: boolean;
  retryAttempt: number;
  retryReason: string;
  /** The socket the latest attempt was written to; undefined while queued. */
  socket: WebSocket | undefined;
  acked: boolean;
  /** Callers waiting for the next write of this envelope. */
  writeWaiters: Array<Waiter<void>>;
  timer: NodeJS.Timeout | undefined;
}

/** Options of the {@link SocketHub}. */
export interface SocketHubOptions {
  appId: string;
  /** 0: never re-send on the same socket. */
  resendUnackedAfterMs: number;
  maxRetryAttempts: number;
}

/** Marks a promise handled, so leaving it unobserved is no error; awaiting it still throws. */
export function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}

/** Socket Mode connections, envelopes and acks. */
export class SocketHub {
  /** Every ack frame received, in order. */
  readonly acks: EnvelopeAck[] = [];
  readonly #options: SocketHubOptions;
  readonly #wss = new WebSocketServer({ noServer: true });
  /** Open sockets in the order they connected; the last is the current one. */
  readonly #sockets: WebSocket[] = [];
  readonly #tickets = new Set<string>();
  readonly #envelopes = new Map<string, Envelope>();
  /** Envelopes waiting for a connection, in delivery order. */
  readonly #pending: Envelope[] = [];
  readonly #ackWaiters = new Map<string, Array<Waiter<EnvelopeAck>>>();
  #opened = 0;
  #seq = 0;
  #closed = false;

  constructor(options: SocketHubOptions) {
    this.#options = options;
  }

  /** Issues a one-use ticket and returns the WebSocket URL (what apps.connections.open answers). */
  issueUrl(port: number): string {
    const ticket = randomUUID();
    this.#tickets.add(ticket);
    this.#opened += 1;
    return `ws://127.0.0.1:${port}/link?ticket=${ticket}&app_id=${this.#options.appId}`;
  }

  /** Successful apps.connections.open calls so far. */
  get opened(): number {
    return this.#opened;
  }

  /** Open sockets. */
  get open(): number {
    return this.#sockets.length;
  }

  /**
   * Takes an HTTP upgrade: `/link` with a valid ticket becomes a socket (and gets `hello`);
   * a missing or used ticket is refused with 401. Returns false for other paths.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/link" && url.pathname !== "/link/") return false;
    const ticket = url.searchParams.get("ticket") ?? "";
    if (this.#closed || !this.#tickets.delete(ticket)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return true;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onConnection(ws));
    return true;
  }

  /**
   * Queues an envelope for the current socket (sent at once when one is open). `written`
   * resolves once the frame has been written to a socket, not when it is acked.
   */
  deliver(
    type: EnvelopeType,
    payload: unknown,
    acceptsResponsePayload: boolean,
    retryAttempt = 0,
  ): { envelopeId: string; written: Promise<void> } {
    if (this.#closed) throw new Error("FakeSlack is closed");
    const envelope: Envelope = {
      id: randomUUID(),
      seq: ++this.#seq,
      type,
      payload,
      acceptsResponsePayload,
      retryAttempt,
      retryReason: retryAttempt > 0 ? "timeout" : "",
      socket: undefined,
      acked: false,
      writeWaiters: [],
      timer: undefined,
    };
    this.#envelopes.set(envelope.id, envelope);
    const written = this.#whenWritten(envelope);
    this.#pending.push(envelope);
    this.#flush();
    return { envelopeId: envelope.id, written };
  }

  /** Sends an envelope again (Slack's redelivery), with `retryAttempt` (default the next one). */
  redeliver(envelopeId: string, retryAttempt?: number): Promise<void> {
    const envelope = this.#envelopes.get(envelopeId);
    if (!envelope) throw new Error(`FakeSlack: no envelope ${envelopeId}`);
    clearTimeout(envelope.timer);
    envelope.retryAttempt = retryAttempt ?? envelope.retryAttempt + 1;
    envelope.retryReason = "timeout";
    envelope.acked = false;
    envelope.socket = undefined;
    const written = this.#whenWritten(envelope);
    if (!this.#pending.includes(envelope)) this.#pending.push(envelope);
    this.#flush();
    return written;
  }

  /** The first ack of the envelope, if any. */
  ackOf(envelopeId: string): { payload?: unknown } | undefined {
    const ack = this.acks.find((a) => a.envelope_id === envelopeId);
    return ack ? ("payload" in ack ? { payload: ack.payload } : {}) : undefined;
  }

  /** Resolves with the envelope's first ack, already received or future; rejects after `timeoutMs`. */
  waitForAck(envelopeId: string, timeoutMs: number): Promise<EnvelopeAck> {
    const existing = this.acks.find((a) => a.envelope_id === envelopeId);
    if (existing) return Promise.resolve(existing);
    if (this.#closed) return quiet(Promise.reject(new Error("FakeSlack is closed")));
    return quiet(
      new Promise<EnvelopeAck>((resolve, reject) => {
        const timer = setTimeout(() => {
          remove();
          reject(new Error(`FakeSlack: envelope ${envelopeId} not acked within ${timeoutMs} ms`));
        }, timeoutMs);
        timer.unref();
        const waiter: Waiter<EnvelopeAck> = {
          resolve: (ack) => {
            clearTimeout(timer);
            resolve(ack);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
        const list = this.#ackWaiters.get(envelopeId) ?? [];
        list.push(waiter);
        this.#ackWaiters.set(envelopeId, list);
        const remove = () => {
          const current = this.#ackWaiters.get(envelopeId) ?? [];
          this.#ackWaiters.set(
            envelopeId,
            current.filter((w) => w !== waiter),
          );
        };
      }),
    );
  }

  /** Sends `{type:"disconnect", reason}` on the current socket; resolves once written. */
  disconnect(reason: string): Promise<void> {
    const ws = this.#current();
    if (!ws) return Promise.reject(new Error("FakeSlack: no open Socket Mode connection"));
    const frame = { type: "disconnect", reason, debug_info: { host: "applink-fake-1" } };
    return new Promise((resolve, reject) => {
      ws.send(JSON.stringify(frame), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Terminates the current socket without a close frame, as a network failure would. */
  drop(): void {
    const ws = this.#current();
    if (!ws) throw new Error("FakeSlack: no open Socket Mode connection");
    ws.terminate();
  }

  /** Terminates every socket, rejects every waiter and clears every timer. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new Error("FakeSlack closed");
    for (const envelope of this.#envelopes.values()) {
      clearTimeout(envelope.timer);
      for (const waiter of envelope.writeWaiters.splice(0)) waiter.reject(closed);
    }
    for (const waiters of this.#ackWaiters.values()) for (const waiter of waiters) waiter.reject(closed);
    this.#ackWaiters.clear();
    for (const ws of [...this.#sockets]) ws.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  // ─── internals ───────────────────────────────────────────────────────────────────────────

  #whenWritten(envelope: Envelope): Promise<void> {
    return quiet(new Promise<void>((resolve, reject) => envelope.writeWaiters.push({ resolve, reject })));
  }

  #onConnection(ws: WebSocket): void {
    this.#sockets.push(ws);
    ws.on("error", () => {}); // A reset socket also closes; `close` handles it.
    ws.on("message", (data, isBinary) => {
      if (!isBinary) this.#onFrame(frameText(data));
    });
    ws.on("close", () => this.#onClose(ws));
    const hello = {
      type: "hello",
      num_connections: this.#sockets.length,
      debug_info: { host: "applink-fake-1", build_number: 1, approximate_connection_time: 18060 },
      connection_info: { app_id: this.#options.appId },
    };
    ws.send(JSON.stringify(hello));
    this.#flush();
  }

  /** The most recently opened socket still open. */
  #current(): WebSocket | undefined {
    for (let i = this.#sockets.length - 1; i >= 0; i -= 1) {
      const ws = this.#sockets[i];
      if (ws?.readyState === WebSocket.OPEN) return ws;
    }
    return undefined;
  }

  #flush(): void {
    const ws = this.#current();
    if (!ws) return;
    for (const envelope of this.#pending.splice(0)) this.#write(envelope, ws);
  }

  #write(envelope: Envelope, ws: WebSocket): void {
    envelope.socket = ws;
    const frame = {
      envelope_id: envelope.id,
      type: envelope.type,
      payload: envelope.payload,
      accepts_response_payload: envelope.acceptsResponsePayload,
      retry_attempt: envelope.retryAttempt,
      retry_reason: envelope.retryReason,
    };
    ws.send(JSON.stringify(frame), (error) => {
      if (error) return; // The socket is closing: `close` queues the envelope again.
      for (const waiter of envelope.writeWaiters.splice(0)) waiter.resolve();
    });
    const { resendUnackedAfterMs, maxRetryAttempts } = this.#options;
    if (resendUnackedAfterMs > 0) {
      clearTimeout(envelope.timer);
      envelope.timer = setTimeout(() => {
        if (envelope.acked || envelope.socket !== ws || envelope.retryAttempt >= maxRetryAttempts) return;
        this.#requeue(envelope);
        this.#flush();
      }, resendUnackedAfterMs);
      envelope.timer.unref();
    }
  }

  #requeue(envelope: Envelope): void {
    clearTimeout(envelope.timer);
    envelope.socket = undefined;
    envelope.retryAttempt += 1;
    envelope.retryReason = "timeout";
    this.#pending.push(envelope);
  }

  #onFrame(text: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return; // Slack ignores what it cannot parse.
    }
    if (typeof frame !== "object" || frame === null || !("envelope_id" in frame)) return;
    const { envelope_id: id } = frame as { envelope_id: unknown };
    if (typeof id !== "string") return;
    const ack: EnvelopeAck = { envelope_id: id };
    if ("payload" in frame) ack.payload = (frame as { payload: unknown }).payload;
    this.acks.push(ack);
    const envelope = this.#envelopes.get(id);
    if (envelope) {
      envelope.acked = true;
      clearTimeout(envelope.timer);
    }
    for (const waiter of this.#ackWaiters.get(id) ?? []) waiter.resolve(ack);
    this.#ackWaiters.delete(id);
  }

  #onClose(ws: WebSocket): void {
    const at = this.#sockets.indexOf(ws);
    if (at >= 0) this.#sockets.splice(at, 1);
    if (this.#closed) return;
    const orphans = [...this.#envelopes.values()].filter((e) => e.socket === ws && !e.acked);
    for (const envelope of orphans) {
      if (envelope.retryAttempt >= this.#options.maxRetryAttempts) {
        clearTimeout(envelope.timer);
        envelope.socket = undefined; // Slack gives up after its last retry.
      } else {
        this.#requeue(envelope);
      }
    }
    // In-flight envelopes go out again before ones queued after them.
    this.#pending.sort((a, b) => a.seq - b.seq);
    this.#flush();
  }
}
