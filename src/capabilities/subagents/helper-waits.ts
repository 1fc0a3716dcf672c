/**
 * A parent's helpers as its wakes read them, from their rows alone (so a restart reads the same):
 * whether results are due a wake now, which awaited helpers outran their wait, and until when a
 * wait_agents wait still holds. The assignment runner reads these; Subagents wakes other parents.
 */
import type { Subagent } from "../../store/repos/subagent-repo.js";
import { ended } from "./subagents.js";

type Row = Pick<Subagent, "state" | "parentRunId" | "deliveredRunId" | "waitDeadline">;

/** Awaited by a wait_agents whose results are not delivered yet. */
function awaited<T extends Row>(rows: readonly T[]): T[] {
  return rows.filter((c) => c.waitDeadline !== null && c.deliveredRunId === null);
}

/**
 * True when the parent is due a wake with results now: a result not delivered whose spawning
 * run's helpers have all ended, or every helper it waits on has ended.
 */
export function resultsDue(rows: readonly Row[]): boolean {
  const undelivered = rows.filter((c) => ended(c) && c.deliveredRunId === null);
  if (undelivered.length === 0) return false;
  const waits = awaited(rows);
  if (waits.length > 0 && waits.every(ended)) return true;
  return undelivered.some((c) => rows.every((s) => s.parentRunId !== c.parentRunId || ended(s)));
}

/** The awaited helpers still running after their wait's deadline (`now` or earlier). */
export function outranTheirWait<T extends Row>(rows: readonly T[], now: number): T[] {
  return awaited(rows).filter((c) => !ended(c) && (c.waitDeadline ?? 0) <= now);
}

/** The deadline of a wait that still holds at `now` (helpers awaited still run, no results due), or undefined. */
export function waitHoldsUntil(rows: readonly Row[], now: number): number | undefined {
  if (resultsDue(rows)) return undefined;
  const deadlines = awaited(rows)
    .filter((c) => !ended(c) && (c.waitDeadline ?? 0) > now)
    .map((c) => c.waitDeadline ?? 0);
  return deadlines.length > 0 ? Math.max(...deadlines) : undefined;
}
