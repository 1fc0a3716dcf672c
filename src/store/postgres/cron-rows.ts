/**
 * The PostgreSQL cron tables' rows and their mapping to CronJob and CronRun (cron-repo.ts): as
 * SQLite's (sqlite/cron-rows.ts) but with BOOLEAN flags.
 */
import type { CronJob, CronRun, JobSpec } from "../repos/cron-repo.js";

/** A cron_jobs row. */
export interface JobRow {
  id: number;
  agent_id: string;
  name: string;
  source: JobSpec["source"];
  schedule: string;
  prompt: string;
  session_mode: JobSpec["sessionMode"];
  deliver: string;
  catch_up: JobSpec["catchUp"];
  timeout_ms: number;
  enabled: boolean;
  next_run_at: number | null;
  failing: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  delivery_failures: number;
  created_at: number;
  updated_at: number;
}

/** A cron_runs row. */
export interface RunRow {
  id: number;
  job_id: number;
  scheduled_for: number;
  state: CronRun["state"];
  attempts: number;
  retry_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  duration_ms: number | null;
  tokens: number | null;
  error: string | null;
  receipt: string | null;
  note: string | null;
  run_id: string | null;
}

/** The cron_jobs column of each CronJob field `update` may change. */
export const JOB_COLUMNS: Readonly<Record<string, string>> = {
  agentId: "agent_id",
  name: "name",
  source: "source",
  schedule: "schedule",
  prompt: "prompt",
  sessionMode: "session_mode",
  deliver: "deliver",
  catchUp: "catch_up",
  timeoutMs: "timeout_ms",
  enabled: "enabled",
  nextRunAt: "next_run_at",
  failing: "failing",
  disabledReason: "disabled_reason",
  consecutiveFailures: "consecutive_failures",
  deliveryFailures: "delivery_failures",
  updatedAt: "updated_at",
};

/** The job a cron_jobs row holds. */
export function toJob(r: JobRow): CronJob {
  return {
    id: r.id,
    agentId: r.agent_id,
    name: r.name,
    source: r.source,
    schedule: JSON.parse(r.schedule) as CronJob["schedule"],
    prompt: r.prompt,
    sessionMode: r.session_mode,
    deliver: JSON.parse(r.deliver) as CronJob["deliver"],
    catchUp: r.catch_up,
    timeoutMs: r.timeout_ms,
    enabled: r.enabled,
    nextRunAt: r.next_run_at,
    failing: r.failing,
    disabledReason: r.disabled_reason,
    consecutiveFailures: r.consecutive_failures,
    deliveryFailures: r.delivery_failures,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The ledger entry a cron_runs row holds. */
export function toRun(r: RunRow): CronRun {
  return {
    id: r.id,
    jobId: r.job_id,
    scheduledFor: r.scheduled_for,
    state: r.state,
    attempts: r.attempts,
    retryAt: r.retry_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms,
    tokens: r.tokens,
    error: r.error,
    receipt: r.receipt,
    note: r.note,
    runId: r.run_id,
  };
}

/** The columns of a job's spec, as stored (JSON text for the schedule and the delivery). */
export function specColumns(spec: JobSpec): readonly unknown[] {
  return [
    spec.agentId,
    spec.name,
    spec.source,
    JSON.stringify(spec.schedule),
    spec.prompt,
    spec.sessionMode,
    JSON.stringify(spec.deliver),
    spec.catchUp,
    spec.timeoutMs,
    spec.enabled,
  ];
}

/** A column value as stored (JSON text for objects; booleans stay booleans). */
export function stored(value: unknown): unknown {
  if (typeof value === "object" && value !== null) return JSON.stringify(value);
  return value;
}
