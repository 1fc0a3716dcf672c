/**
 * An assignment's run while it runs: the assignment as its tools change it, the counters the
 * stop decision reads, and how it asked to end. The hooks (`assignmentHooks`) make the layered
 * stop decision inside the loop: the run yields when its work is accepted as complete, when a
 * question to the owner is pending, when the agent ended it, or at its bounds (model calls,
 * minutes); a stop without work_complete gets a continuation prompt, at most
 * `maxContinuationPrompts` in a row, and is refused up to COMPLETION_REFUSALS times in all.
 */
import { createHash } from "node:crypto";
import type { Assignment, LoopDirective, WorkItem } from "../../store/repos/assignment-repo.js";
import type { Clock } from "../../util/clock.js";
import type { RunInfo } from "../agent-session.js";
import type { TurnHooks } from "../hooks.js";
import { type CheckOptions, contractGaps, gapReport } from "./contract.js";

/** Stops without work_complete refused before one is accepted. */
export const COMPLETION_REFUSALS = 3;

/** How the run asked to end (set by a tool, read by the hooks and the runner). */
export type RunEnd =
  | { kind: "complete"; summary: string }
  | { kind: "pause"; tool: string; toolCallId: string; question: string }
  | {
      kind: "end_run";
      directive: Extract<LoopDirective, "continue" | "sleep">;
      sleepMs: number;
      note: string;
    };

/** One assignment run in flight. */
export interface LiveRun {
  /** The assignment as this run's tools leave it (items and checkpoint are saved as they change). */
  assignment: Assignment;
  runNo: number;
  runId: string;
  sessionId: string;
  startedAt: number;
  /** Stops in a row answered with a continuation prompt. */
  nudgesInRow: number;
  /** A stop accepted without work_complete (COMPLETION_REFUSALS were refused before). */
  acceptedStop?: string;
  /** Why the loop yielded at a bound (model calls, minutes). */
  bound?: string;
  end?: RunEnd;
  /**
   * wait_agents ended the run: the next comes with the awaited helpers' results, or at this time
   * (epoch ms) at the latest.
   */
  waitUntil?: number;
  /** Digests of (call, arguments, result): what this run did, for the progress fingerprint. */
  calls: Set<string>;
}

/** The runs in flight, by run id (hooks and tools find theirs through ToolContext/HookTurn.runId). */
export class LiveRuns {
  readonly #runs = new Map<string, LiveRun>();
  begin(run: LiveRun): void {
    this.#runs.set(run.runId, run);
  }
  get(runId: string): LiveRun | undefined {
    return this.#runs.get(runId);
  }
  end(runId: string): LiveRun | undefined {
    const run = this.#runs.get(runId);
    this.#runs.delete(runId);
    return run;
  }
}

/**
 * What a turn of this run is told of it (AgentSession's RunInfo): its model-call limit, and its
 * work items now — finished (done or dropped) of all, and the open ones as one line each.
 */
export function runInfoOf(live: LiveRun): RunInfo {
  return {
    maxModelCalls: live.assignment.limits.maxTurnsPerRun,
    workItems: () => {
      const items = live.assignment.items;
      const open = openItems(items);
      return {
        done: items.length - open.length,
        total: items.length,
        open: open.map((i) => itemLine(i, 60)),
      };
    },
  };
}

/** Items not finished (neither done nor dropped). */
export function openItems(items: readonly WorkItem[]): WorkItem[] {
  return items.filter((i) => i.status !== "done" && i.status !== "dropped");
}

/** `#2 [status] title — notes` (the notes cut at `maxNotes` characters), as the model reads an item. */
export function itemLine(i: WorkItem, maxNotes = Number.POSITIVE_INFINITY): string {
  return `#${i.id} [${i.status}] ${i.title}${i.notes ? ` — ${i.notes.slice(0, maxNotes)}` : ""}`;
}

