/** Sub-agents in SQLite (see SubagentRepo): limit checks and writes each in one immediate transaction. */
import type { Database } from "better-sqlite3";
import type { SessionFence } from "../repos/lease-repo.js";
import type {
  SpawnOutcome,
  Subagent,
  SubagentEnd,
  SubagentRepo,
  SubagentEndCheck,
  SubagentSpawn,
  SpawnLimits,
} from "../repos/subagent-repo.js";
import { SILENT_DELIVERY } from "../reasons.js";
import { type SubagentRow, spawnedChild, toSubagent } from "../rows/subagent-row.js";
import { guard } from "./errors.js";
import type { SqliteLeaseRepo } from "./lease-repo.js";
import { type StatementCache, statementCache } from "./statements.js";
import type { SqliteTranscriptRepo } from "./transcript-repo.js";

const SILENT = SILENT_DELIVERY;

/** Ended children whose result no committed run of their parent received. */
const UNDELIVERED = `state IN ('done', 'failed', 'cancelled') AND coalesce(delivered_run_id, '') <> '${SILENT}'
  AND (delivered_run_id IS NULL OR NOT EXISTS (SELECT 1 FROM runs WHERE runs.run_id = subagents.delivered_run_id))`;

/** The SubagentRepo on one SQLite database. */
export class SqliteSubagentRepo implements SubagentRepo {
  readonly #db: Database;
  readonly #sql: StatementCache;
  readonly #path: string;
  readonly #transcript: SqliteTranscriptRepo;
  readonly #leases: SqliteLeaseRepo;

  constructor(db: Database, path: string, transcript: SqliteTranscriptRepo, leases: SqliteLeaseRepo) {
    this.#db = db;
    this.#sql = statementCache(db);
    this.#path = path;
    this.#transcript = transcript;
    this.#leases = leases;
  }

