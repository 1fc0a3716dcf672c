/**
 * Scheduled jobs and their run ledger on PostgreSQL (see CronRepo). Claiming a slot is an
 * `INSERT … ON CONFLICT DO NOTHING` on the ledger's (job_id, scheduled_for) key plus the job's
 * next slot, in one transaction: of every node sharing the database, the one whose insert lands
 * runs it (a concurrent claimer's transaction fails to serialize, is run again, and then finds
 * the row). Every change to a job bumps `cron_version`, which a running scheduler watches to pick
 * up CLI edits.
 */
import type { AttemptEnd, CronJob, CronRepo, CronRun, JobSpec } from "../repos/cron-repo.js";
import { StoreError } from "../store-error.js";
import { type JobRow, type RunRow, JOB_COLUMNS, specColumns, stored, toJob, toRun } from "./cron-rows.js";
import type { PgDb, PgRunner } from "./pg-db.js";

const INSERT_JOB = `INSERT INTO cron_jobs (agent_id, name, source, schedule, prompt, session_mode, deliver,
    catch_up, timeout_ms, enabled, next_run_at, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING *`;
const BY_NAME = "SELECT * FROM cron_jobs WHERE agent_id = $1 AND name = $2";
const BUMP = "UPDATE cron_version SET version = version + 1 WHERE id = 1";
const INSERT_RUN = `INSERT INTO cron_runs (job_id, scheduled_for, state, attempts, started_at, note, finished_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (job_id, scheduled_for) DO NOTHING RETURNING *`;
const MOVE_NEXT = "UPDATE cron_jobs SET next_run_at = $1, updated_at = $2 WHERE id = $3";

