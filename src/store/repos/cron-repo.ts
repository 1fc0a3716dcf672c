/**
 * Scheduled jobs and their run ledger. A job is a prompt on a schedule (cron in a timezone, an
 * interval, or one moment) with where its answer goes. Every due run gets a ledger row before it
 * starts, keyed by (job, scheduled time): claiming a slot is one insert that only one process can
 * win, so a restart or a second gateway never runs a slot twice. The row then records the
 * outcome, attempts, duration, tokens, error and delivery receipt (`switchyard cron history`).
 */
import type { ChatTarget } from "../../channels/types.js";
import type { Schedule } from "../../cron/schedule.js";

/** Where a job was defined: the config file (read-only elsewhere), the CLI, or the agent's tool. */
export type JobSource = "config" | "cli" | "agent";

/** Where a job's answer goes: a chat, the chat that last addressed the agent, or nowhere. */
export type JobDelivery = { kind: "chat"; target: ChatTarget } | { kind: "last" } | { kind: "none" };

/** What a job is, as given when it is created or changed. */
export interface JobSpec {
  agentId: string;
  name: string;
  source: JobSource;
  schedule: Schedule;
  prompt: string;
  /** `main`: the delivery chat's own session (shares its context); `isolated`: a fresh session per run. */
  sessionMode: "main" | "isolated";
  deliver: JobDelivery;
  /** After downtime: run once for every missed slot (`one`), or skip them. */
  catchUp: "one" | "skip";
  timeoutMs: number;
  enabled: boolean;
}

/** A stored job. */
export interface CronJob extends JobSpec {
  id: number;
  /** The next slot (scheduled time) to run; null once a one-shot ran, or while disabled. */
  nextRunAt: number | null;
  /** Marked after the retries of a slot are exhausted; cleared by the next success. */
  failing: boolean;
  /** Why the job was disabled by the gateway (a delivery target gone), if it was. */
  disabledReason: string | null;
  consecutiveFailures: number;
  deliveryFailures: number;
  createdAt: number;
  updatedAt: number;
}

/** One slot's run in the ledger. */
export interface CronRun {
  id: number;
  jobId: number;
  /** The slot: when the run was due (not when it started). */
  scheduledFor: number;
  state: "running" | "retry" | "ok" | "failed" | "skipped" | "missed";
  attempts: number;
  /** For `retry`: when the next attempt is due. */
  retryAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  durationMs: number | null;
  tokens: number | null;
  error: string | null;
  /** The platform message id of the delivered answer, if one was delivered. */
  receipt: string | null;
  /** Why a run was skipped or missed, or what a catch-up covered. */
  note: string | null;
  /** The turn's run id (its run record), once started. */
  runId: string | null;
}

/** How one attempt ended, as `finish` records it. */
export interface AttemptEnd {
  state: "ok" | "failed" | "retry";
  durationMs: number;
  tokens?: number;
  error?: string;
  receipt?: string;
  /** For `retry`: when the next attempt is due. */
  retryAt?: number;
}

/** Jobs and the run ledger (see the file header). */
export interface CronRepo {
  /** Creates a job; throws StoreError "conflict" when its agent already has a job of that name. */
  add(spec: JobSpec, nextRunAt: number | null, now: number): Promise<CronJob>;
  /** Creates or replaces the config job of this name (keeping its history); returns it. */
  upsertConfig(spec: JobSpec, nextRunAt: number | null, now: number): Promise<CronJob>;
  get(id: number): Promise<CronJob | undefined>;
  byName(agentId: string, name: string): Promise<CronJob | undefined>;
  list(agentId?: string): Promise<CronJob[]>;
  /** Changes fields of a job; false when it does not exist. */
  update(id: number, patch: Partial<Omit<CronJob, "id" | "createdAt">>, now: number): Promise<boolean>;
  /** Deletes a job and its ledger; false when it does not exist. */
  remove(id: number): Promise<boolean>;
  /** Enabled jobs whose next slot is at or before `now`, earliest first. */
  due(now: number, limit: number): Promise<CronJob[]>;
  /** The earliest next slot or retry of any enabled job, or undefined. */
  nextWake(): Promise<number | undefined>;
  /** Bumped by every change to the jobs (any process): a scheduler reloads when it moves. */
  version(): Promise<number>;
  /**
   * Claims slot `scheduledFor` of a job: inserts its ledger row `running` (attempt 1) and moves
   * the job's next slot to `nextRunAt`, in one step. Undefined, and nothing written, when the
   * slot was claimed before (by this process or another).
   */
  claimSlot(
    jobId: number,
    scheduledFor: number,
    nextRunAt: number | null,
    now: number,
  ): Promise<CronRun | undefined>;
  /** Records a slot that is not run (`skipped` after downtime, `missed` by policy) and moves the job on. */
  recordSkipped(
    jobId: number,
    scheduledFor: number,
    state: "skipped" | "missed",
    note: string,
    nextRunAt: number | null,
    now: number,
  ): Promise<boolean>;
  /** Takes a `retry` row whose time came back to `running` (attempt + 1); false when another did. */
  claimRetry(runId: number, now: number): Promise<CronRun | undefined>;
  /** Ledger rows in `retry` whose retryAt is at or before `now`. */
  dueRetries(now: number, limit: number): Promise<CronRun[]>;
  /** Ledger rows left `running` that started before `before` (their process stopped). */
  staleRunning(before: number): Promise<CronRun[]>;
  /** Records the turn's run id on a running row. */
  started(runId: number, turnRunId: string): Promise<void>;
  /** Ends an attempt: ok, failed for good, or retry at `retryAt`. */
  finish(runId: number, outcome: AttemptEnd, now: number): Promise<void>;
  /** Records where a finished run's answer was delivered (the platform message id). */
  setReceipt(runId: number, receipt: string): Promise<void>;
  /** A job's ledger, newest slot first. */
  history(jobId: number, limit: number): Promise<CronRun[]>;
}
