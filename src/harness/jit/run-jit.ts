/**
 * JIT guidance as the turn loop uses it (run.ts): before each model call the engine reads the
 * run's tracker and the lines that fire are recorded and returned for that call only; each tool
 * call (run or refused) is reported to the tracker.
 */
import type { TranscriptPayload } from "../../store/repos/transcript-repo.js";
import type { ToolCall } from "../providers/types.js";
import type { JitEngine } from "./jit-engine.js";
import type { JitRunTracker } from "./jit-run-tracker.js";
import type { JitFiring } from "./types.js";

/**
 * A run's just-in-time guidance: the engine's rules read the tracker's snapshot before each
 * model call; the lines that fire go to that call only, after everything else (the cached
 * prefix stays byte-identical), and each firing is recorded in the transcript.
 */
export interface RunJit {
  engine: JitEngine;
  /** This run's counts (the session reports compactions to it; the loop reports the rest). */
  tracker: JitRunTracker;
  /** The clock's now, epoch ms. */
  now(): number;
  /** An assignment run's work items now (done, total); undefined outside one. */
  workItems?(): { done: number; total: number } | undefined;
  /** The lines added to one call (metrics). */
  onFire?(firings: readonly JitFiring[]): void;
}

/** Tools whose call changes an assignment's work items (the JIT staleness count restarts). */
const WORK_ITEM_WRITES: ReadonlySet<string> = new Set(["work_item_add", "work_item_update"]);

/**
 * The JIT lines for model call `call`, recorded in the transcript, as one block; undefined when
 * no rule fires (the quiet path allocates nothing but the snapshot).
 */
export async function jitLines(
  jit: RunJit,
  call: number,
  append: (payloads: TranscriptPayload[]) => Promise<void>,
): Promise<string | undefined> {
  const firings = jit.engine.evaluate(jit.tracker.beforeModelCall(jit.now()), jit.tracker.fired);
  if (firings.length === 0) return undefined;
  await append(firings.map((f) => ({ type: "jit" as const, rule: f.ruleId, line: f.line, call })));
  jit.onFire?.(firings);
  return `<context>\nFor this step:\n${firings.map((f) => `- ${f.line}`).join("\n")}\n</context>`;
}

/** Reports one tool call (run or refused) to the run's JIT counts. */
export function noteToolCall(jit: RunJit, call: ToolCall): void {
  jit.tracker.toolCall(call.name, call.argumentsJson);
  const items = jit.workItems?.();
  if (items) jit.tracker.workItems(items.done, items.total, WORK_ITEM_WRITES.has(call.name));
}
