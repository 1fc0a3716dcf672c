/**
 * The fake Discord's HTTP server on 127.0.0.1: one listener for REST requests and gateway
 * WebSocket upgrades, started on a given or ephemeral port and stopped with every keep-alive
 * connection closed.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";

/** Starts a server on 127.0.0.1; upgrades `upgrade` does not take are destroyed. Resolves with it and its port. */
export async function listen(
  port: number,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  server.on("upgrade", (req, socket, head) => {
    if (!upgrade(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port };
}

/** Stops the server, closing idle and active keep-alive connections. */
export async function stop(server: Server | undefined): Promise<void> {
  if (!server?.listening) return;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
