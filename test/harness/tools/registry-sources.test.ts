/**
 * ToolRegistry's tool sources (tools that come and go at run time, e.g. an MCP server's): their
 * tools are offered after the registered ones and run through the same boundary and policy; a
 * spec is built once per Tool object; a name clash skips the source's tool with one warning; a
 * source is prepared only for a turn whose policy allows its groups.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolRegistry } from "../../../src/harness/tools/registry.js";
import { ToolPolicy } from "../../../src/harness/tools/tool-policy.js";
import type { ToolSource } from "../../../src/harness/tools/tool-source.js";
import type { Tool, ToolContext } from "../../../src/harness/tools/types.js";

function ctx(asker?: ToolContext["asker"]): ToolContext {
  return {
    workspaceDir: "/tmp",
    sessionKey: "s",
    runId: "r",
    signal: new AbortController().signal,
    ...(asker ? { asker } : {}),
  };
}

function mcpTool(
  name: string,
  schema: Record<string, unknown> = { type: "object", properties: { q: { type: "string" } } },
): Tool {
  return {
    name,
    description: `tool ${name}`,
    parameters: z.looseObject({}),
    jsonSchema: schema,
    groups: ["mcp:fake"],
    run: async (args) => ({ content: `ran ${name} with ${JSON.stringify(args)}` }),
  };
}

class FakeSource implements ToolSource {
  readonly name = "fake";
  readonly groups = ["mcp:fake"] as const;
  list: Tool[] = [];
  prepared = 0;
  tools(): readonly Tool[] {
    return this.list;
  }
  async prepare(): Promise<void> {
    this.prepared++;
  }
}

const staticTool: Tool = {
  name: "read_file",
  description: "reads",
  parameters: z.strictObject({ path: z.string() }),
  groups: ["fs"],
  run: async () => ({ content: "file" }),
};

describe("ToolRegistry tool sources", () => {
  it("offers a source's tools after the registered ones, with their own JSON Schema, and runs them", async () => {
    const source = new FakeSource();
    const registry = new ToolRegistry().register(staticTool).addSource(source);
    expect(registry.specs().map((s) => s.name)).toEqual(["read_file"]);
    source.list = [mcpTool("fake__echo")];
    const specs = registry.specs();
    expect(specs.map((s) => s.name)).toEqual(["read_file", "fake__echo"]);
    expect(specs[1]?.parameters).toEqual({ type: "object", properties: { q: { type: "string" } } });
    const r = await registry.execute("fake__echo", '{"q":"hi","extra":1}', ctx());
    expect(r).toEqual({ content: 'ran fake__echo with {"q":"hi","extra":1}', isError: false });
    const bad = await registry.execute("fake__echo", "[1]", ctx());
    expect(bad.code).toBe("invalid_arguments");
  });

  it("builds a spec once per Tool object: the same objects while the set is unchanged, new ones after", () => {
    const source = new FakeSource();
    const registry = new ToolRegistry().addSource(source);
    source.list = [mcpTool("fake__a")];
    const first = registry.specs()[0];
    expect(registry.specs()[0]).toBe(first);
    expect(JSON.stringify(registry.specs())).toBe(JSON.stringify([first]));
    source.list = [mcpTool("fake__a"), mcpTool("fake__b")];
    const next = registry.specs();
    expect(next.map((s) => s.name)).toEqual(["fake__a", "fake__b"]);
    expect(next[0]).not.toBe(first);
    source.list = [];
    expect(registry.specs()).toEqual([]);
  });

  it("skips a source tool whose name is taken or whose schema is not an object schema, warning once", async () => {
    const warnings: string[] = [];
    const source = new FakeSource();
    const registry = new ToolRegistry({ warn: (m) => warnings.push(m) })
      .register(staticTool)
      .addSource(source);
    source.list = [mcpTool("read_file"), mcpTool("fake__str", { type: "string" }), mcpTool("fake__ok")];
    registry.specs();
    expect(registry.specs().map((s) => s.name)).toEqual(["read_file", "fake__ok"]);
    expect(warnings).toEqual([
      'tool "read_file" of fake is skipped: a tool of that name exists',
      'tool "fake__str" of fake is skipped: tool "fake__str": its JSON Schema must be an object schema (type: "object")',
    ]);
    // The registered tool still runs, not the source's.
    expect((await registry.execute("read_file", '{"path":"x"}', ctx())).content).toBe("file");
  });

  it("applies the policy to source tools by their groups, and prepares a source only where it may be offered", async () => {
    const source = new FakeSource();
    source.list = [mcpTool("fake__echo")];
    const policy = new ToolPolicy({ groups: { deny: ["group:mcp:fake"] } });
    const registry = new ToolRegistry({ policy }).addSource(source);
    const group = {
      replyTarget: { channel: "discord", accountId: "a", chatId: "c" },
      asker: { privateChat: false, groupChat: true },
    };
    const direct = { asker: { privateChat: true } };
    await registry.prepare(group, new AbortController().signal);
    expect(source.prepared).toBe(0);
    expect(registry.specs(group)).toEqual([]);
    const denied = await registry.execute("fake__echo", "{}", { ...ctx(), ...group });
    expect(denied.code).toBe("denied");
    expect(denied.content).toContain("denied by tools.groups.deny (group:mcp:fake) in a group chat");
    await registry.prepare(direct, new AbortController().signal);
    expect(source.prepared).toBe(1);
    expect(registry.specs(direct).map((s) => s.name)).toEqual(["fake__echo"]);
  });

  it("refuses a second source of the same name", () => {
    const registry = new ToolRegistry().addSource(new FakeSource());
    expect(() => registry.addSource(new FakeSource())).toThrow('tool source "fake" is already added');
  });
});
