/**
 * Scheduled jobs and their run ledger in SQLite (see CronRepo). Claiming a slot is an
 * `INSERT OR IGNORE` on the ledger's (job_id, scheduled_for) key plus the job's next slot, in
 * one immediate transaction: the one process whose insert lands runs it. Every change to a job
 * bumps `cron_version`, which a running scheduler watches to pick up CLI edits.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { AttemptEnd, CronJob, CronRepo, CronRun, JobSpec } from "../repos/cron-repo.js";
import { type JobRow, type RunRow, JOB_COLUMNS, stored, toJob, toRun } from "./cron-rows.js";
import { StoreError } from "../store-error.js";
import { guard } from "./errors.js";
import { type StatementCache, statementCache } from "./statements.js";

/** The CronRepo on one SQLite database. */
export class SqliteCronRepo implements CronRepo {
  readonly #db: Database;
  readonly #sql: StatementCache;
  readonly #path: string;
  readonly #insertJob: Statement<Record<string, unknown>>;
  readonly #byId: Statement<[number], JobRow>;
  readonly #byName: Statement<[string, string], JobRow>;
  readonly #bump: Statement<[]>;
  readonly #insertRun: Statement<Record<string, unknown>>;
  readonly #moveNext: Statement<[number | null, number, number]>;
  readonly #runById: Statement<[number], RunRow>;
  readonly #claimTx: Transaction<
    (jobId: number, slot: number, next: number | null, now: number) => CronRun | undefined
  >;
  readonly #skipTx: Transaction<
    (jobId: number, slot: number, state: string, note: string, next: number | null, now: number) => boolean
  >;

