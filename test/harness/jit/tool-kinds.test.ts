import { describe, expect, it } from "vitest";
import { isPlanFile, JIT_TOOL_KINDS, jitToolKind } from "../../../src/harness/jit/tool-kinds.js";
import { TOOL_CATALOG } from "../../../src/harness/tools/tool-groups.js";

describe("JIT tool kinds", () => {
  it("classifies the reads and writes the issue names, and nothing else as either", () => {
    for (const name of ["read_file", "list_files", "memory_get", "memory_search", "web_fetch"]) {
      expect(jitToolKind(name), name).toBe("read");
    }
    for (const name of ["write_file", "edit_file", "memory_write", "exec"])
      expect(jitToolKind(name), name).toBe("write");
    expect(jitToolKind("mcp:github:get_issue")).toBe("other");
    expect(jitToolKind("toString")).toBe("other");
  });

  it("names only tools of the catalog", () => {
    for (const name of Object.keys(JIT_TOOL_KINDS))
      expect(Object.hasOwn(TOOL_CATALOG, name), name).toBe(true);
  });

  it("knows a plan file in any folder", () => {
    expect(isPlanFile("PLAN.md")).toBe(true);
    expect(isPlanFile("projects/site/PLAN.md")).toBe(true);
    expect(isPlanFile("PLANS.md")).toBe(false);
    expect(isPlanFile("notes/plan.md.bak")).toBe(false);
  });
});
