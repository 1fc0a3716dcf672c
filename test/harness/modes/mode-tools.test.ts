import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { PlanModeTools, toolsForMode } from "../../../src/harness/modes/mode-tools.js";
import { fileTools } from "../../../src/harness/tools/file-tools.js";
import { ToolRegistry } from "../../../src/harness/tools/registry.js";
import type { Tool, ToolContext } from "../../../src/harness/tools/types.js";

const ws = mkdtempSync(join(tmpdir(), "sy-mode-tools-"));
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const ran: string[] = [];
const tool = (name: string, groups: Tool["groups"]): Tool => ({
  name,
  description: name,
  groups,
  parameters: z.strictObject({ command: z.string().optional() }),
  run: async () => {
    ran.push(name);
    return { content: `${name} ran` };
  },
});

const registry = new ToolRegistry();
for (const t of fileTools()) registry.register(t);
registry.register(tool("exec", ["exec"])).register(tool("memory_write", ["memory"]));

const SESSION = "agent:main:http:dm:ann";
const ctx: ToolContext = {
  workspaceDir: ws,
  sessionKey: SESSION,
  runId: "r1",
  signal: new AbortController().signal,
};
const plan = toolsForMode(registry, { mode: "plan", sessionKey: SESSION, workspaceDir: ws });

describe("a turn's tools by mode", () => {
  it("is the registry itself outside plan mode", () => {
    expect(toolsForMode(registry, { mode: "normal", sessionKey: SESSION, workspaceDir: ws })).toBe(registry);
    expect(toolsForMode(registry, { mode: "execute", sessionKey: SESSION, workspaceDir: ws })).toBe(registry);
    expect(plan).toBeInstanceOf(PlanModeTools);
  });

  it("offers only read-only tools and write_file in plan mode, as the registry's own spec objects", () => {
    expect(plan.specs(ctx).map((s) => s.name)).toEqual(["read_file", "write_file", "list_files"]);
    const own = registry.specs(ctx).find((s) => s.name === "write_file");
    expect(plan.specs(ctx).find((s) => s.name === "write_file")).toBe(own);
  });

  it("refuses any other call naming the mode, and runs nothing", async () => {
    for (const name of ["exec", "memory_write", "edit_file"]) {
      const out = await plan.execute(name, '{"command":"touch x"}', ctx);
      expect(out).toEqual({
        isError: true,
        code: "denied",
        content: `error (denied): ${name} was not run — plan mode: only read-only tools and write_file to PLAN.md; /execute leaves plan mode`,
      });
    }
    expect(ran).toEqual([]);
  });

  it("refuses write_file to any path but PLAN.md, and writes PLAN.md", async () => {
    const other = await plan.execute("write_file", JSON.stringify({ path: "notes.md", content: "x" }), ctx);
    expect(other.content).toBe(
      "error (denied): write_file to notes.md was not run — plan mode: only read-only tools and write_file to PLAN.md; /execute leaves plan mode",
    );
    expect(existsSync(join(ws, "notes.md"))).toBe(false);
    const climbing = await plan.execute(
      "write_file",
      JSON.stringify({ path: "../PLAN.md", content: "x" }),
      ctx,
    );
    expect(climbing.code).toBe("denied");
    const written = await plan.execute(
      "write_file",
      JSON.stringify({ path: "PLAN.md", content: "1. look\n" }),
      ctx,
    );
    expect(written).toMatchObject({ isError: false, content: "wrote 8 characters to PLAN.md (created)" });
    expect(readFileSync(join(ws, "PLAN.md"), "utf8")).toBe("1. look\n");
  });

  it("leaves bad arguments to the registry, which runs nothing", async () => {
    const out = await plan.execute("write_file", '{"content":"x"}', ctx);
    expect(out.code).toBe("invalid_arguments");
    expect((await plan.execute("write_file", "not json", ctx)).code).toBe("invalid_arguments");
  });

  it("reads in plan mode", async () => {
    const out = await plan.execute("read_file", JSON.stringify({ path: "PLAN.md" }), ctx);
    expect(out.content).toContain("1. look");
  });
});
