import { describe, expect, it } from "vitest";
import { JitEngine } from "../../../src/harness/jit/jit-engine.js";
import { argumentPaths, JitRunTracker } from "../../../src/harness/jit/jit-run-tracker.js";

describe("JitRunTracker", () => {
  it("builds the snapshot the rules need from the loop's events", () => {
    const t = new JitRunTracker({ startedAtMs: 0, maxToolCalls: 50, recentWindow: 3 });
    const first = t.beforeModelCall(0);
    expect(first).toMatchObject({ modelCall: 1, toolCallsMade: 0, readsSinceLastWrite: 0, compactions: 0 });
    expect(first.modelCallsSinceCompaction).toBeUndefined();
    t.toolCall("read_file", '{"path":"a.md"}');
    t.toolCall("list_files", '{"path":"."}');
    t.beforeModelCall(0);
    t.toolCall("write_file", '{"path":"out.md","content":"x"}');
    t.toolCall("web_fetch", '{"url":"https://example.com"}');
    t.compacted();
    const third = t.beforeModelCall(125_000);
    expect(third).toMatchObject({
      modelCall: 3,
      maxToolCalls: 50,
      toolCallsMade: 4,
      toolCounts: { read_file: 1, list_files: 1, write_file: 1, web_fetch: 1 },
      readsSinceLastWrite: 1,
      compactions: 1,
      modelCallsSinceCompaction: 0,
      minutesInRun: 2,
    });
    expect(third.recentCalls).toEqual([
      { name: "list_files", modelCall: 1, paths: ["."] },
      { name: "write_file", modelCall: 2, paths: ["out.md"] },
      { name: "web_fetch", modelCall: 2, paths: [] },
    ]);
    expect(t.beforeModelCall(0).modelCallsSinceCompaction).toBe(1);
  });

  it("counts calls since a work item was touched", () => {
    const t = new JitRunTracker({ startedAtMs: 0 });
    t.beforeModelCall(0);
    t.workItems(0, 3, true);
    for (let i = 0; i < 4; i++) t.toolCall("read_file", `{"path":"f${i}"}`);
    expect(t.beforeModelCall(0).workItems).toEqual({ done: 0, total: 3, callsSinceTouched: 4 });
    t.toolCall("work_item_update", "{}");
    t.workItems(1, 3, true);
    expect(t.beforeModelCall(0).workItems).toEqual({ done: 1, total: 3, callsSinceTouched: 0 });
  });

  it("feeds the engine: serial reads fire once in the run", () => {
    const t = new JitRunTracker({ startedAtMs: 0 });
    const engine = new JitEngine();
    const lines: string[][] = [];
    for (const file of ["a.ts", "b.ts", "c.ts", "d.ts"]) {
      lines.push(engine.evaluate(t.beforeModelCall(0), t.fired).map((f) => f.ruleId));
      t.toolCall("read_file", JSON.stringify({ path: file }));
    }
    lines.push(engine.evaluate(t.beforeModelCall(0), t.fired).map((f) => f.ruleId));
    expect(lines).toEqual([[], [], [], ["serial-reads"], []]);
  });

  it("reads paths from path and paths, and nothing from bad JSON", () => {
    expect(argumentPaths('{"paths":["a","b",3],"path":"c"}')).toEqual(["c", "a", "b"]);
    expect(argumentPaths('{"path": 1}')).toEqual([]);
    expect(argumentPaths('{"path":')).toEqual([]);
    expect(argumentPaths('{"command":"ls"}')).toEqual([]);
  });
});