  constructor(db: Database, path: string) {
    this.#db = db;
    this.#sql = statementCache(db);
    this.#path = path;
    this.#insertJob = db.prepare(
      `INSERT INTO cron_jobs (agent_id, name, source, schedule, prompt, session_mode, deliver, catch_up,
         timeout_ms, enabled, next_run_at, created_at, updated_at)
       VALUES (@agent_id, @name, @source, @schedule, @prompt, @session_mode, @deliver, @catch_up,
         @timeout_ms, @enabled, @next_run_at, @now, @now)`,
    );
    this.#byId = db.prepare("SELECT * FROM cron_jobs WHERE id = ?");
    this.#byName = db.prepare("SELECT * FROM cron_jobs WHERE agent_id = ? AND name = ?");
    this.#bump = db.prepare("UPDATE cron_version SET version = version + 1 WHERE id = 1");
    this.#insertRun = db.prepare(
      `INSERT OR IGNORE INTO cron_runs (job_id, scheduled_for, state, attempts, started_at, note, finished_at)
       VALUES (@job_id, @scheduled_for, @state, @attempts, @started_at, @note, @finished_at)`,
    );
    this.#moveNext = db.prepare("UPDATE cron_jobs SET next_run_at = ?, updated_at = ? WHERE id = ?");
    this.#runById = db.prepare("SELECT * FROM cron_runs WHERE id = ?");
    this.#claimTx = db.transaction((jobId: number, slot: number, next: number | null, now: number) => {
      const r = this.#insertRun.run({
        job_id: jobId,
        scheduled_for: slot,
        state: "running",
        attempts: 1,
        started_at: now,
        note: null,
        finished_at: null,
      });
      if (r.changes === 0) return undefined;
      this.#moveNext.run(next, now, jobId);
      const row = this.#runById.get(Number(r.lastInsertRowid));
      return row ? toRun(row) : undefined;
    });
    this.#skipTx = db.transaction(
      (jobId: number, slot: number, state: string, note: string, next: number | null, now: number) => {
        const r = this.#insertRun.run({
          job_id: jobId,
          scheduled_for: slot,
          state,
          attempts: 0,
          started_at: null,
          note,
          finished_at: now,
        });
        if (r.changes === 0) return false;
        this.#moveNext.run(next, now, jobId);
        return true;
      },
    );
  }

  #write<T>(step: () => T): T {
    return guard(this.#path, () => this.#db.transaction(step).immediate());
  }

  async add(spec: JobSpec, nextRunAt: number | null, now: number): Promise<CronJob> {
    return this.#write(() => {
      if (this.#byName.get(spec.agentId, spec.name))
        throw new StoreError("conflict", `a job named "${spec.name}" already exists`);
      const r = this.#insertJob.run({ ...this.#specRow(spec), next_run_at: nextRunAt, now });
      this.#bump.run();
      return toJob(this.#byId.get(Number(r.lastInsertRowid)) as JobRow);
    });
  }

  async upsertConfig(spec: JobSpec, nextRunAt: number | null, now: number): Promise<CronJob> {
    return this.#write(() => {
      const existing = this.#byName.get(spec.agentId, spec.name);
      if (!existing) {
        const r = this.#insertJob.run({ ...this.#specRow(spec), next_run_at: nextRunAt, now });
        this.#bump.run();
        return toJob(this.#byId.get(Number(r.lastInsertRowid)) as JobRow);
      }
      const current = toJob(existing);
      const same =
        JSON.stringify([
          current.schedule,
          current.prompt,
          current.sessionMode,
          current.deliver,
          current.catchUp,
          current.timeoutMs,
          current.enabled,
          current.source,
        ]) ===
        JSON.stringify([
          spec.schedule,
          spec.prompt,
          spec.sessionMode,
          spec.deliver,
          spec.catchUp,
          spec.timeoutMs,
          spec.enabled,
          spec.source,
        ]);
      if (same) return current; // unchanged: its next slot (and any missed ones) stand
      this.#update(existing.id, { ...spec, nextRunAt }, now);
      return toJob(this.#byId.get(existing.id) as JobRow);
    });
  }

  #specRow(spec: JobSpec): Record<string, unknown> {
    return {
      agent_id: spec.agentId,
      name: spec.name,
      source: spec.source,
      schedule: JSON.stringify(spec.schedule),
      prompt: spec.prompt,
      session_mode: spec.sessionMode,
      deliver: JSON.stringify(spec.deliver),
      catch_up: spec.catchUp,
      timeout_ms: spec.timeoutMs,
      enabled: spec.enabled ? 1 : 0,
    };
  }

  async get(id: number): Promise<CronJob | undefined> {
    const row = guard(this.#path, () => this.#byId.get(id));
    return row ? toJob(row) : undefined;
  }

  async byName(agentId: string, name: string): Promise<CronJob | undefined> {
    const row = guard(this.#path, () => this.#byName.get(agentId, name));
    return row ? toJob(row) : undefined;
  }

  async list(agentId?: string): Promise<CronJob[]> {
    return guard(this.#path, () =>
      (agentId === undefined
        ? this.#sql<[], JobRow>("SELECT * FROM cron_jobs ORDER BY id").all()
        : this.#sql<[string], JobRow>("SELECT * FROM cron_jobs WHERE agent_id = ? ORDER BY id").all(agentId)
      ).map(toJob),
    );
  }

  async update(id: number, patch: Partial<Omit<CronJob, "id" | "createdAt">>, now: number): Promise<boolean> {
    return this.#write(() => this.#update(id, patch, now));
  }

  #update(id: number, patch: Partial<Omit<CronJob, "id" | "createdAt">>, now: number): boolean {
    const sets: string[] = [];
    const values: unknown[] = [];
    for (const [key, value] of Object.entries({ ...patch, updatedAt: now })) {
      const column = JOB_COLUMNS[key];
      if (!column || value === undefined) continue;
      sets.push(`${column} = ?`);
      values.push(stored(value));
    }
    const r = this.#sql(`UPDATE cron_jobs SET ${sets.join(", ")} WHERE id = ?`).run(...values, id);
    if (r.changes > 0) this.#bump.run();
    return r.changes > 0;
  }

  async remove(id: number): Promise<boolean> {
    return this.#write(() => {
      const r = this.#sql("DELETE FROM cron_jobs WHERE id = ?").run(id);
      if (r.changes > 0) this.#bump.run();
      return r.changes > 0;
    });
  }

  async due(now: number, limit: number): Promise<CronJob[]> {
    return guard(this.#path, () =>
      this.#sql<[number, number], JobRow>(
        "SELECT * FROM cron_jobs WHERE enabled = 1 AND next_run_at <= ? ORDER BY next_run_at, id LIMIT ?",
      )
        .all(now, limit)
        .map(toJob),
    );
  }

  async nextWake(): Promise<number | undefined> {
    return guard(this.#path, () => {
      const row = this.#sql<[], { at: number | null }>(
        `SELECT MIN(at) AS at FROM (
             SELECT MIN(next_run_at) AS at FROM cron_jobs WHERE enabled = 1
             UNION ALL SELECT MIN(retry_at) FROM cron_runs WHERE state = 'retry')`,
      ).get();
      return row?.at ?? undefined;
    });
  }

  async version(): Promise<number> {
    return guard(this.#path, () =>
      Number(
        this.#sql<[], { version: number }>("SELECT version FROM cron_version WHERE id = 1").get()?.version ??
          0,
      ),
    );
  }

  async claimSlot(
    jobId: number,
    scheduledFor: number,
    nextRunAt: number | null,
    now: number,
  ): Promise<CronRun | undefined> {
    return guard(this.#path, () => this.#claimTx.immediate(jobId, scheduledFor, nextRunAt, now));
  }

  async recordSkipped(
    jobId: number,
    scheduledFor: number,
    state: "skipped" | "missed",
    note: string,
    nextRunAt: number | null,
    now: number,
  ): Promise<boolean> {
    return guard(this.#path, () => this.#skipTx.immediate(jobId, scheduledFor, state, note, nextRunAt, now));
  }

  async claimRetry(runId: number, now: number): Promise<CronRun | undefined> {
    return this.#write(() => {
      const r = this.#sql(
        "UPDATE cron_runs SET state = 'running', attempts = attempts + 1, retry_at = NULL, started_at = ? WHERE id = ? AND state = 'retry'",
      ).run(now, runId);
      if (r.changes === 0) return undefined;
      const row = this.#runById.get(runId);
      return row ? toRun(row) : undefined;
    });
  }

  async dueRetries(now: number, limit: number): Promise<CronRun[]> {
    return guard(this.#path, () =>
      this.#sql<[number, number], RunRow>(
        "SELECT * FROM cron_runs WHERE state = 'retry' AND retry_at <= ? ORDER BY retry_at, id LIMIT ?",
      )
        .all(now, limit)
        .map(toRun),
    );
  }

  async staleRunning(before: number): Promise<CronRun[]> {
    return guard(this.#path, () =>
      this.#sql<[number], RunRow>(
        "SELECT * FROM cron_runs WHERE state = 'running' AND started_at < ? ORDER BY id",
      )
        .all(before)
        .map(toRun),
    );
  }

  async started(runId: number, turnRunId: string): Promise<void> {
    guard(this.#path, () => this.#sql("UPDATE cron_runs SET run_id = ? WHERE id = ?").run(turnRunId, runId));
  }

  async finish(runId: number, o: AttemptEnd, now: number): Promise<void> {
    guard(this.#path, () =>
      this.#sql(
        `UPDATE cron_runs SET state = ?, duration_ms = ?, tokens = ?, error = ?, receipt = ?, retry_at = ?,
             finished_at = ? WHERE id = ?`,
      ).run(
        o.state,
        o.durationMs,
        o.tokens ?? null,
        o.error ?? null,
        o.receipt ?? null,
        o.retryAt ?? null,
        now,
        runId,
      ),
    );
  }

  async setReceipt(runId: number, receipt: string): Promise<void> {
    guard(this.#path, () => this.#sql("UPDATE cron_runs SET receipt = ? WHERE id = ?").run(receipt, runId));
  }

  async history(jobId: number, limit: number): Promise<CronRun[]> {
    return guard(this.#path, () =>
      this.#sql<[number, number], RunRow>(
        "SELECT * FROM cron_runs WHERE job_id = ? ORDER BY scheduled_for DESC, id DESC LIMIT ?",
      )
        .all(jobId, limit)
        .map(toRun),
    );
  }
}
