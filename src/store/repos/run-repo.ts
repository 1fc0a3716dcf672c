/** The runs' contract: one record per committed turn (its trigger, model, outcome and usage). */
import type { TokenUsage } from "../../harness/providers/types.js";

/** What started a run. */
export type RunTrigger = "user" | "cron" | "heartbeat" | "wake" | "subagent" | "recovery" | "assignment";
/** How a run ended. */
/** `yielded`: an assignment's run ended on purpose without an answer (see AgentRunOutcome). */
export type RunOutcome = "answered" | "failed" | "aborted" | "timeout" | "yielded";

/** One model-call attempt of a run: who made it and how it ended. */
export interface AttemptRecord {
  provider: string;
  model: string;
  profileId: string;
  /** "ok", or the failure kind (`rate_limit`, `overloaded`, …). */
  outcome: string;
  /** Time waited for a cooling profile before this attempt, in ms (0 when none). */
  waitMs: number;
}

/** The usage of one model call (an attempt that reported usage), priced when it was made. */
export interface ModelCallUsage {
  at: number;
  provider: string;
  model: string;
  profileId: string;
  usage: TokenUsage;
  costUsd: number;
}

/** One run: what ran it, with which model, how it ended, what it used. Written by commitTurn. */
export interface RunRecord {
  runId: string;
  sessionKey: string;
  trigger: RunTrigger;
  channel: string | null;
  provider: string;
  model: string;
  startedAt: number;
  durationMs: number;
  outcome: RunOutcome;
  usage: TokenUsage;
  toolCalls: number;
  modelCalls: number;
  errorKind: string | null;
  error: string | null;
  /** Every model-call attempt, in order. */
  attempts: AttemptRecord[];
  /**
   * Usage per model call, written to the usage rows by commitTurn (UsageRepo reads them). Not
   * kept on the run: RunRepo reads a run back with `calls: []`.
   */
  calls: ModelCallUsage[];
  /**
   * The session the usage rows count against, when not `sessionKey`: a helper's calls count
   * against the session that spawned it (its root). Not kept on the run.
   */
  billedSessionKey?: string;
}

/** Run records, read back (commitTurn writes them), `calls` empty (see RunRecord.calls). */
export interface RunRepo {
  get(runId: string): Promise<RunRecord | undefined>;
  /** The `limit` runs that started last, latest `startedAt` first. */
  recent(limit: number): Promise<RunRecord[]>;
  /** The `limit` runs of one session key that started last, latest first. */
  recentOf(sessionKey: string, limit: number): Promise<RunRecord[]>;
  countByOutcome(): Promise<Record<RunOutcome, number>>;
}
