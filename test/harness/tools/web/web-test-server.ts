/**
 * Test servers on 127.0.0.1 and a DNS seam for the guarded fetch's tests; names under
 * `.example` resolve only through {@link fakeDns}.
 */
import type { LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import type { SafeFetchOptions } from "../../../../src/harness/tools/web/types.js";
import { WebFetchError } from "../../../../src/harness/tools/web/web-fetch-error.js";
import { TEST_TLS } from "../../../fakes/test-tls.js";

/** A request handler of a test server. */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A server on 127.0.0.1 and what it saw. */
export interface TestServer {
  port: number;
  origin: string;
  /** Requests received: path and Host header. */
  seen: Array<{ path: string; host: string | undefined; userAgent: string | undefined }>;
  connections: number;
}

const servers: Array<http.Server | https.Server> = [];

/** Closes every server started since the last call; for `afterEach`. */
export async function closeServers(): Promise<void> {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Starts an http (or, `secure`, https with the test certificate) server on 127.0.0.1. */
export async function startServer(handler: Handler, secure = false): Promise<TestServer> {
  const server = secure
    ? https.createServer({ key: TEST_TLS.key, cert: TEST_TLS.cert })
    : http.createServer();
  servers.push(server);
  const state: TestServer = { port: 0, origin: "", seen: [], connections: 0 };
  server.on(secure ? "secureConnection" : "connection", () => state.connections++);
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    state.seen.push({ path: req.url ?? "", host: req.headers.host, userAgent: req.headers["user-agent"] });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  state.origin = `${secure ? "https" : "http"}://127.0.0.1:${state.port}`;
  return state;
}

/** A handler answering every request with `body` as `type` (none when null) and `status`. */
export const page =
  (body: string | Buffer, type: string | null = "text/html; charset=utf-8", status = 200): Handler =>
  (_req, res) => {
    res.writeHead(status, type === null ? {} : { "content-type": type });
    res.end(body);
  };

/** A DNS seam answering from a table; records the names asked. */
export function fakeDns(table: Record<string, string | string[]>) {
  const asked: string[] = [];
  const lookup = async (host: string): Promise<LookupAddress[]> => {
    asked.push(host);
    const answer = table[host];
    if (answer === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return [answer].flat().map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { lookup, asked };
}

/** Options that let a fetch reach the test servers. */
export const LOCAL: SafeFetchOptions = { allowHosts: ["127.0.0.1"] };

/** The WebFetchError a fetch rejects with (fails the test when it resolves). */
export async function refusal(promise: Promise<unknown>): Promise<WebFetchError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WebFetchError);
  return err as WebFetchError;
}