/** `#2 "title" (status)` for each, comma-separated. */
export function describeItems(items: readonly WorkItem[]): string {
  return items.map((i) => `#${i.id} "${i.title}" (${i.status.replace("_", " ")})`).join(", ");
}

/** Tools that only read: their calls are left out of the progress fingerprint. */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  "read_file",
  "list_files",
  "memory_search",
  "memory_get",
  "skill",
  "work_item_list",
  "list_wakes",
  "cron_list",
]);

/** The nudge sent when the model stops without a tool call or work_complete. */
export const CONTINUATION_PROMPT =
  "You stopped without calling work_complete. Do not repeat yourself; either call work_complete (when every work item is done) or make the next tool call.";

/** What the hooks need. */
export interface AssignmentHookOptions {
  runs: LiveRuns;
  clock: Clock;
  maxContinuationPrompts: number;
  /**
   * Tools declared `requiresHuman`: a successful call pauses the run for the owner's answer (as
   * does any call whose result says `requiresHuman`, e.g. exec asking to run a flagged command).
   */
  humanTools: ReadonlySet<string>;
  checks: Omit<CheckOptions, "signal">;
}

/** The text a human tool's call records until the owner answers (the answer replaces it). */
export const WAITING_FOR_OWNER =
  "Sent to the owner. This run ends now; their answer becomes this call's result when the assignment resumes.";

/** The stop decision inside the loop (see the file header); inert for runs that are not assignments'. */
export function assignmentHooks(o: AssignmentHookOptions): TurnHooks {
  return {
    yieldBefore(turn, modelCalls) {
      const live = o.runs.get(turn.runId);
      if (!live) return undefined;
      if (live.end) return `run end requested (${live.end.kind})`;
      const { limits } = live.assignment;
      if (modelCalls >= limits.maxTurnsPerRun) {
        live.bound = `reached ${limits.maxTurnsPerRun} model calls in this run`;
        return live.bound;
      }
      if (o.clock.now() - live.startedAt >= limits.maxRunMinutes * 60_000) {
        live.bound = `reached ${limits.maxRunMinutes} minutes in this run`;
        return live.bound;
      }
      return undefined;
    },
    async afterToolCall(call, outcome, turn) {
      const live = o.runs.get(turn.runId);
      if (!live) return outcome;
      live.nudgesInRow = 0;
      // Reading is not progress (PROGRESS.md changes every run): only calls that act count.
      if (!READ_ONLY_TOOLS.has(call.name))
        live.calls.add(
          createHash("sha1").update(`${call.name}\0${call.argumentsJson}\0${outcome.content}`).digest("hex"),
        );
      if (!(o.humanTools.has(call.name) || outcome.requiresHuman) || outcome.isError) return outcome;
      if (live.end)
        return {
          ...outcome,
          content: `error: not sent — this run is already ending (${live.end.kind}); ask one thing at a time, after the answer`,
          isError: true,
        };
      live.end = { kind: "pause", tool: call.name, toolCallId: call.id, question: outcome.content };
      return { ...outcome, content: WAITING_FOR_OWNER, isError: false };
    },
    async beforeStop(answer, turn) {
      const live = o.runs.get(turn.runId);
      if (!live || live.end) return undefined;
      const cp = live.assignment.checkpoint;
      if (cp.completionRefusals >= COMPLETION_REFUSALS) {
        live.acceptedStop = answer;
        return undefined;
      }
      cp.completionRefusals++;
      if (live.nudgesInRow >= o.maxContinuationPrompts) return undefined;
      live.nudgesInRow++;
      const open = openItems(live.assignment.items);
      const gaps = open.length === 0 ? await contractGaps(live.assignment.contract, o.checks) : [];
      const parts = [CONTINUATION_PROMPT];
      if (open.length > 0) parts.push(`Open work items: ${describeItems(open)}.`);
      if (live.assignment.items.length === 0)
        parts.push("There are no work items yet: break the goal down with work_item_add first.");
      if (gaps.length > 0) parts.push(gapReport(gaps));
      return { continueWith: parts.join("\n") };
    },
  };
}
