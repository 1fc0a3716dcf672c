/**
 * The SDK transport against real servers on 127.0.0.1: plain and TLS targets, compressed and
 * streamed bodies, aborts, and proxies (the fake proxy in test/fakes/) — CONNECT tunnels with
 * TLS to the target inside, absolute-URI forwarding, credentials, refusals — and both SDKs
 * through a proxy. Names under `.switchyard.test` resolve nowhere: only the proxy reaches them.
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import net from "node:net";
import zlib from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { AnthropicProvider } from "../../../src/harness/providers/anthropic.js";
import { createHttpFetch, httpFetch } from "../../../src/harness/providers/http-fetch.js";
import { ProxyError } from "../../../src/harness/providers/http-proxy.js";
import { OpenAIProvider } from "../../../src/harness/providers/openai.js";
import { FakeHttpProxy } from "../../fakes/http-proxy.js";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { TEST_HOST, TEST_TLS } from "../../fakes/test-tls.js";
import { collect, request, textOf } from "./provider-contract.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

interface TestServer {
  port: number;
  url: string;
  /** Requests received: method, path and headers. */
  seen: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }>;
  /** Client connections accepted. */
  connections: number;
  close(): Promise<void>;
}

async function startServer(handler: Handler, secure = false): Promise<TestServer> {
  const server = secure
    ? https.createServer({ key: TEST_TLS.key, cert: TEST_TLS.cert })
    : http.createServer();
  const state: TestServer = {
    port: 0,
    url: "",
    seen: [],
    connections: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on(secure ? "secureConnection" : "connection", () => state.connections++);
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    state.seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  state.url = `${secure ? "https" : "http"}://127.0.0.1:${state.port}`;
  return state;
}

/** Answers every request with its method, path and body, as JSON. */
const echo: Handler = (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ method: req.method, path: req.url, body: Buffer.concat(chunks).toString() }));
  });
};

/** The path the echo server saw. */
async function pathOf(response: Promise<Response>): Promise<unknown> {
  return ((await (await response).json()) as { path: unknown }).path;
}

/** Routes any host the proxy is asked for to one local port. */
const toPort = (port: number) => () => ({ host: "127.0.0.1", port });

const closers: Array<() => Promise<void>> = [];
async function started<T extends { start(): Promise<void>; close(): Promise<void> }>(thing: T): Promise<T> {
  await thing.start();
  closers.push(() => thing.close());
  return thing;
}
async function server(handler: Handler, secure = false): Promise<TestServer> {
  const s = await startServer(handler, secure);
  closers.push(() => s.close());
  return s;
}
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0).reverse()) await close();
});

describe("httpFetch, direct", () => {
  it("sends method, headers and body, asks for compression, and reads the answer", async () => {
    const s = await server(echo);
    const res = await httpFetch(`${s.url}/v1/x?q=1`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k" },
      body: '{"a":1}',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ method: "POST", path: "/v1/x?q=1", body: '{"a":1}' });
    expect(s.seen[0]?.headers).toMatchObject({
      "accept-encoding": "gzip, deflate, br",
      "content-length": "7",
      "x-api-key": "k",
    });
  });

  it("keeps the caller's own accept-encoding", async () => {
    const s = await server(echo);
    await (await httpFetch(s.url, { headers: { "accept-encoding": "identity" } })).text();
    expect(s.seen[0]?.headers["accept-encoding"]).toBe("identity");
  });

  it("speaks TLS to a target it trusts through `ca`, reusing the connection", async () => {
    const s = await server(echo, true);
    const fetchTls = createHttpFetch({ ca: TEST_TLS.cert });
    for (let i = 0; i < 3; i++) expect(await pathOf(fetchTls(`${s.url}/t`))).toBe("/t");
    expect(s.connections).toBe(1);
    // Without the CA the certificate is refused.
    await expect(httpFetch(`${s.url}/t`)).rejects.toThrow(/self.signed|certificate/i);
  });

  it("rejects with the abort reason before the answer, and errors the body after it", async () => {
    let release: () => void = () => {};
    const s = await server((req, res) => {
      if (req.url === "/hang") return; // never answers
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first");
      release = () => res.end("last");
    });
    const early = new AbortController();
    const pending = httpFetch(`${s.url}/hang`, { signal: early.signal });
    await vi.waitFor(() => expect(s.seen).toHaveLength(1));
    early.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });

    const late = new AbortController();
    const res = await httpFetch(`${s.url}/body`, { signal: late.signal });
    const reader = res.body?.getReader();
    expect(new TextDecoder().decode((await reader?.read())?.value)).toBe("first");
    late.abort(new Error("stop now"));
    await expect(reader?.read()).rejects.toThrow("stop now");
    release();
  });

  it("rejects bad options, naming the field", () => {
    expect(() => createHttpFetch({ proxyConnectTimeoutMs: 0 })).toThrow(/proxyConnectTimeoutMs: got 0/);
    expect(() => createHttpFetch({ maxSockets: 1.5 })).toThrow(/maxSockets: got 1.5/);
    expect(() => createHttpFetch({ env: { HTTPS_PROXY: "socks5://127.0.0.1:1" } })).toThrow(/HTTPS_PROXY/);
  });
});

