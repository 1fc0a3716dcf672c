/**
 * The fake Discord gateway: the `/gateway` WebSocket (JSON text frames only), HELLO / heartbeat
 * ACK, IDENTIFY (token and privileged-intent checks, READY then GUILD_CREATEs), sessions with
 * per-session sequence numbers and an event log so RESUME replays what the client missed, and
 * the server-side pushes tests use to disturb a connection (RECONNECT, INVALID_SESSION, a drop).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import type { ConnectionRecord } from "./discord-types.js";
import { Intent } from "./discord-wire.js";

/** A dispatch payload builder: the event's `d` for a session with these intents, or undefined to skip it. */
export type DispatchBuilder = (intents: number) => Record<string, unknown> | undefined;

/** What the gateway needs from the fake around it. */
export interface GatewayDeps {
  token: string;
  heartbeatIntervalMs: number;
  /** Whether IDENTIFY may ask for the MessageContent intent. */
  messageContentAllowed: boolean;
  now(): number;
  /** READY.d for a new session (session_id and resume_gateway_url are filled in here). */
  ready(): Record<string, unknown>;
  /** GUILD_CREATE.d for every guild. */
  guilds(): Array<Record<string, unknown>>;
  /** "ws://127.0.0.1:PORT". */
  wsBase(): string;
  /** Told after every change a waiter may be watching. */
  changed(): void;
}

/** Events kept per session for RESUME; a client further behind is told its session is gone. */
const MAX_LOG = 10_000;

interface Frame {
  op: 0;
  t: string;
  s: number;
  d: unknown;
}

interface Session {
  readonly id: string;
  readonly intents: number;
  seq: number;
  readonly log: Frame[];
  /** False once closed with 1000/1001, invalidated, or superseded: RESUME gets op 9. */
  alive: boolean;
  conn: Conn | undefined;
}

interface Conn {
  readonly ws: WebSocket;
  session: Session | undefined;
  /** Set once IDENTIFY or RESUME succeeded on this socket. */
  authenticated: boolean;
  readonly closed: Promise<void>;
}

/** Gateway close codes the fake sends, with Discord's reasons. */
export const CloseCode = {
  UnknownOpcode: [4001, "Unknown opcode."],
  DecodeError: [4002, "Error while decoding payload."],
  NotAuthenticated: [4003, "Not authenticated."],
  AuthenticationFailed: [4004, "Authentication failed."],
  AlreadyAuthenticated: [4005, "Already authenticated."],
  InvalidSeq: [4007, "Invalid seq."],
  InvalidShard: [4010, "Invalid shard."],
  InvalidApiVersion: [4012, "Invalid API version."],
  InvalidIntents: [4013, "Invalid intent(s)."],
  DisallowedIntents: [4014, "Disallowed intent(s)."],
} as const satisfies Record<string, readonly [number, string]>;

function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}

/** Gateway sockets, sessions and dispatches. */
export class Gateway {
  identifies = 0;
  resumes = 0;
  /**
   * The next RESUME also replays this many events the client already had (Discord may replay
   * from before the client's last seq): a client must not act on one twice.
   */
  replayOverlap = 0;
  /** Sockets accepted so far (refused ones included). */
  opened = 0;
  readonly connections: ConnectionRecord[] = [];
  /** IDENTIFY payloads received, token removed. */
  readonly identifyPayloads: Array<Record<string, unknown>> = [];
  /** Every frame received from clients, in order. */
  readonly received: Array<{ op: unknown; d: unknown }> = [];
  readonly #deps: GatewayDeps;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #conns = new Set<Conn>();
  readonly #sessions = new Map<string, Session>();

  constructor(deps: GatewayDeps) {
    this.#deps = deps;
  }

