/**
 * Proxies for the SDK transport (http-fetch.ts), configured the way curl reads the environment:
 * `https_proxy`/`HTTPS_PROXY` for https: targets, `http_proxy`/`HTTP_PROXY` for http: targets,
 * `no_proxy`/`NO_PROXY` for the hosts that go direct. An https: target goes through an HTTP
 * CONNECT tunnel (TLS to the target inside it); an http: target is sent to the proxy in
 * absolute form. Node 20's own fetch ignores these variables, so this is where users get them.
 */
import https from "node:https";
import net from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";

/** The variables read, per target scheme; the lower-case name wins, as in curl. */
const PROXY_VARIABLES = {
  "https:": ["https_proxy", "HTTPS_PROXY"],
  "http:": ["http_proxy", "HTTP_PROXY"],
} as const;

/** Largest CONNECT response head accepted from a proxy. */
const MAX_CONNECT_HEAD_BYTES = 16 * 1024;

/** Why a proxy could not carry a request. */
export type ProxyErrorCode = "proxy_refused" | "proxy_unreachable" | "proxy_bad_response";

/**
 * A proxy that did not carry a request: it refused it (`proxy_refused`, e.g. 407 when its
 * credentials are missing or wrong), could not be reached or did not answer in time
 * (`proxy_unreachable`), or answered something that is not HTTP (`proxy_bad_response`). The
 * message names the proxy with its credentials redacted (`http://***@proxy.corp:3128`).
 */
export class ProxyError extends Error {
  readonly code: ProxyErrorCode;
  /** The proxy, credentials redacted. */
  readonly proxy: string;
  /** The proxy's HTTP status, for `proxy_refused`. */
  readonly proxyStatus: number | undefined;
  constructor(
    code: ProxyErrorCode,
    message: string,
    context: { proxy: string; proxyStatus?: number; cause?: unknown },
  ) {
    super(message, { cause: context.cause });
    this.name = "ProxyError";
    this.code = code;
    this.proxy = context.proxy;
    this.proxyStatus = context.proxyStatus;
  }
}

/**
 * The ProxyError for a proxy that answered `status` to `what` (`CONNECT host:443`,
 * `POST http://host`): `proxy http://***@proxy:3128 refused CONNECT host:443: 407 Proxy
 * Authentication Required (…)`, with a hint on credentials for 407.
 */
export function proxyRefusal(
  proxy: ProxyEndpoint,
  what: string,
  status: number,
  reason: string | undefined,
): ProxyError {
  const said = reason ? ` ${reason}` : "";
  const hint =
    status !== 407
      ? ""
      : proxy.authorization
        ? " (its credentials were refused)"
        : " (it wants credentials: user:password@ in the proxy URL)";
  return new ProxyError("proxy_refused", `proxy ${proxy.shown} refused ${what}: ${status}${said}${hint}`, {
    proxy: proxy.shown,
    proxyStatus: status,
  });
}

/** One proxy from the environment. */
export interface ProxyEndpoint {
  /** True for an https:// proxy (TLS to the proxy itself). */
  tls: boolean;
  /** Host name or IP, without IPv6 brackets. */
  host: string;
  port: number;
  /** `Basic …` when the proxy URL carries credentials. */
  authorization: string | undefined;
  /** The proxy as errors and logs may show it: `http://***@proxy.corp:3128`. */
  shown: string;
}

/** Proxy settings read once from the environment. */
export interface ProxySettings {
  "https:": ProxyEndpoint | undefined;
  "http:": ProxyEndpoint | undefined;
  noProxy: NoProxy;
}