describe("httpFetch, compressed bodies", () => {
  const text = `${"The quick brown fox jumps over the lazy dog. ".repeat(200)}end`;
  const encoders: Record<string, (b: Buffer) => Buffer> = {
    gzip: (b) => zlib.gzipSync(b),
    "x-gzip": (b) => zlib.gzipSync(b),
    deflate: (b) => zlib.deflateSync(b),
    "deflate (raw, as some servers send it)": (b) => zlib.deflateRawSync(b),
    br: (b) => zlib.brotliCompressSync(b),
    "gzip, br": (b) => zlib.brotliCompressSync(zlib.gzipSync(b)),
  };

  it.each(Object.keys(encoders))("decodes %s, headers as received", async (name) => {
    const encode = encoders[name] as (b: Buffer) => Buffer;
    const coding = name.replace(/ \(.*\)$/, "");
    const s = await server((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": coding });
      res.end(encode(Buffer.from(text)));
    });
    const res = await httpFetch(s.url);
    expect(res.headers.get("content-encoding")).toBe(coding);
    expect(await res.text()).toBe(text);
  });

  it("leaves a body in an unknown coding as it came, and an empty encoded body empty", async () => {
    const s = await server((req, res) => {
      if (req.url === "/empty") {
        res.writeHead(200, { "content-encoding": "gzip", "content-length": "0" }).end();
        return;
      }
      res.writeHead(200, { "content-encoding": "zstd" }).end("raw bytes");
    });
    expect(await (await httpFetch(s.url)).text()).toBe("raw bytes");
    expect(await (await httpFetch(`${s.url}/empty`)).text()).toBe("");
  });

  it("streams SSE through gzip event by event, each arriving before the next is sent", async () => {
    const events = ["data: one\n\n", "data: two\n\n", "data: three\n\n"];
    let acknowledge: (i: number) => void = () => {};
    const s = await server((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      const gzip = zlib.createGzip();
      gzip.pipe(res);
      let next = 0;
      const send = () => {
        const event = events[next++];
        if (event === undefined) {
          gzip.end();
          return;
        }
        gzip.write(event);
        gzip.flush(zlib.constants.Z_SYNC_FLUSH);
      };
      // The next event leaves only once the client has read the previous one.
      acknowledge = (i) => {
        if (i === next - 1) send();
      };
      send();
    });
    const res = await httpFetch(s.url);
    const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
    let received = "";
    for (let i = 0; i < events.length; i++) {
      while (!received.endsWith(events[i] ?? "")) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) throw new Error(`stream ended after ${JSON.stringify(received)}`);
        received += chunk.value;
      }
      acknowledge(i);
    }
    expect(await reader?.read()).toEqual({ done: true, value: undefined });
    expect(received).toBe(events.join(""));
  });

  it("errors the body stream on corrupt data and on a connection cut mid-body", async () => {
    const s = await server((req, res) => {
      res.writeHead(200, { "content-encoding": "gzip" });
      if (req.url === "/corrupt") {
        res.end(Buffer.from("this is not gzip at all"));
        return;
      }
      const gz = zlib.gzipSync(Buffer.from(text));
      res.write(gz.subarray(0, 40));
      setImmediate(() => res.destroy());
    });
    await expect((await httpFetch(`${s.url}/corrupt`)).text()).rejects.toThrow(/header check|incorrect/i);
    await expect((await httpFetch(`${s.url}/cut`)).text()).rejects.toThrow();
  });
});

