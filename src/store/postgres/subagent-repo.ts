/**
 * Sub-agents on PostgreSQL (see SubagentRepo), ported from SqliteSubagentRepo: a spawn's limit
 * checks and insert, a start's read and write, and a claim (the parent's lease, the transcript
 * events, the claim itself) are each one transaction, as SQLite's immediate ones were.
 */
import { SILENT_DELIVERY } from "../reasons.js";
import type { SessionFence } from "../repos/lease-repo.js";
import type {
  SpawnLimits,
  SpawnOutcome,
  Subagent,
  SubagentEnd,
  SubagentEndCheck,
  SubagentRepo,
  SubagentSpawn,
} from "../repos/subagent-repo.js";
import type { PgLeaseRepo } from "./lease-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import { spawnedChild } from "../rows/subagent-row.js";
import { SILENT, type SubagentRow, UNDELIVERED, toSubagent } from "./subagent-rows.js";
import type { PgTranscriptRepo } from "./transcript-repo.js";

/** Owns the subagents table of one PostgreSQL store. */
export class PgSubagentRepo implements SubagentRepo {
  readonly #db: PgDb;
  readonly #transcript: PgTranscriptRepo;
  readonly #leases: PgLeaseRepo;

  /** `transcript` and `leases`: a claim appends its events and checks the parent's lease in its transaction. */
  constructor(db: PgDb, transcript: PgTranscriptRepo, leases: PgLeaseRepo) {
    this.#db = db;
    this.#transcript = transcript;
    this.#leases = leases;
  }