/**
 * Reads proxy settings the way curl does, with the extensions listed on {@link NoProxy}:
 * `https_proxy` then `HTTPS_PROXY`, `http_proxy` then `HTTP_PROXY` (the upper-case one is
 * ignored when `REQUEST_METHOD` is set, i.e. under CGI, where a request header can set it),
 * `no_proxy` then `NO_PROXY`; an empty value counts as unset. A proxy URL without a scheme is
 * http://; without a port, 80 (http) or 443 (https). `ALL_PROXY` is not read. Returns
 * undefined when no proxy is configured. Throws a TypeError naming the variable when a value
 * is not an http:// or https:// URL (SOCKS proxies are not supported).
 */
export function proxySettingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): ProxySettings | undefined {
  const endpoint = (names: readonly string[]): ProxyEndpoint | undefined => {
    for (const name of names) {
      if (name === "HTTP_PROXY" && nonEmpty(env.REQUEST_METHOD)) continue;
      const value = nonEmpty(env[name]);
      if (value !== undefined) return parseProxyUrl(name, value);
    }
    return undefined;
  };
  const settings: ProxySettings = {
    "https:": endpoint(PROXY_VARIABLES["https:"]),
    "http:": endpoint(PROXY_VARIABLES["http:"]),
    noProxy: new NoProxy(nonEmpty(env.no_proxy) ?? nonEmpty(env.NO_PROXY) ?? ""),
  };
  return settings["https:"] || settings["http:"] ? settings : undefined;
}

/** The proxy for `url` under `settings`, or undefined when it goes direct. */
export function proxyFor(settings: ProxySettings, url: URL): ProxyEndpoint | undefined {
  const proxy = url.protocol === "https:" || url.protocol === "http:" ? settings[url.protocol] : undefined;
  if (!proxy) return undefined;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return settings.noProxy.matches(url.hostname, port) ? undefined : proxy;
}

type NoProxyRule =
  | { type: "name"; name: string; port: number | undefined }
  | { type: "ip"; block: net.BlockList; port: number | undefined };

/**
 * A `NO_PROXY` list, matched as curl does: entries separated by commas (and blanks); `*` alone
 * matches every host; a name matches itself and its subdomains (`example.com` and
 * `.example.com` both match `example.com` and `api.example.com`, not `notexample.com`),
 * case-insensitively, trailing dots ignored; an IP literal matches that address, with
 * `/bits` a CIDR range (IPv4 and IPv6); a name never matches an IP and the other way round.
 * Beyond curl, as Go and Python do: an entry may carry a port (`example.com:8443`,
 * `[::1]:8080`) and then matches that port only; `*.example.com` is read as `.example.com`;
 * IPv6 entries may be bracketed. Loopback targets (`localhost`, `*.localhost`, 127.0.0.0/8,
 * ::1) never go through a proxy, as in Go: the built-in model simulator and local model
 * servers live there, and a corporate proxy cannot reach them.
 */
export class NoProxy {
  readonly #all: boolean;
  readonly #rules: NoProxyRule[];

  constructor(list: string) {
    const entries = list.split(/[\s,]+/).filter((e) => e !== "");
    this.#all = entries.includes("*");
    this.#rules = entries.flatMap((entry) => parseRule(entry) ?? []);
  }

  /** True when a request to `host` (a URL hostname, IPv6 in brackets) on `port` goes direct. */
  matches(host: string, port: number): boolean {
    if (this.#all) return true;
    const bare = host.startsWith("[") ? host.slice(1, -1) : host;
    const family = net.isIP(bare);
    if (isLoopback(bare, family)) return true;
    const name = family === 0 ? bare.toLowerCase().replace(/\.$/, "") : "";
    return this.#rules.some((rule) => {
      if (rule.port !== undefined && rule.port !== port) return false;
      if (rule.type === "ip") return family !== 0 && rule.block.check(bare, family === 6 ? "ipv6" : "ipv4");
      if (family !== 0) return false;
      return name === rule.name || name.endsWith(`.${rule.name}`);
    });
  }
}

