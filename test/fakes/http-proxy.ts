/**
 * A forward HTTP proxy on 127.0.0.1 for transport tests: CONNECT tunnels (for https: targets)
 * and absolute-URI forwarding (for http: targets), optional Basic credentials (407 without
 * them), optionally itself behind TLS (an https:// proxy). It records every request it was
 * asked to carry, and can send a target host to another place, so tests can use host names no
 * resolver knows (only the proxy reaches them, which proves the client did not go direct).
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import net from "node:net";

/** One request the proxy was asked to carry. */
export interface ProxiedRequest {
  /** "CONNECT", or the method of a forwarded request. */
  method: string;
  /** `host:port` for CONNECT; the absolute URI for a forwarded request. */
  target: string;
  /** The Proxy-Authorization header as received. */
  authorization: string | undefined;
  /** What the proxy answered: 200 for an open tunnel, 407, 502, or the target's status. */
  status: number;
}

export interface FakeHttpProxyOptions {
  /** `user:password` required as Proxy-Authorization Basic; default: none required. */
  credentials?: string;
  /** Where a target really is; default: the host and port asked for. */
  route?: (host: string, port: number) => { host: string; port: number };
  /** Serves the proxy over TLS (an https:// proxy) with this key and certificate. */
  tls?: { key: string; cert: string };
  /** Never answers CONNECT (the tunnel request is recorded with status 0). */
  silent?: boolean;
}

/** See the file comment. Start it, use `url`, close it in `afterAll`. */
export class FakeHttpProxy {
  /** Every request asked of the proxy, oldest first. */
  readonly seen: ProxiedRequest[] = [];
  /** Client connections accepted. */
  connections = 0;
  readonly #options: FakeHttpProxyOptions;
  readonly #server: http.Server;
  readonly #sockets = new Set<net.Socket>();
  #port = 0;

  constructor(options: FakeHttpProxyOptions = {}) {
    this.#options = options;
    this.#server = options.tls
      ? https.createServer({ key: options.tls.key, cert: options.tls.cert })
      : http.createServer();
    this.#server.on("connection", (socket: net.Socket) => {
      this.connections++;
      this.#track(socket);
    });
    this.#server.on("connect", (req: http.IncomingMessage, socket: net.Socket, head: Buffer) =>
      this.#connect(req, socket, head),
    );
    this.#server.on("request", (req, res) => this.#forward(req, res));
  }

  /** `http://127.0.0.1:port` (https:// when served over TLS), with `user:password@` when given. */
  url(credentials?: string): string {
    const scheme = this.#options.tls ? "https" : "http";
    return `${scheme}://${credentials ? `${credentials}@` : ""}127.0.0.1:${this.#port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  /** Stops listening and destroys every connection, tunnels included. */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #authorized(req: http.IncomingMessage): boolean {
    const wanted = this.#options.credentials;
    if (wanted === undefined) return true;
    return req.headers["proxy-authorization"] === `Basic ${Buffer.from(wanted).toString("base64")}`;
  }

  #record(req: http.IncomingMessage, status: number): ProxiedRequest {
    const entry: ProxiedRequest = {
      method: req.method ?? "",
      target: req.url ?? "",
      authorization: req.headers["proxy-authorization"],
      status,
    };
    this.seen.push(entry);
    return entry;
  }

  #connect(req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    if (this.#options.silent) {
      this.#record(req, 0);
      return;
    }
    if (!this.#authorized(req)) {
      this.#record(req, 407);
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="fake"\r\ncontent-length: 0\r\n\r\n',
      );
      return;
    }
    const [host = "", port = "443"] = splitAuthority(req.url ?? "");
    const to = this.#where(host, Number(port));
    const entry = this.#record(req, 200);
    const upstream = net.connect(to.port, to.host);
    this.#track(upstream);
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once("error", () => {
      entry.status = 502;
      client.end("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n");
    });
    client.once("error", () => upstream.destroy());
    client.once("close", () => upstream.destroy());
  }

  #forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (!this.#authorized(req)) {
      this.#record(req, 407);
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="fake"', "content-length": "0" }).end();
      return;
    }
    const target = new URL(req.url ?? "");
    const to = this.#where(target.hostname, Number(target.port || 80));
    const entry = this.#record(req, 0);
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    const upstream = http.request(
      {
        host: to.host,
        port: to.port,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
      },
      (answer) => {
        entry.status = answer.statusCode ?? 0;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once("error", () => {
      entry.status = 502;
      if (!res.headersSent) res.writeHead(502, { "content-length": "0" });
      res.end();
    });
    req.pipe(upstream);
  }

  #where(host: string, port: number): { host: string; port: number } {
    return this.#options.route ? this.#options.route(host, port) : { host, port };
  }

  #track(socket: net.Socket): void {
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
  }
}

/** `host:port` or `[v6]:port` → [host, port]. */
function splitAuthority(authority: string): [string, string] {
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(authority);
  return match ? [match[1] ?? "", match[2] ?? ""] : [authority, ""];
}
