import { describe, expect, it } from "vitest";
import {
  BUILTIN_JIT_RULE_IDS,
  BUILTIN_JIT_RULES,
  PLANNING_STREAK,
  READS_WITHOUT_WRITE,
  STALE_WORK_ITEM_CALLS,
} from "../../../src/harness/jit/builtin-rules.js";
import type { JitRule, JitSnapshot } from "../../../src/harness/jit/types.js";
import { call, quietSnapshot } from "./snapshot.js";

function rule(id: string): JitRule {
  const found = BUILTIN_JIT_RULES.find((r) => r.id === id);
  if (!found) throw new Error(`no rule ${id}`);
  return found;
}

/** Every built-in rule: a snapshot it fires on and a near miss it stays quiet on. */
const cases: { id: string; fires: JitSnapshot; nearMiss: JitSnapshot; line: RegExp }[] = [
  {
    id: "turn-limit",
    // Call 9 of 10 is in the last 20%; call 8 is not.
    fires: quietSnapshot({ modelCall: 9, maxModelCalls: 10 }),
    nearMiss: quietSnapshot({ modelCall: 8, maxModelCalls: 10 }),
    line: /^2 calls left: finish the current item$/,
  },
  {
    id: "after-compaction",
    fires: quietSnapshot({
      compactions: 1,
      modelCallsSinceCompaction: 0,
      workItems: { done: 1, total: 3, callsSinceTouched: 0 },
    }),
    nearMiss: quietSnapshot({ compactions: 1, modelCallsSinceCompaction: 1 }),
    line: /^Context was compacted: check work_item_list and PROGRESS\.md/,
  },
  {
    id: "stale-work-items",
    fires: quietSnapshot({ workItems: { done: 1, total: 4, callsSinceTouched: STALE_WORK_ITEM_CALLS } }),
    nearMiss: quietSnapshot({
      workItems: { done: 1, total: 4, callsSinceTouched: STALE_WORK_ITEM_CALLS - 1 },
    }),
    line: /^No work item updated in 10 calls \(1\/4 done\)/,
  },
  {
    id: "reads-without-deliverable",
    fires: quietSnapshot({ readsSinceLastWrite: READS_WITHOUT_WRITE }),
    nearMiss: quietSnapshot({ readsSinceLastWrite: READS_WITHOUT_WRITE - 1 }),
    line: /^10 reads since the last write: write down what you have/,
  },
  {
    id: "planning-without-doing",
    fires: quietSnapshot({
      modelCall: 6,
      recentCalls: [
        call("work_item_add", 1),
        call("work_item_add", 2),
        call("write_file", 3, "PLAN.md"),
        call("edit_file", 4, "proj/PLAN.md"),
        call("work_item_list", 5),
      ],
    }),
    // The same streak broken by one real write.
    nearMiss: quietSnapshot({
      modelCall: 6,
      recentCalls: [
        call("work_item_add", 1),
        call("work_item_add", 2),
        call("write_file", 3, "src/app.ts"),
        call("edit_file", 4, "PLAN.md"),
        call("work_item_list", 5),
      ],
    }),
    line: new RegExp(`^${PLANNING_STREAK} planning calls in a row`),
  },
  {
    id: "serial-reads",
    fires: quietSnapshot({
      modelCall: 5,
      recentCalls: [
        call("write_file", 1, "x.md"),
        call("read_file", 2, "a.ts"),
        call("read_file", 3, "b.ts"),
        call("memory_get", 4, "memory/c.md"),
      ],
    }),
    // The same three reads made in one step.
    nearMiss: quietSnapshot({
      modelCall: 3,
      recentCalls: [
        call("write_file", 1, "x.md"),
        call("read_file", 2, "a.ts"),
        call("read_file", 2, "b.ts"),
        call("read_file", 2, "c.ts"),
      ],
    }),
    line: /read them in one step|in one step/,
  },
  {
    id: "repeated-compaction",
    fires: quietSnapshot({ compactions: 2, modelCallsSinceCompaction: 3 }),
    nearMiss: quietSnapshot({ compactions: 1, modelCallsSinceCompaction: 3 }),
    line: /^Context compacted 2 times this run/,
  },
];