function parseRule(entry: string): NoProxyRule | undefined {
  let host = entry;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  if (bracketed) {
    host = bracketed[1] ?? "";
    port = bracketed[2] === undefined ? undefined : Number(bracketed[2]);
  } else if (withPort) {
    host = withPort[1] ?? "";
    port = Number(withPort[2]);
  }
  const [address = "", bitsText] = host.split("/", 2);
  const family = net.isIP(address);
  if (family !== 0) {
    const type = family === 6 ? "ipv6" : "ipv4";
    const block = new net.BlockList();
    if (bitsText === undefined) block.addAddress(address, type);
    else {
      const bits = Number(bitsText);
      // An impossible prefix matches nothing, as in curl.
      if (!/^\d+$/.test(bitsText) || bits > (family === 6 ? 128 : 32)) return undefined;
      block.addSubnet(address, bits, type);
    }
    return { type: "ip", block, port };
  }
  const name = host
    .toLowerCase()
    .replace(/^\*?\./, "")
    .replace(/\.$/, "");
  return name === "" ? undefined : { type: "name", name, port };
}

function isLoopback(host: string, family: number): boolean {
  if (family === 4) return host.startsWith("127.");
  if (family === 6) return host === "::1" || /^::ffff:127\./i.test(host);
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

function parseProxyUrl(variable: string, value: string): ProxyEndpoint {
  let url: URL;
  try {
    url = new URL(value.includes("://") ? value : `http://${value}`);
  } catch (err) {
    throw new TypeError(
      `${variable}: got ${JSON.stringify(redactUrlText(value))}, expected a proxy URL such as http://proxy.example:3128`,
      { cause: err },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(
      `${variable}: got ${JSON.stringify(redactUrlText(value))}, expected an http:// or https:// proxy URL (SOCKS proxies are not supported)`,
    );
  }
  const secure = url.protocol === "https:";
  const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port);
  const credentials = url.username !== "" || url.password !== "";
  const user = percentDecoded(url.username);
  const password = percentDecoded(url.password);
  return {
    tls: secure,
    host: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port,
    authorization: credentials ? `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` : undefined,
    shown: `${url.protocol}//${credentials ? "***@" : ""}${url.hostname}:${port}`,
  };
}

/** A value that did not parse as a URL, with anything between `//` and `@` hidden. */
function redactUrlText(value: string): string {
  return value.replace(/(\/\/|^)[^/@]*@/, "$1***@");
}

/** `%40` → `@`; a stray `%` that starts no escape stays as written. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === "" ? undefined : trimmed;
}

/** Options of a {@link TunnelAgent}. */
export interface TunnelAgentOptions {
  proxy: ProxyEndpoint;
  /** Sockets kept open to the target through this proxy. */
  maxSockets: number;
  /** Time allowed to reach the proxy and get its answer to CONNECT. */
  connectTimeoutMs: number;
  /** Trusted CAs for TLS to an https:// proxy and to the target; default Node's. */
  ca: tls.SecureContextOptions["ca"] | undefined;
}

/**
 * A keep-alive https.Agent whose connections are CONNECT tunnels through one proxy: TLS to the
 * target (SNI and certificate check against the target host) runs inside the tunnel, so the
 * proxy sees only the target's host and port. One agent serves one (proxy, target origin).
 */
export class TunnelAgent extends https.Agent {
  readonly #proxy: ProxyEndpoint;
  readonly #connectTimeoutMs: number;
  readonly #ca: tls.SecureContextOptions["ca"] | undefined;

  constructor(options: TunnelAgentOptions) {
    super({ keepAlive: true, maxSockets: options.maxSockets, ...(options.ca ? { ca: options.ca } : {}) });
    this.#proxy = options.proxy;
    this.#connectTimeoutMs = options.connectTimeoutMs;
    this.#ca = options.ca;
  }

  /** Node's Agent calls this for each new socket; the socket arrives through `callback`. */
  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    // Node's Agent reads only the error when there is one; the types want a stream regardless.
    const done = callback as ((err: Error | null, stream?: Duplex) => void) | undefined;
    const host = options.host ?? "localhost";
    const authority = `${net.isIPv6(host) ? `[${host}]` : host}:${options.port ?? 443}`;
    openTunnel(this.#proxy, authority, this.#connectTimeoutMs, this.#ca).then(
      (socket) => {
        let secured: Duplex | null | undefined;
        try {
          // https.Agent's own createConnection: TLS over the tunnel, with its session cache.
          secured = super.createConnection({ ...options, socket } as https.RequestOptions);
        } catch (err) {
          socket.destroy();
          done?.(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        if (secured) done?.(null, secured);
      },
      (err: Error) => done?.(err),
    );
    return undefined;
  }
}

/**
 * Connects to the proxy (TLS for an https:// proxy), asks it to CONNECT to `authority`
 * (`host:port`), and resolves with the socket once it answers 2xx. Rejects with a ProxyError
 * otherwise; the socket is destroyed and the timer cleared on every path.
 */
function openTunnel(
  proxy: ProxyEndpoint,
  authority: string,
  timeoutMs: number,
  ca: tls.SecureContextOptions["ca"] | undefined,
): Promise<net.Socket> {
  return new Promise<net.Socket>((resolve, reject) => {
    const socket = proxy.tls
      ? tls.connect({
          host: proxy.host,
          port: proxy.port,
          ...(net.isIP(proxy.host) === 0 ? { servername: proxy.host } : {}),
          ...(ca ? { ca } : {}),
        })
      : net.connect({ host: proxy.host, port: proxy.port });
    socket.setNoDelay(true);
    const problem = (code: ProxyErrorCode, why: string, cause?: unknown) =>
      new ProxyError(code, `proxy ${proxy.shown} ${why}`, { proxy: proxy.shown, cause });
    const fail = (error: ProxyError) => {
      cleanup();
      // A late error of the destroyed socket must not go unhandled.
      socket.on("error", () => {});
      socket.destroy();
      reject(error);
    };
    let head = Buffer.alloc(0);
    const onReadable = () => {
      for (let chunk: Buffer | null = socket.read(); chunk !== null; chunk = socket.read()) {
        head = Buffer.concat([head, chunk]);
      }
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) {
        if (head.length > MAX_CONNECT_HEAD_BYTES)
          fail(problem("proxy_bad_response", `sent an oversized answer to CONNECT ${authority}`));
        return;
      }
      const statusLine = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
      const match = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
      const status = Number(match?.[1]);
      if (!match) {
        const said = JSON.stringify(statusLine.slice(0, 80));
        fail(problem("proxy_bad_response", `answered CONNECT ${authority} with ${said}`));
      } else if (status < 200 || status > 299) {
        fail(proxyRefusal(proxy, `CONNECT ${authority}`, status, match[2]));
      } else if (head.length > end + 4) {
        // The target speaks only after the TLS ClientHello: nothing may follow the proxy's answer.
        fail(problem("proxy_bad_response", `sent data after its answer to CONNECT ${authority}`));
      } else {
        cleanup();
        resolve(socket);
      }
    };
    const onError = (err: Error) =>
      fail(problem("proxy_unreachable", `could not be reached (${err.message})`, err));
    const onClose = () =>
      fail(problem("proxy_bad_response", `closed the connection before answering CONNECT ${authority}`));
    const timer = setTimeout(
      () => fail(problem("proxy_unreachable", `did not answer CONNECT ${authority} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    function cleanup(): void {
      clearTimeout(timer);
      socket.off("readable", onReadable);
      socket.off("error", onError);
      socket.off("close", onClose);
    }
    socket.on("readable", onReadable);
    socket.once("error", onError);
    socket.once("close", onClose);
    const auth = proxy.authorization ? `proxy-authorization: ${proxy.authorization}\r\n` : "";
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${auth}\r\n`);
  });
}
