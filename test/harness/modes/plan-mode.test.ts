import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  PLAN_MODE_TOOLS,
  isPlanFileWrite,
  offeredInPlanMode,
  planFilePath,
  planModeRefusal,
} from "../../../src/harness/modes/plan-mode.js";
import { TOOL_CATALOG } from "../../../src/harness/tools/tool-groups.js";

const ws = mkdtempSync(join(tmpdir(), "sy-plan-"));
afterAll(() => rmSync(ws, { recursive: true, force: true }));

describe("plan mode's rules", () => {
  it("puts the plan in the workspace root, or in an assignment's project folder", () => {
    expect(planFilePath("agent:main:http:dm:ann")).toBe("PLAN.md");
    expect(planFilePath("agent:main:task:t00abc12")).toBe("projects/t00abc12/PLAN.md");
  });

  it("offers only tools that read or talk to the owner, and write_file; never exec or an MCP tool", () => {
    for (const name of PLAN_MODE_TOOLS) {
      const groups = TOOL_CATALOG[name];
      expect(groups, name).toBeDefined();
      expect(groups, name).not.toContain("fs-write");
      expect(groups, name).not.toContain("exec");
    }
    const offered = Object.entries(TOOL_CATALOG)
      .filter(([name, groups]) => offeredInPlanMode(name, groups))
      .map(([name]) => name)
      .sort();
    expect(offered).toEqual(
      [
        "ask_owner",
        "cron_list",
        "end_run",
        "heartbeat_ok",
        "list_files",
        "list_wakes",
        "memory_get",
        "memory_search",
        "read_file",
        "request_approval",
        "skill",
        "web_fetch",
        "web_search",
        "work_item_list",
        "write_file",
      ].sort(),
    );
    for (const writer of ["edit_file", "memory_write", "exec", "cron_add", "work_item_add", "task_start"])
      expect(offeredInPlanMode(writer, TOOL_CATALOG[writer] ?? []), writer).toBe(false);
    // A tool of an MCP server or an exec group is not read-only whatever it is called.
    expect(offeredInPlanMode("read_file", ["mcp:files"])).toBe(false);
    expect(offeredInPlanMode("web_search", ["exec"])).toBe(false);
  });

  it("accepts a write to the plan file only, resolved like the file tools", () => {
    mkdirSync(join(ws, "sub"), { recursive: true });
    expect(isPlanFileWrite(ws, "PLAN.md", "PLAN.md")).toBe(true);
    expect(isPlanFileWrite(ws, "./PLAN.md", "PLAN.md")).toBe(true);
    expect(isPlanFileWrite(ws, "sub/../PLAN.md", "PLAN.md")).toBe(true);
    for (const other of ["notes.md", "plan.md", "sub/PLAN.md", "../PLAN.md", join(ws, "PLAN.md"), ""])
      expect(isPlanFileWrite(ws, other, "PLAN.md"), other).toBe(false);
    expect(isPlanFileWrite(ws, "projects/t1/PLAN.md", "projects/t1/PLAN.md")).toBe(true);
    expect(isPlanFileWrite(ws, "PLAN.md", "projects/t1/PLAN.md")).toBe(false);
  });

  it("does not take a PLAN.md that links to another file for the plan file", () => {
    const linked = mkdtempSync(join(tmpdir(), "sy-plan-link-"));
    try {
      writeFileSync(join(linked, "AGENTS.md"), "rules\n");
      symlinkSync("AGENTS.md", join(linked, "PLAN.md"));
      expect(isPlanFileWrite(linked, "PLAN.md", "PLAN.md")).toBe(false);
    } finally {
      rmSync(linked, { recursive: true, force: true });
    }
  });

  it("names the mode, the plan file and the way out in one line", () => {
    expect(planModeRefusal("exec", "agent:main:http:dm:ann")).toBe(
      "exec was not run — plan mode: only read-only tools and write_file to PLAN.md; /execute leaves plan mode",
    );
    const task = planModeRefusal("write_file to out.txt", "agent:main:task:t1");
    expect(task).toBe(
      "write_file to out.txt was not run — plan mode: only read-only tools and write_file to projects/t1/PLAN.md; the owner approving the plan (request_approval) leaves plan mode",
    );
    expect(task).not.toContain("\n");
  });
});
