/**
 * A Streamable HTTP MCP server for tests, on 127.0.0.1:0, written with the SDK's server side in
 * stateless mode (a server and transport per request): tool `lookup(key)` answers
 * `notes: <key> = <value>`. `requests` counts the POSTs, `authorization` the last header seen.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** The fake HTTP MCP server. */
export class FakeMcpHttpServer {
  #server: Server | undefined;
  requests = 0;
  authorization: string | undefined;

  /** Its endpoint, once started. */
  url = "";

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      this.requests++;
      this.authorization = req.headers.authorization;
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        const mcp = new McpServer({ name: "notes", version: "1.0.0" });
        mcp.registerTool(
          "lookup",
          { description: "Looks a note up", inputSchema: { key: z.string() } },
          async ({ key }) => ({ content: [{ type: "text", text: `notes: ${key} = blue` }] }),
        );
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on("close", () => {
          transport.close().catch(() => {});
          mcp.close().catch(() => {});
        });
        mcp
          .connect(transport)
          .then(() => transport.handleRequest(req, res, body === "" ? undefined : JSON.parse(body)))
          .catch(() => {
            if (!res.headersSent) res.writeHead(500).end();
          });
      });
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, "127.0.0.1", resolve));
    const { port } = this.#server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}/mcp`;
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }
}