describe("httpFetch through a proxy", () => {
  it("tunnels https: with CONNECT, TLS to the target inside, one tunnel for several requests", async () => {
    const target = await server(echo, true);
    const proxy = await started(new FakeHttpProxy({ route: toPort(target.port) }));
    const fetchVia = createHttpFetch({ env: { HTTPS_PROXY: proxy.url() }, ca: TEST_TLS.cert });
    for (let i = 0; i < 3; i++) {
      const res = await fetchVia(`https://${TEST_HOST}/v1/messages`, { method: "POST", body: `{"i":${i}}` });
      expect(await res.json()).toEqual({ method: "POST", path: "/v1/messages", body: `{"i":${i}}` });
    }
    expect(proxy.seen).toEqual([
      { method: "CONNECT", target: `${TEST_HOST}:443`, authorization: undefined, status: 200 },
    ]);
    expect(target.connections).toBe(1);
    expect(target.seen[0]?.headers.host).toBe(TEST_HOST);
  });

  it("checks the target's certificate against the target's name inside the tunnel", async () => {
    const target = await server(echo, true);
    const proxy = await started(new FakeHttpProxy({ route: toPort(target.port) }));
    const fetchVia = createHttpFetch({ env: { https_proxy: proxy.url() }, ca: TEST_TLS.cert });
    // The certificate does not name this host: TLS must fail although the tunnel stands.
    await expect(fetchVia("https://other.example.test/")).rejects.toThrow(/altnames|not in the cert/i);
    expect(proxy.seen[0]).toMatchObject({ method: "CONNECT", target: "other.example.test:443", status: 200 });
  });

  it("sends Basic credentials from the proxy URL, decoded", async () => {
    const target = await server(echo, true);
    const proxy = await started(
      new FakeHttpProxy({ route: toPort(target.port), credentials: "ann@corp:p:ss" }),
    );
    const fetchVia = createHttpFetch({
      env: { https_proxy: proxy.url("ann%40corp:p%3Ass") },
      ca: TEST_TLS.cert,
    });
    expect(await pathOf(fetchVia(`https://${TEST_HOST}/ok`))).toBe("/ok");
    expect(proxy.seen[0]?.authorization).toBe(`Basic ${Buffer.from("ann@corp:p:ss").toString("base64")}`);
  });

  it("turns a refused CONNECT (407) into a ProxyError naming the proxy, credentials hidden", async () => {
    const proxy = await started(new FakeHttpProxy({ credentials: "ann:right" }));
    const without = createHttpFetch({ env: { https_proxy: proxy.url() } });
    const err = await without(`https://${TEST_HOST}/`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProxyError);
    expect(err).toMatchObject({ code: "proxy_refused", proxyStatus: 407, proxy: proxy.url() });
    expect((err as Error).message).toBe(
      `proxy ${proxy.url()} refused CONNECT ${TEST_HOST}:443: 407 Proxy Authentication Required (it wants credentials: user:password@ in the proxy URL)`,
    );

    const wrong = createHttpFetch({ env: { https_proxy: proxy.url("ann:wrong-secret") } });
    const refused = await wrong(`https://${TEST_HOST}/`).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "proxy_refused", proxy: proxy.url("***") });
    expect((refused as Error).message).toContain(`proxy ${proxy.url("***")} refused`);
    expect((refused as Error).message).toContain("credentials were refused");
    expect(String(refused)).not.toContain("wrong-secret");
  });

  it("forwards http: targets in absolute form, with credentials and the target's Host", async () => {
    const target = await server(echo);
    const proxy = await started(new FakeHttpProxy({ route: toPort(target.port), credentials: "u:p" }));
    const fetchVia = createHttpFetch({ env: { http_proxy: proxy.url("u:p") } });
    const res = await fetchVia(`http://${TEST_HOST}/v1/chat?x=1`, { method: "POST", body: "hi" });
    expect(await res.json()).toEqual({ method: "POST", path: "/v1/chat?x=1", body: "hi" });
    expect(proxy.seen).toEqual([
      {
        method: "POST",
        target: `http://${TEST_HOST}/v1/chat?x=1`,
        authorization: `Basic ${Buffer.from("u:p").toString("base64")}`,
        status: 200,
      },
    ]);
    expect(target.seen[0]?.headers.host).toBe(TEST_HOST);
    expect(target.seen[0]?.headers["proxy-authorization"]).toBeUndefined();

    const refused = createHttpFetch({ env: { http_proxy: proxy.url() } });
    await expect(refused(`http://${TEST_HOST}/`)).rejects.toMatchObject({
      name: "ProxyError",
      code: "proxy_refused",
      proxyStatus: 407,
      message: `proxy ${proxy.url()} refused GET http://${TEST_HOST}: 407 Proxy Authentication Required (it wants credentials: user:password@ in the proxy URL)`,
    });
  });

  it("reaches an https:// proxy over TLS, then the target over TLS inside it", async () => {
    const target = await server(echo, true);
    const proxy = await started(new FakeHttpProxy({ route: toPort(target.port), tls: TEST_TLS }));
    const fetchVia = createHttpFetch({ env: { HTTPS_PROXY: proxy.url() }, ca: TEST_TLS.cert });
    expect(await pathOf(fetchVia(`https://${TEST_HOST}/deep`))).toBe("/deep");
    expect(proxy.seen[0]).toMatchObject({ method: "CONNECT", status: 200 });
  });

  it("goes direct to loopback and to NO_PROXY hosts", async () => {
    const target = await server(echo);
    const proxy = await started(new FakeHttpProxy());
    const fetchVia = createHttpFetch({ env: { http_proxy: proxy.url(), no_proxy: "*" } });
    expect(await pathOf(fetchVia(`${target.url}/a`))).toBe("/a");
    const loopback = createHttpFetch({ env: { http_proxy: proxy.url(), https_proxy: proxy.url() } });
    expect(await pathOf(loopback(`http://localhost:${target.port}/b`))).toBe("/b");
    expect(proxy.seen).toEqual([]);
  });

  it("fails with a ProxyError when the proxy answers something that is not HTTP", async () => {
    const notHttp = net.createServer((socket) => socket.resume().end("SSH-2.0-OpenSSH_9.6\r\n\r\n"));
    await new Promise<void>((resolve) => notHttp.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise<void>((resolve) => notHttp.close(() => resolve())));
    const port = (notHttp.address() as AddressInfo).port;
    const fetchVia = createHttpFetch({ env: { https_proxy: `127.0.0.1:${port}` } });
    await expect(fetchVia(`https://${TEST_HOST}/`)).rejects.toMatchObject({
      code: "proxy_bad_response",
      message: `proxy http://127.0.0.1:${port} answered CONNECT ${TEST_HOST}:443 with "SSH-2.0-OpenSSH_9.6"`,
    });
  });

  it("fails with a ProxyError naming an unreachable proxy, and one that does not answer in time", async () => {
    const closed = await startServer(echo);
    await closed.close();
    const unreachable = createHttpFetch({ env: { https_proxy: `http://127.0.0.1:${closed.port}` } });
    await expect(unreachable(`https://${TEST_HOST}/`)).rejects.toMatchObject({
      code: "proxy_unreachable",
      message: expect.stringContaining(`proxy http://127.0.0.1:${closed.port} could not be reached`),
    });

    const silent = await started(new FakeHttpProxy({ silent: true }));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const slow = createHttpFetch({ env: { https_proxy: silent.url() }, proxyConnectTimeoutMs: 5_000 });
    const pending = slow(`https://${TEST_HOST}/`).catch((e: unknown) => e);
    await vi.waitFor(() => expect(silent.seen).toHaveLength(1), { interval: 5 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await pending).toMatchObject({
      code: "proxy_unreachable",
      message: `proxy ${silent.url()} did not answer CONNECT ${TEST_HOST}:443 within 5000 ms`,
    });
  });
});

