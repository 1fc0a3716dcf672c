/**
 * The end of an assignment's run: its usage and its helpers' added to the checkpoint, the stop decision, then
 * the run log, the new state and the next wake in one store step, then the owner's message (a
 * question is marked sent once it is in the outbox; the end message likewise), and last the
 * PROGRESS.md / checkpoint.json mirror, best effort.
 */
import { contractGaps, contractPaths } from "../../harness/assignments/contract.js";
import type { LiveRun } from "../../harness/assignments/live-run.js";
import type { ProjectFiles } from "../../harness/assignments/project-files.js";
import { decide, progressFingerprint } from "../../harness/assignments/stop-decision.js";
import { totalTokens } from "../../harness/models/prices.js";
import type { Assignment, PendingQuestion } from "../../store/repos/assignment-repo.js";
import type { RunRecord } from "../../store/repos/run-repo.js";
import type { Store } from "../../store/types.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { OwnerMessages } from "./assignment-owner.js";

/** What finishing a run needs. */
export interface FinishContext {
  store: Store;
  clock: Clock;
  files: ProjectFiles;
  owner: OwnerMessages;
  log: Logger;
  checks: { workspaceDir: string; allowCommands: boolean; commandTimeoutMs: number };
  stallThreshold: number;
  questionExpiryHours: number;
  /** The run's cost (USD), from its committed record's calls. */
  costUsd: number;
  /** Every call of its helpers (spawned directly or nested) billed to its session, ever. */
  helpers: { tokens: number; costUsd: number };
  poke(dueNow?: boolean): void;
}

/** Applies the end of a run (see the file header). */
export async function finishRun(live: LiveRun, record: RunRecord, c: FinishContext): Promise<void> {
  const { store, clock } = c;
  const a = live.assignment;
  const cp = a.checkpoint;
  const now = clock.now();
  const tokens = totalTokens(record.usage);
  cp.runs = live.runNo;
  cp.turns += record.modelCalls;
  cp.tokens += tokens;
  cp.costUsd += c.costUsd;
  // The helpers' calls since the last run's end: a total, so a crash before this step's write
  // only moves them to the next run's end, and none is counted twice.
  const counted = cp.helpers ?? { tokens: 0, costUsd: 0 };
  if (c.helpers.tokens > counted.tokens || c.helpers.costUsd > counted.costUsd) {
    cp.tokens += Math.max(0, c.helpers.tokens - counted.tokens);
    cp.costUsd += Math.max(0, c.helpers.costUsd - counted.costUsd);
    cp.helpers = {
      tokens: Math.max(counted.tokens, c.helpers.tokens),
      costUsd: Math.max(counted.costUsd, c.helpers.costUsd),
    };
  }
  const gaps =
    live.acceptedStop !== undefined && a.contract.length > 0 ? await contractGaps(a.contract, c.checks) : [];
  const files = await c.files.fingerprint(a.id, contractPaths(a.contract));
  const d = decide(live, {
    outcome: record.outcome,
    errorKind: record.errorKind,
    error: record.error,
    fingerprint: progressFingerprint(files, live),
    gaps,
    stallThreshold: c.stallThreshold,
    now,
  });
  // A run resumed with the owner's answer: kept if it failed (the next run resumes again), and
  // remembered for the handoff of later, fresh runs once it went through.
  const resumed = a.question?.answer !== undefined ? a.question : null;
  const through = record.outcome === "answered" || record.outcome === "yielded";
  if (resumed && through) cp.lastAnswer = { question: resumed.text, answer: resumed.answer ?? "" };
  const asked = d.directive === "pause" && live.end?.kind === "pause" ? live.end : undefined;
  const question: PendingQuestion | null = asked
    ? {
        tool: asked.tool,
        toolCallId: asked.toolCallId,
        sessionId: live.sessionId,
        text: asked.question,
        askedAt: now,
        remindAt: now + (c.questionExpiryHours * 3_600_000) / 2,
        expiresAt: now + c.questionExpiryHours * 3_600_000,
        reminded: false,
      }
    : resumed && !through
      ? resumed
      : null;
  // The directive's wake replaces any earlier one (a retry queued while this run went on); a
  // question's is its reminder. A crash after this step loses no message: recover() sends a
  // question or an end not yet marked sent.
  const next =
    d.at !== undefined
      ? { dueAt: d.at, reason: d.reason }
      : question && asked
        ? { dueAt: question.remindAt, reason: "the question's reminder" }
        : undefined;
  const moved = await store.assignments.finishRun(
    {
      assignmentId: a.id,
      runNo: live.runNo,
      log: {
        endedAt: now,
        directive: d.directive,
        reason: d.reason,
        turns: record.modelCalls,
        tokens,
        costUsd: c.costUsd,
      },
      state: d.state,
      reason: d.reason,
      from: ["active"],
      work: { items: a.items, checkpoint: cp, question },
      ...(next ? { next: { ...next, sessionKey: a.sessionKey, target: a.owner } } : {}),
    },
    now,
  );
  if (!moved) {
    // Cancelled meanwhile: the run's work is kept, not its verdict.
    const current = await store.assignments.get(a.id);
    if (current) await mirror(current, c);
    return;
  }
  const after: Assignment = { ...a, state: d.state, stateReason: d.reason, question };
  c.log.info(
    { assignment: a.id, run: live.runNo, directive: d.directive, state: d.state, reason: d.reason },
    "assignment run ended",
  );
  if (d.at !== undefined) {
    c.poke(d.at <= now);
    await c.owner.report(after);
  } else if (asked && question) {
    await c.owner.ask(after, question);
    await c.owner.report(after);
  } else await c.owner.end(after, d.summary);
  await mirror(after, c);
}

/** PROGRESS.md and checkpoint.json from `a`; a failure is logged (the database is the record). */
export async function mirror(a: Assignment, c: Pick<FinishContext, "files" | "log">): Promise<void> {
  await c.files.write(a).catch((err: unknown) => {
    c.log.warn({ err, assignment: a.id }, "could not write the assignment's PROGRESS.md / checkpoint.json");
  });
}
