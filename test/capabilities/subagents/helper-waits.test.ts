/**
 * A parent's helpers as its wakes read them from their rows: results due (a finished batch, or
 * every awaited helper ended), the helpers that outran their wait, and until when a wait holds.
 */
import { describe, expect, it } from "vitest";
import {
  outranTheirWait,
  resultsDue,
  waitHoldsUntil,
} from "../../../src/capabilities/subagents/helper-waits.js";
import type { Subagent } from "../../../src/store/repos/subagent-repo.js";
import { SILENT_DELIVERY } from "../../../src/store/reasons.js";

type Row = Pick<Subagent, "id" | "state" | "parentRunId" | "deliveredRunId" | "waitDeadline">;
const row = (id: string, over: Partial<Row> = {}): Row => ({
  id,
  state: "running",
  parentRunId: "run_1",
  deliveredRunId: null,
  waitDeadline: null,
  ...over,
});

describe("resultsDue", () => {
  it("is due when a run's helpers have all ended with a result not delivered", () => {
    expect(resultsDue([row("a", { state: "done" }), row("b", { state: "failed" })])).toBe(true);
    expect(resultsDue([row("a", { state: "done" }), row("b")])).toBe(false);
    expect(resultsDue([row("a", { state: "done", deliveredRunId: "run_2" })])).toBe(false);
    expect(resultsDue([row("a", { state: "cancelled", deliveredRunId: SILENT_DELIVERY })])).toBe(false);
    expect(resultsDue([row("a", { state: "done" }), row("b", { parentRunId: "run_0" })])).toBe(true);
  });

  it("is due when every awaited helper ended, others of the run still running", () => {
    const rows = [row("a", { state: "done", waitDeadline: 9 }), row("b")];
    expect(resultsDue(rows)).toBe(true);
    expect(resultsDue([...rows, row("c", { waitDeadline: 9 })])).toBe(false);
  });
});

describe("outranTheirWait and waitHoldsUntil", () => {
  const rows = [row("slow", { waitDeadline: 100 }), row("quick", { state: "done", waitDeadline: 100 })];
  it("names the awaited helpers still running at or after the deadline", () => {
    expect(outranTheirWait(rows, 99)).toEqual([]);
    expect(outranTheirWait(rows, 100).map((c) => c.id)).toEqual(["slow"]);
    expect(outranTheirWait([row("free")], 500)).toEqual([]);
  });

  it("holds until the deadline while an awaited helper runs and no result is due", () => {
    expect(waitHoldsUntil(rows, 50)).toBe(100);
    expect(waitHoldsUntil(rows, 100)).toBeUndefined();
    expect(waitHoldsUntil([row("slow", { state: "done", waitDeadline: 100 })], 50)).toBeUndefined();
    expect(waitHoldsUntil([row("free")], 50)).toBeUndefined();
  });
});