describe("the SDKs through a proxy", () => {
  const sim = new ModelSimulator();
  beforeAll(() => sim.start());
  afterAll(() => sim.close());

  it.each([
    ["anthropic", "/v1/messages"],
    ["openai", "/v1/chat/completions"],
  ])("%s streams an answer through the proxy", async (name, path) => {
    const simPort = Number(new URL(sim.url).port);
    const proxy = await started(new FakeHttpProxy({ route: toPort(simPort) }));
    const fetchVia = createHttpFetch({ env: { http_proxy: proxy.url() } });
    const base = `http://sim.switchyard.test`;
    const provider =
      name === "anthropic"
        ? new AnthropicProvider({ apiKey: "k", baseUrl: base, fetch: fetchVia })
        : new OpenAIProvider({ apiKey: "k", baseUrl: `${base}/v1`, fetch: fetchVia });
    sim.script({ text: "Hello through the proxy" });
    const events = await collect(provider.stream(request(), new AbortController().signal));
    expect(textOf(events)).toBe("Hello through the proxy");
    expect(events.at(-1)).toEqual({ type: "stop", reason: "end_turn" });
    expect(proxy.seen).toEqual([
      { method: "POST", target: `${base}${path}`, authorization: undefined, status: 200 },
    ]);
  });
});
