/** The pure rules of which tool calls of one turn may overlap (harness/tools/parallel-plan.ts). */
import { describe, expect, it } from "vitest";
import { PLAN_MODE_TOOLS } from "../../../src/harness/modes/plan-mode.js";
import {
  checkMaxParallelTools,
  parallelSafe,
  planToolBatches,
} from "../../../src/harness/tools/parallel-plan.js";
import { READ_ONLY_TOOL_NAMES } from "../../../src/harness/tools/read-only-tools.js";

/** The batches of calls named `names`, as lists of names. */
const plan = (names: string[], max = 4): string[][] =>
  planToolBatches(
    names.map((name) => ({ name })),
    max,
  ).map((b) => b.map((c) => c.name));

describe("parallelSafe", () => {
  it("holds for every read-only built-in tool and spawn_agent", () => {
    for (const name of [
      "read_file",
      "list_files",
      "memory_search",
      "memory_get",
      "skill",
      "web_fetch",
      "web_search",
      "cron_list",
      "list_wakes",
      "work_item_list",
      "spawn_agent",
    ])
      expect(parallelSafe(name), name).toBe(true);
  });

  it("does not hold for writes, exec, the owner's tools, MCP tools or unknown names", () => {
    for (const name of [
      "write_file",
      "edit_file",
      "memory_write",
      "exec",
      "work_item_add",
      "work_item_update",
      "work_complete",
      "ask_owner",
      "request_approval",
      "end_run",
      "wait_agents",
      "docs__read_file",
      "no_such_tool",
      "",
    ])
      expect(parallelSafe(name), name).toBe(false);
  });

  it("shares its read-only list with plan mode (one list, not two)", () => {
    for (const name of READ_ONLY_TOOL_NAMES) expect(PLAN_MODE_TOOLS.has(name), name).toBe(true);
    expect([...PLAN_MODE_TOOLS].filter((n) => !READ_ONLY_TOOL_NAMES.has(n)).sort()).toEqual([
      "ask_owner",
      "end_run",
      "heartbeat_ok",
      "request_approval",
    ]);
  });
});

describe("planToolBatches", () => {
  it("puts consecutive parallel-safe calls in one batch, however many (the bound applies inside it)", () => {
    const reads = Array.from({ length: 9 }, () => "read_file");
    expect(plan(reads, 4)).toEqual([reads]);
    expect(plan(["read_file", "spawn_agent", "web_fetch"])).toEqual([
      ["read_file", "spawn_agent", "web_fetch"],
    ]);
  });

  it("makes every other call a batch of its own, in the model's order", () => {
    expect(plan(["read_file", "read_file", "write_file", "read_file", "exec", "exec", "list_files"])).toEqual(
      [["read_file", "read_file"], ["write_file"], ["read_file"], ["exec"], ["exec"], ["list_files"]],
    );
    expect(plan(["write_file", "write_file"])).toEqual([["write_file"], ["write_file"]]);
    expect(plan(["mcp__x", "read_file", "unknown"])).toEqual([["mcp__x"], ["read_file"], ["unknown"]]);
  });

  it("with maxParallelTools 1 runs every call alone", () => {
    expect(plan(["read_file", "read_file", "spawn_agent"], 1)).toEqual([
      ["read_file"],
      ["read_file"],
      ["spawn_agent"],
    ]);
  });

  it("keeps every call, once, in order, and returns the calls themselves", () => {
    const calls = ["a", "read_file", "read_file", "b", "read_file"].map((name, i) => ({ name, i }));
    const batches = planToolBatches(calls, 3);
    expect(batches.flat()).toEqual(calls);
    expect(batches.flat()[1]).toBe(calls[1]);
    expect(planToolBatches([], 4)).toEqual([]);
  });

  it("refuses a bound that is not an integer of at least 1, naming it", () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => planToolBatches([], bad)).toThrow(
        `maxParallelTools must be an integer of at least 1, got ${bad}`,
      );
    expect(checkMaxParallelTools(16)).toBe(16);
  });
});