/** The CronRepo on PostgreSQL: owns the cron_jobs, cron_runs and cron_version tables. */
export class PgCronRepo implements CronRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  /** The pool this repository runs on. */
  get db(): PgDb {
    return this.#db;
  }

  async add(spec: JobSpec, nextRunAt: number | null, now: number): Promise<CronJob> {
    return this.#db.tx(async (tx) => {
      if (await tx.row(BY_NAME, [spec.agentId, spec.name]))
        throw new StoreError("conflict", `a job named "${spec.name}" already exists`);
      return this.#insertJob(tx, spec, nextRunAt, now);
    });
  }

  async upsertConfig(spec: JobSpec, nextRunAt: number | null, now: number): Promise<CronJob> {
    return this.#db.tx(async (tx) => {
      const existing = await tx.row<JobRow>(BY_NAME, [spec.agentId, spec.name]);
      if (!existing) return this.#insertJob(tx, spec, nextRunAt, now);
      const current = toJob(existing);
      if (sameSpec(current, spec)) return current; // unchanged: its next slot (and any missed ones) stand
      await updateIn(tx, existing.id, { ...spec, nextRunAt }, now);
      return toJob((await tx.row<JobRow>("SELECT * FROM cron_jobs WHERE id = $1", [existing.id])) as JobRow);
    });
  }

  async #insertJob(tx: PgRunner, spec: JobSpec, nextRunAt: number | null, now: number): Promise<CronJob> {
    const row = await tx.row<JobRow>(INSERT_JOB, [...specColumns(spec), nextRunAt, now]);
    await tx.run(BUMP);
    return toJob(row as JobRow);
  }

  async get(id: number): Promise<CronJob | undefined> {
    const row = await this.#db.row<JobRow>("SELECT * FROM cron_jobs WHERE id = $1", [id]);
    return row ? toJob(row) : undefined;
  }

  async byName(agentId: string, name: string): Promise<CronJob | undefined> {
    const row = await this.#db.row<JobRow>(BY_NAME, [agentId, name]);
    return row ? toJob(row) : undefined;
  }

  async list(agentId?: string): Promise<CronJob[]> {
    const rows =
      agentId === undefined
        ? await this.#db.rows<JobRow>("SELECT * FROM cron_jobs ORDER BY id")
        : await this.#db.rows<JobRow>("SELECT * FROM cron_jobs WHERE agent_id = $1 ORDER BY id", [agentId]);
    return rows.map(toJob);
  }

  async update(id: number, patch: Partial<Omit<CronJob, "id" | "createdAt">>, now: number): Promise<boolean> {
    return this.#db.tx((tx) => updateIn(tx, id, patch, now));
  }

  async remove(id: number): Promise<boolean> {
    return this.#db.tx(async (tx) => {
      // The ledger goes with it (ON DELETE CASCADE).
      const removed = (await tx.run("DELETE FROM cron_jobs WHERE id = $1", [id])) > 0;
      if (removed) await tx.run(BUMP);
      return removed;
    });
  }

  async due(now: number, limit: number): Promise<CronJob[]> {
    const rows = await this.#db.rows<JobRow>(
      "SELECT * FROM cron_jobs WHERE enabled AND next_run_at <= $1 ORDER BY next_run_at, id LIMIT $2",
      [now, limit],
    );
    return rows.map(toJob);
  }

  async nextWake(): Promise<number | undefined> {
    const row = await this.#db.row<{ at: number | null }>(
      `SELECT MIN(at) AS at FROM (
         SELECT MIN(next_run_at) AS at FROM cron_jobs WHERE enabled
         UNION ALL SELECT MIN(retry_at) FROM cron_runs WHERE state = 'retry') AS wakes`,
    );
    return row?.at ?? undefined;
  }

  async version(): Promise<number> {
    const row = await this.#db.row<{ version: number }>("SELECT version FROM cron_version WHERE id = 1");
    return row?.version ?? 0;
  }

  async claimSlot(
    jobId: number,
    scheduledFor: number,
    nextRunAt: number | null,
    now: number,
  ): Promise<CronRun | undefined> {
    return this.#db.tx(async (tx) => {
      const row = await tx.row<RunRow>(INSERT_RUN, [jobId, scheduledFor, "running", 1, now, null, null]);
      if (!row) return undefined;
      await tx.run(MOVE_NEXT, [nextRunAt, now, jobId]);
      return toRun(row);
    });
  }

  async recordSkipped(
    jobId: number,
    scheduledFor: number,
    state: "skipped" | "missed",
    note: string,
    nextRunAt: number | null,
    now: number,
  ): Promise<boolean> {
    return this.#db.tx(async (tx) => {
      const row = await tx.row<RunRow>(INSERT_RUN, [jobId, scheduledFor, state, 0, null, note, now]);
      if (!row) return false;
      await tx.run(MOVE_NEXT, [nextRunAt, now, jobId]);
      return true;
    });
  }

  async claimRetry(runId: number, now: number): Promise<CronRun | undefined> {
    // One conditional update: a second node's waits for this one and then finds no `retry` row.
    const row = await this.#db.row<RunRow>(
      `UPDATE cron_runs SET state = 'running', attempts = attempts + 1, retry_at = NULL, started_at = $1
       WHERE id = $2 AND state = 'retry' RETURNING *`,
      [now, runId],
    );
    return row ? toRun(row) : undefined;
  }

  async dueRetries(now: number, limit: number): Promise<CronRun[]> {
    const rows = await this.#db.rows<RunRow>(
      "SELECT * FROM cron_runs WHERE state = 'retry' AND retry_at <= $1 ORDER BY retry_at, id LIMIT $2",
      [now, limit],
    );
    return rows.map(toRun);
  }

  async staleRunning(before: number): Promise<CronRun[]> {
    const rows = await this.#db.rows<RunRow>(
      "SELECT * FROM cron_runs WHERE state = 'running' AND started_at < $1 ORDER BY id",
      [before],
    );
    return rows.map(toRun);
  }

  async started(runId: number, turnRunId: string): Promise<void> {
    await this.#db.run("UPDATE cron_runs SET run_id = $1 WHERE id = $2", [turnRunId, runId]);
  }

  async finish(runId: number, o: AttemptEnd, now: number): Promise<void> {
    await this.#db.run(
      `UPDATE cron_runs SET state = $1, duration_ms = $2, tokens = $3, error = $4, receipt = $5, retry_at = $6,
         finished_at = $7 WHERE id = $8`,
      [
        o.state,
        o.durationMs,
        o.tokens ?? null,
        o.error ?? null,
        o.receipt ?? null,
        o.retryAt ?? null,
        now,
        runId,
      ],
    );
  }

  async setReceipt(runId: number, receipt: string): Promise<void> {
    await this.#db.run("UPDATE cron_runs SET receipt = $1 WHERE id = $2", [receipt, runId]);
  }

  async history(jobId: number, limit: number): Promise<CronRun[]> {
    const rows = await this.#db.rows<RunRow>(
      "SELECT * FROM cron_runs WHERE job_id = $1 ORDER BY scheduled_for DESC, id DESC LIMIT $2",
      [jobId, limit],
    );
    return rows.map(toRun);
  }
}

/** Changes the patch's fields of job `id` (and bumps the version) inside `tx`; false: no such job. */
async function updateIn(
  tx: PgRunner,
  id: number,
  patch: Partial<Omit<CronJob, "id" | "createdAt">>,
  now: number,
): Promise<boolean> {
  const sets: string[] = [];
  const values: unknown[] = [];
  for (const [key, value] of Object.entries({ ...patch, updatedAt: now })) {
    const column = JOB_COLUMNS[key];
    if (!column || value === undefined) continue;
    values.push(stored(value));
    sets.push(`${column} = $${values.length}`);
  }
  values.push(id);
  const changed = await tx.run(
    `UPDATE cron_jobs SET ${sets.join(", ")} WHERE id = $${values.length}`,
    values,
  );
  if (changed > 0) await tx.run(BUMP);
  return changed > 0;
}

/** Whether a stored job already is what `spec` describes (its slot then stands). */
function sameSpec(current: CronJob, spec: JobSpec): boolean {
  const fields = (j: JobSpec) => [
    j.schedule,
    j.prompt,
    j.sessionMode,
    j.deliver,
    j.catchUp,
    j.timeoutMs,
    j.enabled,
    j.source,
  ];
  return JSON.stringify(fields(current)) === JSON.stringify(fields(spec));
}