  async spawn(s: SubagentSpawn, limits: SpawnLimits, now: number): Promise<SpawnOutcome> {
    return this.#db.tx(async (tx): Promise<SpawnOutcome> => {
      // One read for both limits and the next number.
      const c = (await tx.row<{ active: number; in_run: number; seq: number }>(
        `SELECT
           (SELECT count(*) FROM subagents WHERE parent_session_key = $1 AND state IN ('queued', 'running')) AS active,
           (SELECT count(*) FROM subagents WHERE parent_run_id = $2) AS in_run,
           (SELECT coalesce(max(seq), 0) FROM subagents WHERE parent_session_key = $1) AS seq`,
        [s.parentSessionKey, s.parentRunId],
      )) ?? { active: 0, in_run: 0, seq: 0 };
      if (c.active >= limits.maxActive)
        return { status: "too_many_active", active: c.active, limit: limits.maxActive };
      // Every child of the parent so far is numbered: seq counts them all.
      const spawned = limits.acrossRuns ? c.seq : c.in_run;
      if (spawned >= limits.maxPerRun) return { status: "too_many_in_run", spawned, limit: limits.maxPerRun };
      const seq = c.seq + 1;
      const child = spawnedChild(s, seq, now);
      await tx.run(
        `INSERT INTO subagents (id, parent_session_key, parent_run_id, child_session_key, seq, depth, label, task,
           context, tools, model, origin, state, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'queued', $13, $13)`,
        [
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
        ],
      );
      return { status: "spawned", child };
    });
  }

  async get(id: string): Promise<Subagent | undefined> {
    return this.#get(this.#db, id);
  }

  async byChildSession(childSessionKey: string): Promise<Subagent | undefined> {
    const row = await this.#db.row<SubagentRow>("SELECT * FROM subagents WHERE child_session_key = $1", [
      childSessionKey,
    ]);
    return row ? toSubagent(row) : undefined;
  }

  async listForParent(parentSessionKey: string): Promise<Subagent[]> {
    const rows = await this.#db.rows<SubagentRow>(
      "SELECT * FROM subagents WHERE parent_session_key = $1 ORDER BY seq",
      [parentSessionKey],
    );
    return rows.map(toSubagent);
  }

  async listActive(): Promise<Subagent[]> {
    const rows = await this.#db.rows<SubagentRow>(
      "SELECT * FROM subagents WHERE state IN ('queued', 'running') ORDER BY created_at, id",
    );
    return rows.map(toSubagent);
  }

  async parentsWithResults(): Promise<string[]> {
    const rows = await this.#db.rows<{ parent_session_key: string }>(
      `SELECT DISTINCT parent_session_key FROM subagents WHERE ${UNDELIVERED} ORDER BY parent_session_key`,
    );
    return rows.map((r) => r.parent_session_key);
  }

  async start(id: string, runId: string, now: number): Promise<Subagent | undefined> {
    return this.#db.tx(async (tx): Promise<Subagent | undefined> => {
      const before = await this.#get(tx, id);
      if (!before || (before.state !== "queued" && before.state !== "running")) return undefined;
      await tx.run("UPDATE subagents SET state = 'running', run_id = $1, updated_at = $2 WHERE id = $3", [
        runId,
        now,
        id,
      ]);
      return before;
    });
  }

  async startFrom(seen: Subagent, runId: string, now: number): Promise<Subagent | undefined> {
    if (seen.state !== "queued" && seen.state !== "running") return undefined;
    // Compare-and-set on what the caller read: one statement, no transaction.
    const moved = await this.#db.run(
      `UPDATE subagents SET state = 'running', run_id = $1, updated_at = $2
       WHERE id = $3 AND state = $4 AND run_id IS NOT DISTINCT FROM $5`,
      [runId, now, seen.id, seen.state, seen.runId],
    );
    return moved > 0 ? seen : this.start(seen.id, runId, now);
  }

  async endCheck(childSessionKey: string): Promise<SubagentEndCheck | undefined> {
    const r = await this.#db.row<{
      parent: string;
      state: Subagent["state"];
      awaited: boolean;
      batch_active: number;
      awaited_active: number;
      open_children: number;
    }>(
      `SELECT c.parent_session_key AS parent, c.state, c.wait_deadline IS NOT NULL AS awaited,
         (SELECT count(*) FROM subagents s WHERE s.parent_run_id = c.parent_run_id
            AND s.state IN ('queued', 'running')) AS batch_active,
         (SELECT count(*) FROM subagents s WHERE s.parent_session_key = c.parent_session_key
            AND s.state IN ('queued', 'running') AND s.wait_deadline IS NOT NULL
            AND s.delivered_run_id IS NULL) AS awaited_active,
         (SELECT count(*) FROM subagents g WHERE g.parent_session_key = c.child_session_key
            AND g.state IN ('queued', 'running')) AS open_children
       FROM subagents c WHERE c.child_session_key = $1`,
      [childSessionKey],
    );
    if (!r || (r.state !== "done" && r.state !== "failed" && r.state !== "cancelled")) return undefined;
    return {
      parentSessionKey: r.parent,
      batchDone: r.batch_active === 0,
      waitDone: r.awaited && r.awaited_active === 0,
      openChildren: r.open_children,
    };
  }

  /**
   * For commitTurn, inside its transaction: the child's end, when its run `runId` still owns it.
   * An answer (`done`) ends it only when none of its own children is active or has a result no
   * committed run of it received (this run's claims count as received: its run row is written
   * first). See SqliteSubagentRepo.finishInTransaction.
   */
  async finishIn(tx: PgRunner, end: SubagentEnd, runId: string, now: number): Promise<void> {
    await tx.run(
      `UPDATE subagents SET state = $1, result = $2, result_path = $3, error = $4,
         ended_at = $5, updated_at = $5
       WHERE id = $6 AND state = 'running' AND run_id = $7
         AND ($1 <> 'done' OR NOT EXISTS (
           SELECT 1 FROM subagents g WHERE g.parent_session_key = subagents.child_session_key
             AND (g.state IN ('queued', 'running') OR (coalesce(g.delivered_run_id, '') <> ${SILENT}
               AND (g.delivered_run_id IS NULL
                 OR NOT EXISTS (SELECT 1 FROM runs WHERE runs.run_id = g.delivered_run_id))))))`,
      [end.state, end.result, end.resultPath ?? null, end.error ?? null, now, end.id, runId],
    );
  }

  async cancel(id: string, error: string, now: number, options: { silent?: boolean } = {}): Promise<boolean> {
    const changed = await this.#db.run(
      `UPDATE subagents SET state = 'cancelled', error = $1, result = coalesce(result, ''), ended_at = $2,
         updated_at = $2, delivered_run_id = $3
       WHERE id = $4 AND state IN ('queued', 'running')`,
      [error, now, options.silent ? SILENT_DELIVERY : null, id],
    );
    return changed > 0;
  }

  async await(
    parentSessionKey: string,
    ids: readonly string[],
    deadline: number,
    now: number,
  ): Promise<void> {
    // One statement: every named child of the parent, atomically.
    await this.#db.run(
      "UPDATE subagents SET wait_deadline = $1, updated_at = $2 WHERE id = ANY($3::text[]) AND parent_session_key = $4",
      [deadline, now, ids, parentSessionKey],
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
    // Most turns have nothing to claim: a read, outside a transaction.
    const any = await this.#db.row<{ n: number }>(
      `SELECT 1 AS n FROM subagents WHERE parent_session_key = $1 AND ${UNDELIVERED} LIMIT 1`,
      [parentSessionKey],
    );
    if (!any) return [];
    return this.#db.tx(async (tx): Promise<Subagent[]> => {
      if (!(await this.#leases.isCurrentIn(tx, parentSessionKey, lease))) return [];
      const ready = (
        await tx.rows<SubagentRow>(
          `SELECT * FROM subagents WHERE parent_session_key = $1 AND ${UNDELIVERED} ORDER BY ended_at, seq`,
          [parentSessionKey],
        )
      ).map(toSubagent);
      if (ready.length === 0) return [];
      // A claim by a run that never committed appended its trigger already (same step).
      const fresh = ready.filter((c) => c.deliveredRunId === null);
      if (fresh.length > 0) {
        const events = fresh.map((c) => ({
          type: "trigger" as const,
          origin: "subagent" as const,
          text: text(c),
        }));
        await this.#transcript.appendIn(tx, parentSessionKey, sessionId, runId, events, now);
      }
      await tx.run("UPDATE subagents SET delivered_run_id = $1, updated_at = $2 WHERE id = ANY($3::text[])", [
        runId,
        now,
        ready.map((c) => c.id),
      ]);
      return ready.map((c) => ({ ...c, deliveredRunId: runId }));
    });
  }

  async #get(db: PgRunner, id: string): Promise<Subagent | undefined> {
    const row = await db.row<SubagentRow>("SELECT * FROM subagents WHERE id = $1", [id]);
    return row ? toSubagent(row) : undefined;
  }
}
