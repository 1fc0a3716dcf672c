// A small MCP server for tests, written with the SDK's server side and run with plain `node`
// (no tsx: it starts in ~100 ms). Its mode is the first argument:
//   normal      tools echo(text), shell(command), fail(), grow() — grow adds tool "extra" and
//               sends notifications/tools/list_changed; each result names the server's pid
//   bad-schema  tools/list returns one usable tool, one with a non-object schema and one too big
//   garbage     prints lines that are not JSON-RPC and never answers
//   hang        reads nothing, answers nothing
//   exit        exits 1 at once
// With FAKE_PID_FILE set, it writes its pid there first; FAKE_ENV_DUMP names a file it writes its
// environment's names to.
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const mode = process.argv[2] ?? "normal";
if (process.env.FAKE_PID_FILE) writeFileSync(process.env.FAKE_PID_FILE, `${process.pid}\n`);
if (process.env.FAKE_ENV_DUMP)
  writeFileSync(process.env.FAKE_ENV_DUMP, Object.keys(process.env).sort().join("\n"));

if (mode === "exit") process.exit(1);
if (mode === "hang") setInterval(() => {}, 60_000);
if (mode === "garbage") {
  process.stdin.resume();
  setInterval(() => process.stdout.write("this is not json-rpc\n"), 20);
}

const text = (t) => ({ content: [{ type: "text", text: t }] });

if (mode === "normal") {
  const server = new McpServer({ name: "fake", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo the text back", inputSchema: { text: z.string() } },
    async ({ text: t }) => text(`echo from ${process.pid}: ${t}`),
  );
  server.registerTool(
    "shell",
    { description: "Pretends to run a shell command", inputSchema: { command: z.string() } },
    async ({ command }) => text(`would run: ${command}`),
  );
  server.registerTool("fail", { description: "Always fails" }, async () => ({
    ...text("the thing broke"),
    isError: true,
  }));
  server.registerTool("grow", { description: "Adds the tool extra" }, async () => {
    server.registerTool("extra", { description: "A tool added at run time" }, async () => text("extra ran"));
    return text("grown");
  });
  await server.connect(new StdioServerTransport());
}

if (mode === "bad-schema") {
  const server = new Server({ name: "bad", version: "1.0.0" }, { capabilities: { tools: {} } });
  const big = Object.fromEntries(
    Array.from({ length: 400 }, (_, i) => [`field${i}`, { type: "string", description: "x".repeat(20) }]),
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: "good", inputSchema: { type: "object", properties: { q: { type: "string" } } } },
      { name: "stringy", inputSchema: { type: "string" } },
      { name: "huge", inputSchema: { type: "object", properties: big } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => text(`called ${req.params.name}`));
  await server.connect(new StdioServerTransport());
}