  async spawn(s: SubagentSpawn, limits: SpawnLimits, now: number): Promise<SpawnOutcome> {
    return guard(this.#path, () =>
      this.#db
        .transaction((): SpawnOutcome => {
          // One read for both limits and the next number.
          const c = this.#sql<[string, string, string], { active: number; in_run: number; seq: number }>(
            `SELECT
               (SELECT count(*) FROM subagents WHERE parent_session_key = ? AND state IN ('queued', 'running')) AS active,
               (SELECT count(*) FROM subagents WHERE parent_run_id = ?) AS in_run,
               (SELECT coalesce(max(seq), 0) FROM subagents WHERE parent_session_key = ?) AS seq`,
          ).get(s.parentSessionKey, s.parentRunId, s.parentSessionKey) ?? { active: 0, in_run: 0, seq: 0 };
          if (c.active >= limits.maxActive)
            return { status: "too_many_active", active: c.active, limit: limits.maxActive };
          // Every child of the parent so far is numbered: seq counts them all.
          const spawned = limits.acrossRuns ? c.seq : c.in_run;
          if (spawned >= limits.maxPerRun)
            return { status: "too_many_in_run", spawned, limit: limits.maxPerRun };
          const seq = c.seq + 1;
          const child = spawnedChild(s, seq, now);
          this.#sql(
            `INSERT INTO subagents (id, parent_session_key, parent_run_id, child_session_key, seq, depth, label, task,
               context, tools, model, origin, state, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
          ).run(
            child.id,
            child.parentSessionKey,
            child.parentRunId,
            child.childSessionKey,
            seq,
            child.depth,
            child.label,
            child.task,
            child.context,
            JSON.stringify(child.tools),
            child.model,
            JSON.stringify(child.origin),
            now,
            now,
          );
          return { status: "spawned", child };
        })
        .immediate(),
    );
  }

  async get(id: string): Promise<Subagent | undefined> {
    return guard(this.#path, () => this.#get(id));
  }

  async byChildSession(childSessionKey: string): Promise<Subagent | undefined> {
    return guard(this.#path, () => {
      const row = this.#sql<[string], SubagentRow>("SELECT * FROM subagents WHERE child_session_key = ?").get(
        childSessionKey,
      );
      return row ? toSubagent(row) : undefined;
    });
  }

  async listForParent(parentSessionKey: string): Promise<Subagent[]> {
    return guard(this.#path, () =>
      this.#sql<[string], SubagentRow>("SELECT * FROM subagents WHERE parent_session_key = ? ORDER BY seq")
        .all(parentSessionKey)
        .map(toSubagent),
    );
  }

  async listActive(): Promise<Subagent[]> {
    return guard(this.#path, () =>
      this.#sql<[], SubagentRow>(
        "SELECT * FROM subagents WHERE state IN ('queued', 'running') ORDER BY created_at, id",
      )
        .all()
        .map(toSubagent),
    );
  }

  async parentsWithResults(): Promise<string[]> {
    return guard(this.#path, () =>
      this.#sql<[], { parent_session_key: string }>(
        `SELECT DISTINCT parent_session_key FROM subagents WHERE ${UNDELIVERED} ORDER BY parent_session_key`,
      )
        .all()
        .map((r) => r.parent_session_key),
    );
  }

  async start(id: string, runId: string, now: number): Promise<Subagent | undefined> {
    return guard(this.#path, () =>
      this.#db
        .transaction((): Subagent | undefined => {
          const before = this.#get(id);
          if (!before || (before.state !== "queued" && before.state !== "running")) return undefined;
          this.#sql("UPDATE subagents SET state = 'running', run_id = ?, updated_at = ? WHERE id = ?").run(
            runId,
            now,
            id,
          );
          return before;
        })
        .immediate(),
    );
  }

  async startFrom(seen: Subagent, runId: string, now: number): Promise<Subagent | undefined> {
    if (seen.state !== "queued" && seen.state !== "running") return undefined;
    // Compare-and-set on what the caller read: one statement, no read inside a write lock.
    const moved = await guard(
      this.#path,
      () =>
        this.#sql(
          `UPDATE subagents SET state = 'running', run_id = ?, updated_at = ?
           WHERE id = ? AND state = ? AND run_id IS ?`,
        ).run(runId, now, seen.id, seen.state, seen.runId).changes > 0,
    );
    return moved ? seen : this.start(seen.id, runId, now);
  }

  async endCheck(childSessionKey: string): Promise<SubagentEndCheck | undefined> {
    return guard(this.#path, () => {
      const r = this.#sql<
        [string],
        {
          parent: string;
          state: Subagent["state"];
          awaited: number;
          batch_active: number;
          awaited_active: number;
          open_children: number;
        }
      >(
        `SELECT c.parent_session_key AS parent, c.state, c.wait_deadline IS NOT NULL AS awaited,
           (SELECT count(*) FROM subagents s WHERE s.parent_run_id = c.parent_run_id
              AND s.state IN ('queued', 'running')) AS batch_active,
           (SELECT count(*) FROM subagents s WHERE s.parent_session_key = c.parent_session_key
              AND s.state IN ('queued', 'running') AND s.wait_deadline IS NOT NULL
              AND s.delivered_run_id IS NULL) AS awaited_active,
           (SELECT count(*) FROM subagents g WHERE g.parent_session_key = c.child_session_key
              AND g.state IN ('queued', 'running')) AS open_children
         FROM subagents c WHERE c.child_session_key = ?`,
      ).get(childSessionKey);
      if (!r || (r.state !== "done" && r.state !== "failed" && r.state !== "cancelled")) return undefined;
      return {
        parentSessionKey: r.parent,
        batchDone: r.batch_active === 0,
        waitDone: r.awaited === 1 && r.awaited_active === 0,
        openChildren: r.open_children,
      };
    });
  }

  /**
   * For commitTurn, inside its transaction: the child's end, when its run `runId` still owns it.
   * An answer (`done`) ends it only when none of its own children is active or has a result no
   * committed run of it received (this run's claims count as received: its run row is written
   * first): until then it stays running and their results come to it as its next turn.
   */
  finishInTransaction(end: SubagentEnd, runId: string, now: number): void {
    this.#sql(
      `UPDATE subagents SET state = @state, result = @result, result_path = @path, error = @error,
         ended_at = @now, updated_at = @now
       WHERE id = @id AND state = 'running' AND run_id = @runId
         AND (@state <> 'done' OR NOT EXISTS (
           SELECT 1 FROM subagents g WHERE g.parent_session_key = subagents.child_session_key
             AND (g.state IN ('queued', 'running') OR (coalesce(g.delivered_run_id, '') <> '${SILENT}'
               AND (g.delivered_run_id IS NULL
                 OR NOT EXISTS (SELECT 1 FROM runs WHERE runs.run_id = g.delivered_run_id))))))`,
    ).run({
      state: end.state,
      result: end.result,
      path: end.resultPath ?? null,
      error: end.error ?? null,
      now,
      id: end.id,
      runId,
    });
  }

  async cancel(id: string, error: string, now: number, options: { silent?: boolean } = {}): Promise<boolean> {
    return guard(
      this.#path,
      () =>
        this.#sql(
          `UPDATE subagents SET state = 'cancelled', error = ?, result = coalesce(result, ''), ended_at = ?,
             updated_at = ?, delivered_run_id = ?
           WHERE id = ? AND state IN ('queued', 'running')`,
        ).run(error, now, now, options.silent ? SILENT : null, id).changes > 0,
    );
  }

  async await(
    parentSessionKey: string,
    ids: readonly string[],
    deadline: number,
    now: number,
  ): Promise<void> {
    return guard(this.#path, () =>
      this.#db.transaction(() => {
        const set = this.#sql(
          "UPDATE subagents SET wait_deadline = ?, updated_at = ? WHERE id = ? AND parent_session_key = ?",
        );
        for (const id of ids) set.run(deadline, now, id, parentSessionKey);
      })(),
    );
  }

  async claimResults(
    parentSessionKey: string,
    sessionId: string,
    runId: string,
    lease: SessionFence,
    text: (child: Subagent) => string,
    now: number,
  ): Promise<Subagent[]> {
    return guard(this.#path, () => {
      // Most turns have nothing to claim: a read, without taking the write lock.
      const any = this.#sql<[string], { n: number }>(
        `SELECT 1 AS n FROM subagents WHERE parent_session_key = ? AND ${UNDELIVERED} LIMIT 1`,
      ).get(parentSessionKey);
      if (!any) return [];
      return this.#db
        .transaction((): Subagent[] => {
          if (!this.#leases.isCurrentInTransaction(parentSessionKey, lease)) return [];
          const ready = this.#sql<[string], SubagentRow>(
            `SELECT * FROM subagents WHERE parent_session_key = ? AND ${UNDELIVERED} ORDER BY ended_at, seq`,
          )
            .all(parentSessionKey)
            .map(toSubagent);
          if (ready.length === 0) return [];
          // A claim by a run that never committed appended its trigger already (same step).
          const fresh = ready.filter((c) => c.deliveredRunId === null);
          if (fresh.length > 0) {
            const events = fresh.map((c) => ({
              type: "trigger" as const,
              origin: "subagent" as const,
              text: text(c),
            }));
            this.#transcript.appendInTransaction(parentSessionKey, sessionId, runId, events, now);
          }
          const claim = this.#sql("UPDATE subagents SET delivered_run_id = ?, updated_at = ? WHERE id = ?");
          for (const c of ready) claim.run(runId, now, c.id);
          return ready.map((c) => ({ ...c, deliveredRunId: runId }));
        })
        .immediate();
    });
  }

  #get(id: string): Subagent | undefined {
    const row = this.#sql<[string], SubagentRow>("SELECT * FROM subagents WHERE id = ?").get(id);
    return row ? toSubagent(row) : undefined;
  }
}
