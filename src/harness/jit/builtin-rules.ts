/**
 * The built-in JIT rules, highest priority first (the engine keeps that order when it caps the
 * lines of one call). Each is pure, reads only the snapshot, and says one short line that names
 * what it saw and what to do. Thresholds are exported so tests and docs quote one number.
 */
import { isPlanFile, jitToolKind } from "./tool-kinds.js";
import type { BuiltinJitRuleId, JitRule, JitSnapshot, JitToolCall } from "./types.js";

/** The share of a run's limit at whose end `turn-limit` speaks (the last 20%). */
export const TURN_LIMIT_SHARE = 0.2;
/** Reads since the last write at which `reads-without-deliverable` speaks. */
export const READS_WITHOUT_WRITE = 10;
/** Consecutive model calls that each read one file at which `serial-reads` speaks. */
export const SERIAL_READS = 3;
/** Consecutive planning tool calls at which `planning-without-doing` speaks. */
export const PLANNING_STREAK = 5;
/** Tool calls without a work item touched at which `stale-work-items` speaks. */
export const STALE_WORK_ITEM_CALLS = 10;
/** Compactions in one run at which `repeated-compaction` speaks. */
export const REPEATED_COMPACTIONS = 2;

/** A rule whose id is one of the built-in ids. */
type BuiltinRule = JitRule & { readonly id: BuiltinJitRuleId };

/** Calls left under the tighter limit when within its last 20%, else undefined. */
function callsLeftNearLimit(s: JitSnapshot): number | undefined {
  let left: number | undefined;
  if (s.maxModelCalls !== undefined) {
    // This call counts: at call 9 of 10, this one and one more remain.
    const modelLeft = s.maxModelCalls - s.modelCall + 1;
    if (modelLeft <= Math.ceil(s.maxModelCalls * TURN_LIMIT_SHARE)) left = modelLeft;
  }
  if (s.maxToolCalls !== undefined) {
    const toolLeft = s.maxToolCalls - s.toolCallsMade;
    if (toolLeft <= Math.ceil(s.maxToolCalls * TURN_LIMIT_SHARE)) {
      left = left === undefined ? toolLeft : Math.min(left, toolLeft);
    }
  }
  return left;
}

const turnLimit: BuiltinRule = {
  id: "turn-limit",
  once: false,
  evaluate(s) {
    const left = callsLeftNearLimit(s);
    if (left === undefined) return undefined;
    if (left <= 0) return "No calls left: answer now with what you have and say what is unfinished";
    return `${left} call${left === 1 ? "" : "s"} left: finish the current item`;
  },
};

const afterCompaction: BuiltinRule = {
  id: "after-compaction",
  once: false,
  evaluate(s) {
    if (s.modelCallsSinceCompaction !== 0) return undefined;
    return s.workItems !== undefined
      ? "Context was compacted: check work_item_list and PROGRESS.md before continuing"
      : "Context was compacted: check PROGRESS.md and your notes before continuing";
  },
};

const staleWorkItems: BuiltinRule = {
  id: "stale-work-items",
  once: false,
  evaluate(s) {
    const items = s.workItems;
    if (items === undefined || items.done >= items.total) return undefined;
    if (items.callsSinceTouched < STALE_WORK_ITEM_CALLS) return undefined;
    return `No work item updated in ${items.callsSinceTouched} calls (${items.done}/${items.total} done): record progress with work_item_update`;
  },
};

const readsWithoutDeliverable: BuiltinRule = {
  id: "reads-without-deliverable",
  once: true,
  evaluate(s) {
    if (s.readsSinceLastWrite < READS_WITHOUT_WRITE) return undefined;
    return `${s.readsSinceLastWrite} reads since the last write: write down what you have before reading more`;
  },
};

/** Whether a call arranges work rather than does it. */
function isPlanning(call: JitToolCall): boolean {
  const kind = jitToolKind(call.name);
  if (kind === "plan") return true;
  return kind === "write" && call.name !== "exec" && call.paths.length > 0 && call.paths.every(isPlanFile);
}

const planningWithoutDoing: BuiltinRule = {
  id: "planning-without-doing",
  once: true,
  evaluate(s) {
    const calls = s.recentCalls;
    if (calls.length < PLANNING_STREAK) return undefined;
    for (let i = calls.length - PLANNING_STREAK; i < calls.length; i++) {
      if (!isPlanning(calls[i] as JitToolCall)) return undefined;
    }
    return `${PLANNING_STREAK} planning calls in a row: the plan is enough, start on the first item now`;
  },
};

const serialReads: BuiltinRule = {
  id: "serial-reads",
  once: true,
  evaluate(s) {
    // The last SERIAL_READS model calls (ending with the previous one) each made exactly one
    // call: a read of one path, each path different.
    const calls = s.recentCalls;
    let i = calls.length - 1;
    let step = s.modelCall - 1;
    const seen: string[] = [];
    for (let k = 0; k < SERIAL_READS; k++, i--, step--) {
      const call = calls[i];
      if (call === undefined || call.modelCall !== step) return undefined;
      if (calls[i - 1]?.modelCall === step) return undefined;
      const path = call.paths[0];
      if (jitToolKind(call.name) !== "read" || call.paths.length !== 1 || path === undefined)
        return undefined;
      if (seen.includes(path)) return undefined;
      seen.push(path);
    }
    return "One file read per call: read the files you need in one step (several read calls in one reply)";
  },
};

const repeatedCompaction: BuiltinRule = {
  id: "repeated-compaction",
  once: true,
  evaluate(s) {
    if (s.compactions < REPEATED_COMPACTIONS) return undefined;
    return `Context compacted ${s.compactions} times this run: keep PROGRESS.md current and read less per step`;
  },
};

/** The built-in rules, highest priority first. */
export const BUILTIN_JIT_RULES: readonly BuiltinRule[] = [
  turnLimit,
  afterCompaction,
  staleWorkItems,
  readsWithoutDeliverable,
  planningWithoutDoing,
  serialReads,
  repeatedCompaction,
];

/** The ids of the built-in rules, in priority order (what `agent.jit.disable` may name). */
export const BUILTIN_JIT_RULE_IDS: readonly BuiltinJitRuleId[] = BUILTIN_JIT_RULES.map((r) => r.id);