describe("built-in JIT rules", () => {
  it("covers every built-in rule with a case, ids unique", () => {
    expect(cases.map((c) => c.id).sort()).toEqual([...BUILTIN_JIT_RULE_IDS].sort());
    expect(new Set(BUILTIN_JIT_RULE_IDS).size).toBe(BUILTIN_JIT_RULE_IDS.length);
  });

  it("stays quiet on a quiet snapshot", () => {
    for (const r of BUILTIN_JIT_RULES) expect(r.evaluate(quietSnapshot()), r.id).toBeUndefined();
  });

  for (const c of cases) {
    it(`${c.id}: fires on its pattern with one short line, deterministically, and not on a near miss`, () => {
      const r = rule(c.id);
      const line = r.evaluate(c.fires);
      expect(line).toMatch(c.line);
      expect(line?.length).toBeLessThan(160);
      expect(line).not.toMatch(/[\r\n]/);
      expect(r.evaluate(c.fires)).toBe(line);
      expect(r.evaluate(c.nearMiss)).toBeUndefined();
    });
  }

  it("turn-limit counts tool calls too and takes the tighter limit", () => {
    const r = rule("turn-limit");
    // 16 of 20 tool calls made: 4 left, the last 20%.
    expect(r.evaluate(quietSnapshot({ maxToolCalls: 20, toolCallsMade: 16 }))).toBe(
      "4 calls left: finish the current item",
    );
    expect(r.evaluate(quietSnapshot({ maxToolCalls: 20, toolCallsMade: 15 }))).toBeUndefined();
    expect(
      r.evaluate(quietSnapshot({ modelCall: 10, maxModelCalls: 10, maxToolCalls: 20, toolCallsMade: 17 })),
    ).toBe("1 call left: finish the current item");
    expect(r.evaluate(quietSnapshot({ maxToolCalls: 20, toolCallsMade: 20 }))).toMatch(/^No calls left/);
  });

  it("after-compaction outside an assignment does not name work_item_list", () => {
    expect(
      rule("after-compaction").evaluate(quietSnapshot({ compactions: 1, modelCallsSinceCompaction: 0 })),
    ).toBe("Context was compacted: check PROGRESS.md and your notes before continuing");
  });

  it("stale-work-items is quiet outside assignments and once every item is done", () => {
    const r = rule("stale-work-items");
    expect(
      r.evaluate(quietSnapshot({ workItems: { done: 4, total: 4, callsSinceTouched: 30 } })),
    ).toBeUndefined();
    expect(r.evaluate(quietSnapshot())).toBeUndefined();
  });

  it("serial-reads wants distinct files read up to the previous call", () => {
    const r = rule("serial-reads");
    const reads = [call("read_file", 2, "a.ts"), call("read_file", 3, "a.ts"), call("read_file", 4, "b.ts")];
    expect(r.evaluate(quietSnapshot({ modelCall: 5, recentCalls: reads }))).toBeUndefined();
    const distinct = [
      call("read_file", 2, "a.ts"),
      call("read_file", 3, "b.ts"),
      call("read_file", 4, "c.ts"),
    ];
    // A model call in between without tools (a reply) breaks the chain.
    expect(r.evaluate(quietSnapshot({ modelCall: 6, recentCalls: distinct }))).toBeUndefined();
    // A write in the chain breaks it.
    const withWrite = [
      call("read_file", 2, "a.ts"),
      call("write_file", 3, "b.ts"),
      call("read_file", 4, "c.ts"),
    ];
    expect(r.evaluate(quietSnapshot({ modelCall: 5, recentCalls: withWrite }))).toBeUndefined();
  });
});
