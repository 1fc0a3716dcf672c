import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolRegistry } from "../../../src/harness/tools/registry.js";
import { ToolPolicy } from "../../../src/harness/tools/tool-policy.js";
import type { Tool, ToolContext } from "../../../src/harness/tools/types.js";

const tool = (name: string, groups: Tool["groups"]): Tool => ({
  name,
  description: name,
  groups,
  parameters: z.strictObject({ path: z.string().optional() }),
  run: async () => ({ content: `${name} ran` }),
});

function ctx(groupChat: boolean, privateChat: boolean): ToolContext {
  return {
    workspaceDir: "/tmp/ws",
    sessionKey: "s",
    runId: "r",
    signal: new AbortController().signal,
    replyTarget: { channel: "discord", accountId: "a", chatId: "c" },
    asker: { privateChat, groupChat, senderId: "u1" },
  };
}

describe("ToolRegistry with a ToolPolicy", () => {
  const registry = new ToolRegistry({ policy: new ToolPolicy() })
    .register(tool("exec", ["exec"]))
    .register(tool("read_file", ["fs"]))
    .register(tool("memory_get", ["memory"]));

  it("offers only allowed tools for the turn's context", () => {
    expect(registry.specs(ctx(true, false)).map((s) => s.name)).toEqual(["read_file"]);
    expect(registry.specs(ctx(false, true)).map((s) => s.name)).toEqual(["exec", "read_file", "memory_get"]);
    expect(registry.specs().map((s) => s.name)).toEqual(["exec", "read_file", "memory_get"]);
  });

  it("refuses a call to a denied tool, naming the rule", async () => {
    const out = await registry.execute("exec", "{}", ctx(true, false));
    expect(out).toEqual({
      isError: true,
      code: "denied",
      content:
        "error (denied): exec is not available here: denied by tools.groups.deny (group:exec) in a group chat.",
    });
    const memory = await registry.execute("read_file", '{"path":"MEMORY.md"}', ctx(true, false));
    expect(memory.code).toBe("denied");
    expect(memory.content).toContain("MEMORY.md is private memory");
    expect((await registry.execute("read_file", '{"path":"MEMORY.md"}', ctx(false, true))).content).toBe(
      "read_file ran",
    );
  });

  it("lists each tool's decision", () => {
    expect(registry.decisions(ctx(true, false)).map((d) => [d.tool.name, d.allowed, d.reason])).toEqual([
      ["exec", false, "denied by tools.groups.deny (group:exec) in a group chat"],
      ["read_file", true, undefined],
      ["memory_get", false, "denied: private memory is only for the owner's private chat"],
    ]);
  });
});
