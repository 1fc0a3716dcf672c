import { describe, expect, it } from "vitest";
import { BUILTIN_JIT_RULE_IDS } from "../../../src/harness/jit/builtin-rules.js";
import { JitEngine } from "../../../src/harness/jit/jit-engine.js";
import { JitError } from "../../../src/harness/jit/jit-error.js";
import type { JitRule } from "../../../src/harness/jit/types.js";
import { call, quietSnapshot } from "./snapshot.js";

/** Serial reads ending at the previous call, so `serial-reads` fires on model call 5. */
const serial = quietSnapshot({
  modelCall: 5,
  recentCalls: [call("read_file", 2, "a.ts"), call("read_file", 3, "b.ts"), call("read_file", 4, "c.ts")],
});

describe("JitEngine", () => {
  it("adds nothing on a quiet snapshot", () => {
    const fired = new Set<string>();
    expect(new JitEngine().evaluate(quietSnapshot(), fired)).toEqual([]);
    expect(fired.size).toBe(0);
  });

  it("fires a once-rule once per run, and again in a new run", () => {
    const engine = new JitEngine();
    const run = new Set<string>();
    expect(engine.evaluate(serial, run)).toEqual([
      { ruleId: "serial-reads", line: expect.stringMatching(/in one step/) },
    ]);
    expect(engine.evaluate(serial, run)).toEqual([]);
    expect(engine.evaluate(serial, new Set())).toHaveLength(1);
  });

  it("fires a rule that is not once on every call its pattern holds", () => {
    const engine = new JitEngine();
    const run = new Set<string>();
    const near = quietSnapshot({ modelCall: 9, maxModelCalls: 10 });
    expect(engine.evaluate(near, run)).toEqual([
      { ruleId: "turn-limit", line: "2 calls left: finish the current item" },
    ]);
    expect(engine.evaluate({ ...near, modelCall: 10 }, run)).toEqual([
      { ruleId: "turn-limit", line: "1 call left: finish the current item" },
    ]);
  });

  it("skips disabled rules and refuses an unknown id", () => {
    const engine = new JitEngine({ disable: ["serial-reads"] });
    expect(engine.evaluate(serial, new Set())).toEqual([]);
    expect(engine.ruleIds).not.toContain("serial-reads");
    expect(engine.ruleIds).toHaveLength(BUILTIN_JIT_RULE_IDS.length - 1);
    expect(() => new JitEngine({ disable: ["serial-read"] })).toThrow(/jit\.disable names "serial-read"/);
    expect(() => new JitEngine({ disable: ["nope"] })).toThrow(JitError);
  });

  it("returns at most two lines, highest priority first; a capped once-rule speaks later", () => {
    const engine = new JitEngine();
    const run = new Set<string>();
    const busy = {
      ...serial,
      maxModelCalls: 5,
      readsSinceLastWrite: 12,
      compactions: 2,
      modelCallsSinceCompaction: 0,
    };
    expect(engine.evaluate(busy, run).map((f) => f.ruleId)).toEqual(["turn-limit", "after-compaction"]);
    expect(run.has("serial-reads")).toBe(false);
    const later = { ...busy, modelCallsSinceCompaction: 1 };
    expect(engine.evaluate(later, run).map((f) => f.ruleId)).toEqual([
      "turn-limit",
      "reads-without-deliverable",
    ]);
    expect(engine.evaluate(later, run).map((f) => f.ruleId)).toEqual(["turn-limit", "serial-reads"]);
    expect(engine.evaluate(later, run).map((f) => f.ruleId)).toEqual(["turn-limit", "repeated-compaction"]);
    expect(engine.evaluate(later, run).map((f) => f.ruleId)).toEqual(["turn-limit"]);
    expect(new JitEngine({ maxLines: 1 }).evaluate(busy, new Set()).map((f) => f.ruleId)).toEqual([
      "turn-limit",
    ]);
  });

  it("keeps a custom rule's line to one line under 160 characters", () => {
    const loud: JitRule = { id: "loud", once: false, evaluate: () => `first\nsecond ${"x".repeat(300)}` };
    const [firing] = new JitEngine({ rules: [loud] }).evaluate(quietSnapshot(), new Set());
    expect(firing?.line.startsWith("first second x")).toBe(true);
    expect(firing?.line.length).toBeLessThan(160);
  });

  it("refuses duplicate rule ids and a bad maxLines", () => {
    const r: JitRule = { id: "a", once: false, evaluate: () => undefined };
    expect(() => new JitEngine({ rules: [r, r] })).toThrow(/"a" is used twice/);
    expect(() => new JitEngine({ maxLines: 0 })).toThrow(/maxLines is 0/);
  });
});
