/** A quiet JIT snapshot for tests: no rule fires on it; each test overrides what it needs. */
import type { JitSnapshot, JitToolCall } from "../../../src/harness/jit/types.js";

/** A snapshot at model call 3 of an unlimited run with nothing notable in it. */
export function quietSnapshot(over: Partial<JitSnapshot> = {}): JitSnapshot {
  return {
    modelCall: 3,
    toolCallsMade: 2,
    toolCounts: { read_file: 1, write_file: 1 },
    readsSinceLastWrite: 0,
    recentCalls: [
      { name: "read_file", modelCall: 1, paths: ["a.md"] },
      { name: "write_file", modelCall: 2, paths: ["b.md"] },
    ],
    compactions: 0,
    minutesInRun: 1,
    ...over,
  };
}

/** One tool call of model call `modelCall`. */
export function call(name: string, modelCall: number, ...paths: string[]): JitToolCall {
  return { name, modelCall, paths };
}
