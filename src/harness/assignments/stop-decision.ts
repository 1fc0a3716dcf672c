/**
 * The decision at the end of an assignment's run: the layered stop decision's verdict for the
 * whole loop, first match wins — hard stops (a failed run, the budget), the agent's own end
 * (work accepted as complete, a question pending), a stop accepted without work_complete (done
 * only with a met contract, else stalled),
 * a stall (the progress fingerprint unchanged for `stallThreshold` runs), the run budget, a wait
 * for helpers (wait_agents), the agent's end_run, else continue. Pure: the runner applies it.
 */
import type { Assignment, AssignmentState, LoopDirective } from "../../store/repos/assignment-repo.js";
import { COMPLETION_REFUSALS, describeItems, type LiveRun, openItems } from "./live-run.js";

/** Failed runs in a row after which the assignment fails. */
export const MAX_FAILED_RUNS = 3;
/** The wait after a failed run, doubled per failure in a row. */
export const FAILED_RUN_RETRY_MS = 5 * 60_000;

/** What the run left, beyond the LiveRun. */
export interface RunFacts {
  /** The run record's outcome, error kind and message. */
  outcome: string;
  errorKind: string | null;
  error: string | null;
  /** The progress fingerprint now. */
  fingerprint: string;
  /** The contract's gaps now (checked only when a stop is being accepted). */
  gaps: readonly string[];
  stallThreshold: number;
  now: number;
}

/** What comes next. `at`: when the next run is queued (continue, sleep). */
export interface Decision {
  directive: LoopDirective;
  state: AssignmentState;
  reason: string;
  at?: number;
  /** The summary for the owner, when done. */
  summary?: string;
}

/**
 * Decides, updating the checkpoint's counters in `live.assignment` (failures in a row,
 * unchanged runs, fingerprint, last directive).
 */
export function decide(live: LiveRun, f: RunFacts): Decision {
  const a = live.assignment;
  const cp = a.checkpoint;
  const d = decideOnce(live, a, f);
  cp.lastDirective = { directive: d.directive, reason: d.reason, at: f.now };
  return d;
}

function decideOnce(live: LiveRun, a: Assignment, f: RunFacts): Decision {
  const cp = a.checkpoint;
  const stop = (state: AssignmentState, reason: string): Decision => ({ directive: "done", state, reason });
  // Hard stops.
  if (f.outcome !== "answered" && f.outcome !== "yielded" && !live.end) {
    if (f.errorKind === "tool_loop")
      return stop("stalled", `it was going round in circles: ${f.error ?? ""}`.trim());
    cp.failuresInRow++;
    const what = `${f.errorKind ?? f.outcome}${f.error ? `: ${f.error}` : ""}`;
    if (cp.failuresInRow >= MAX_FAILED_RUNS)
      return stop("failed", `${cp.failuresInRow} runs in a row failed (${what})`);
    const wait = FAILED_RUN_RETRY_MS * 2 ** (cp.failuresInRow - 1);
    return {
      directive: "sleep",
      state: "sleeping",
      at: f.now + wait,
      reason: `the run failed (${what}); retrying in ${wait / 60_000} min`,
    };
  }
  cp.failuresInRow = 0;
  // Finished work is done, whatever it cost; anything else stops at the budget.
  if (live.end?.kind === "complete")
    return { ...stop("done", "work_complete accepted"), summary: live.end.summary };
  const over = overBudget(a);
  if (over) return stop("failed", over);
  if (live.end?.kind === "pause")
    return {
      directive: "pause",
      state: "requires_action",
      reason: `waiting for the owner (${live.end.tool})`,
    };
  // A stop accepted after COMPLETION_REFUSALS refusals: done only when a contract the harness
  // checked itself is met and no item is open. Without work_complete or a met contract nothing
  // shows the work was done (a model that only talks would otherwise end "done" with nothing made).
  if (live.acceptedStop !== undefined) {
    const open = openItems(a.items);
    if (a.contract.length > 0 && open.length === 0 && f.gaps.length === 0)
      return {
        ...stop(
          "done",
          `its contract is met, without work_complete (accepted after ${COMPLETION_REFUSALS} refusals)`,
        ),
        summary: live.acceptedStop,
      };
    const missing = [
      open.length > 0 ? `open: ${describeItems(open)}` : "",
      ...f.gaps,
      a.contract.length === 0 ? `no work_complete call and no contract to check; ${describeDone(a)}` : "",
    ]
      .filter(Boolean)
      .join("; ");
    return stop("stalled", `it stopped without finishing, ${COMPLETION_REFUSALS} times (${missing})`);
  }
  // Stall: nothing changed in items, project files or tool results for stallThreshold runs.
  const sleeping =
    (live.end?.kind === "end_run" && live.end.directive === "sleep") || live.waitUntil !== undefined;
  if (f.fingerprint === cp.fingerprint && !sleeping) cp.unchangedRuns++;
  else if (!sleeping) cp.unchangedRuns = 0;
  cp.fingerprint = f.fingerprint;
  if (cp.unchangedRuns >= f.stallThreshold)
    return stop(
      "stalled",
      `no progress in ${cp.unchangedRuns} runs in a row (work items, project files and tool results unchanged)`,
    );
  if (cp.runs >= a.limits.maxRuns)
    return stop("failed", `used all ${a.limits.maxRuns} runs without finishing`);
  // wait_agents: asleep until the helpers' results wake it (Assignments.resultsArrived) or the deadline.
  if (live.waitUntil !== undefined)
    return {
      directive: "sleep",
      state: "sleeping",
      at: Math.max(f.now, live.waitUntil),
      reason: "waiting for its helpers (wait_agents)",
    };
  if (live.end?.kind === "end_run")
    return live.end.directive === "sleep"
      ? { directive: "sleep", state: "sleeping", at: f.now + live.end.sleepMs, reason: live.end.note }
      : { directive: "continue", state: "active", at: f.now, reason: live.end.note };
  return {
    directive: "continue",
    state: "active",
    at: f.now,
    reason: live.bound ?? "the model stopped before finishing (continuation prompts used up)",
  };
}

/** "2 of 3 work items done", "no work items". */
function describeDone(a: Assignment): string {
  if (a.items.length === 0) return "no work items";
  return `${a.items.filter((i) => i.status === "done").length} of ${a.items.length} work items done`;
}

/** Why the assignment is over its own token or spend budget, or undefined. */
export function overBudget(a: Assignment): string | undefined {
  const { maxTokens, maxCostUsd } = a.limits;
  const cp = a.checkpoint;
  if (maxTokens !== null && cp.tokens >= maxTokens)
    return `over its token budget (${cp.tokens} of ${maxTokens} tokens used)`;
  if (maxCostUsd !== null && cp.costUsd >= maxCostUsd)
    return `over its spend budget ($${cp.costUsd.toFixed(4)} of $${maxCostUsd} used)`;
  return undefined;
}

/**
 * What a run changed, as one short string: the project files' digest, the work items (status,
 * notes, title) and the digests of this run's calls and results. Equal across runs: no progress.
 */
export function progressFingerprint(filesDigest: string, live: LiveRun): string {
  const items = live.assignment.items.map((i) => `${i.id}:${i.status}:${i.notes}:${i.title}`).join("|");
  const text = `${filesDigest}\n${items}\n${[...live.calls].sort().join(",")}`;
  // FNV-1a: compared for equality, never trusted for security.
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return `${h.toString(16)}:${text.length}`;
}
