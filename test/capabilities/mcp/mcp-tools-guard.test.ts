/**
 * An MCP tool that takes a command: the command guard checks its argument before the server is
 * called, and each verdict reaches the guard observer (the hooks capability's built-in row).
 */
import { describe, expect, it } from "vitest";
import { mcpTools } from "../../../src/capabilities/mcp/mcp-tools.js";

describe("MCP tools and the command guard observer", () => {
  it("reports allow and block, and a blocked command never reaches the server", async () => {
    const seen: string[] = [];
    const called: unknown[] = [];
    const { tools } = mcpTools(
      [{ name: "run", inputSchema: { type: "object", properties: { command: { type: "string" } } } }],
      {
        server: "box",
        homeDir: "/home/someone",
        onGuard: (verdict) => seen.push(verdict.type),
        call: async (_tool, args) => {
          called.push(args);
          return { content: [{ type: "text", text: "ran" }] };
        },
      },
    );
    const tool = tools[0];
    if (!tool) throw new Error("no tool");
    const ctx = {
      workspaceDir: "/tmp/ws",
      sessionKey: "s",
      runId: "r",
      signal: new AbortController().signal,
    };
    await tool.run({ command: "ls" }, ctx);
    const refused = await tool.run({ command: "rm -rf /" }, ctx);
    expect(seen).toEqual(["allow", "block"]);
    expect(refused.isError).toBe(true);
    expect(called).toEqual([{ command: "ls" }]);
  });
});
