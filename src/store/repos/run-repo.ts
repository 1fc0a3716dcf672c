/** The runs' contract: one record per committed turn (its trigger, model, outcome and usage). */
import type { TokenUsage } from "../../harness/providers/types.js";

/** What started a run. */
export type RunTrigger = "user" | "cron" | "heartbeat" | "wake" | "subagent" | "recovery";
/** How a run ended. */
export type RunOutcome = "answered" | "failed" | "aborted" | "timeout";

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
}

/** Run records, read back (commitTurn writes them). */
export interface RunRepo {
  get(runId: string): Promise<RunRecord | undefined>;
  /** The `limit` runs that started last, latest `startedAt` first. */
  recent(limit: number): Promise<RunRecord[]>;
  countByOutcome(): Promise<Record<RunOutcome, number>>;
}