  /** Open sockets. */
  get open(): number {
    return [...this.#conns].filter((c) => c.ws.readyState === WebSocket.OPEN).length;
  }

  /** Takes `/gateway…` upgrades; returns false for other paths. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (!/^\/gateway(\/resume)?\/?$/.test(url.pathname)) return false;
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onConnection(ws, url));
    return true;
  }

  /** Sends an event to every live session the builder accepts; sessions without a socket keep it for RESUME. */
  dispatch(t: string, build: DispatchBuilder): void {
    for (const session of this.#sessions.values()) {
      if (!session.alive) continue;
      const d = build(session.intents);
      if (d !== undefined) this.#emit(session, t, d);
    }
    this.#deps.changed();
  }

  /** Sends op 7 RECONNECT on every authenticated socket; resolves once they have closed. */
  async reconnect(): Promise<void> {
    const conns = this.#bound();
    for (const conn of conns) this.#send(conn, { op: 7, d: null, s: null, t: null });
    await Promise.all(conns.map((c) => c.closed));
  }

  /** Sends op 9 INVALID_SESSION; when not resumable, the sessions die (RESUME will fail). */
  invalidSession(resumable: boolean): void {
    for (const conn of this.#bound()) {
      const session = conn.session;
      if (session) {
        if (!resumable) session.alive = false;
        session.conn = undefined;
      }
      conn.session = undefined;
      conn.authenticated = false;
      this.#send(conn, { op: 9, d: resumable, s: null, t: null });
    }
  }

  /** Terminates every authenticated socket with no close frame (the client sees 1006 and resumes). */
  drop(): void {
    for (const conn of this.#bound()) conn.ws.terminate();
  }

  /** Closes every socket with `code` (default 4004, which discord.js does not retry) and stops. */
  async close(code: number, reason: string): Promise<void> {
    const conns = [...this.#conns];
    for (const conn of conns) if (conn.ws.readyState === WebSocket.OPEN) conn.ws.close(code, reason);
    await Promise.all(
      conns.map((conn) =>
        Promise.race([
          conn.closed,
          new Promise<void>((resolve) => {
            setTimeout(() => {
              conn.ws.terminate();
              resolve();
            }, 500).unref();
          }),
        ]),
      ),
    );
    for (const session of this.#sessions.values()) session.alive = false;
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  // ─── internals ───────────────────────────────────────────────────────────────────────────

  #bound(): Conn[] {
    return [...this.#conns].filter((c) => c.authenticated && c.ws.readyState === WebSocket.OPEN);
  }

  #onConnection(ws: WebSocket, url: URL): void {
    this.opened += 1;
    const record: ConnectionRecord = {
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      at: this.#deps.now(),
    };
    this.connections.push(record);
    const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
    const conn: Conn = { ws, session: undefined, authenticated: false, closed };
    this.#conns.add(conn);
    ws.on("error", () => {}); // A reset socket also closes; `close` handles it.
    ws.on("close", (code) => this.#onClose(conn, code));
    const refusal = this.#refusal(url.searchParams);
    if (refusal) {
      record.refusedWith = refusal[0];
      ws.close(refusal[0], refusal[1]);
      this.#deps.changed();
      return;
    }
    ws.on("message", (data, isBinary) => this.#onFrame(conn, isBinary ? null : frameText(data)));
    this.#send(conn, {
      op: 10,
      d: { heartbeat_interval: this.#deps.heartbeatIntervalMs, _trace: ['["fake-gateway",{"micros":0}]'] },
      s: null,
      t: null,
    });
    this.#deps.changed();
  }

  /** Query checks: JSON encoding only, no transport compression, API v10. */
  #refusal(query: URLSearchParams): readonly [number, string] | undefined {
    if (query.has("compress")) return [4002, "compress= is not supported by this fake gateway"];
    const encoding = query.get("encoding") ?? "json";
    if (encoding !== "json") return [4002, `encoding=${encoding} is not supported by this fake gateway`];
    const version = query.get("v");
    if (version !== null && version !== "10") return CloseCode.InvalidApiVersion;
    return undefined;
  }

  #onClose(conn: Conn, code: number): void {
    this.#conns.delete(conn);
    const session = conn.session;
    if (session && session.conn === conn) {
      session.conn = undefined;
      // Discord ends a session closed with 1000 or 1001; other codes keep it resumable.
      if (code === 1000 || code === 1001) session.alive = false;
    }
    this.#deps.changed();
  }

  #onFrame(conn: Conn, text: string | null): boolean {
    let frame: unknown;
    try {
      frame = text === null ? undefined : JSON.parse(text);
    } catch {
      frame = undefined;
    }
    if (typeof frame !== "object" || frame === null || typeof (frame as { op?: unknown }).op !== "number") {
      return this.#refuse(conn, CloseCode.DecodeError);
    }
    const { op, d } = frame as { op: number; d: unknown };
    let ok = true;
    this.received.push({ op, d: op === 2 || op === 6 ? "(auth)" : d });
    const payload = (typeof d === "object" && d !== null ? d : {}) as Record<string, unknown>;
    switch (op) {
      case 1:
        this.#send(conn, { op: 11 });
        break;
      case 2:
        ok = this.#identify(conn, payload);
        break;
      case 6:
        ok = this.#resume(conn, payload);
        break;
      case 3:
      case 4:
      case 8:
        if (!conn.authenticated) ok = this.#refuse(conn, CloseCode.NotAuthenticated);
        break;
      default:
        ok = this.#refuse(conn, CloseCode.UnknownOpcode);
    }
    this.#deps.changed();
    return ok;
  }

  #tokenOk(token: unknown): boolean {
    return typeof token === "string" && token.replace(/^Bot /, "") === this.#deps.token;
  }

  #identify(conn: Conn, d: Record<string, unknown>): boolean {
    if (conn.authenticated) return this.#refuse(conn, CloseCode.AlreadyAuthenticated);
    const { token, ...rest } = d;
    this.identifyPayloads.push(structuredClone(rest));
    if (!this.#tokenOk(token)) return this.#refuse(conn, CloseCode.AuthenticationFailed);
    const intents = d.intents;
    if (typeof intents !== "number" || !Number.isInteger(intents) || intents < 0) {
      return this.#refuse(conn, CloseCode.InvalidIntents);
    }
    if (intents & Intent.MessageContent && !this.#deps.messageContentAllowed) {
      return this.#refuse(conn, CloseCode.DisallowedIntents);
    }
    const shard = d.shard;
    if (Array.isArray(shard) && !(Number(shard[0]) >= 0 && Number(shard[0]) < Number(shard[1]))) {
      return this.#refuse(conn, CloseCode.InvalidShard);
    }
    const session: Session = {
      id: randomBytes(16).toString("hex"),
      intents,
      seq: 0,
      log: [],
      alive: true,
      conn,
    };
    this.#sessions.set(session.id, session);
    conn.session = session;
    conn.authenticated = true;
    this.identifies += 1;
    const ready = {
      ...this.#deps.ready(),
      session_id: session.id,
      resume_gateway_url: `${this.#deps.wsBase()}/gateway/resume`,
    };
    this.#emit(session, "READY", ready);
    if (intents & Intent.Guilds)
      for (const guild of this.#deps.guilds()) this.#emit(session, "GUILD_CREATE", guild);
    return true;
  }

  #resume(conn: Conn, d: Record<string, unknown>): boolean {
    if (conn.authenticated) return this.#refuse(conn, CloseCode.AlreadyAuthenticated);
    if (!this.#tokenOk(d.token)) return this.#refuse(conn, CloseCode.AuthenticationFailed);
    const session = typeof d.session_id === "string" ? this.#sessions.get(d.session_id) : undefined;
    if (!session?.alive) {
      this.#send(conn, { op: 9, d: false, s: null, t: null });
      return true;
    }
    const seq = d.seq;
    if (typeof seq !== "number" || seq > session.seq) return this.#refuse(conn, CloseCode.InvalidSeq);
    const oldest = session.log[0]?.s ?? session.seq + 1;
    if (seq < oldest - 1) {
      session.alive = false;
      this.#send(conn, { op: 9, d: false, s: null, t: null });
      return true;
    }
    const previous = session.conn;
    if (previous && previous !== conn) {
      previous.session = undefined;
      previous.authenticated = false;
    }
    session.conn = conn;
    conn.session = session;
    conn.authenticated = true;
    this.resumes += 1;
    const from = seq - this.replayOverlap;
    this.replayOverlap = 0;
    for (const frame of session.log)
      if (frame.s > seq || (frame.s > from && frame.t !== "READY")) this.#send(conn, frame);
    this.#send(conn, { op: 0, t: "RESUMED", s: session.seq, d: { _trace: ['["fake-gateway",{}]'] } });
    return true;
  }

  #emit(session: Session, t: string, d: unknown): void {
    session.seq += 1;
    const frame: Frame = { op: 0, t, s: session.seq, d };
    session.log.push(frame);
    if (session.log.length > MAX_LOG) session.log.shift();
    if (session.conn) this.#send(session.conn, frame);
  }

  #send(conn: Conn, frame: object): void {
    if (conn.ws.readyState === WebSocket.OPEN) conn.ws.send(JSON.stringify(frame));
  }

  /** Closes the socket with a gateway close code (ending its session); returns false. */
  #refuse(conn: Conn, [code, reason]: readonly [number, string]): false {
    if (conn.session) conn.session.alive = false;
    conn.authenticated = false;
    if (conn.ws.readyState === WebSocket.OPEN) conn.ws.close(code, reason);
    return false;
  }
}
