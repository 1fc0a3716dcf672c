/**
 * Assignments, their run log and learnings on PostgreSQL (see AssignmentRepo, LearningRepo),
 * ported from the SQLite ones: a run's end (its log row, the state, the work and the next wake)
 * is one transaction, as SQLite's immediate one was; so is recording a learning.
 */
import type { ChatTarget } from "../../channels/types.js";
import type {
  Assignment,
  AssignmentRepo,
  AssignmentRun,
  AssignmentState,
  AssignmentWork,
  Learning,
  LearningRepo,
  LearningState,
  RunFinish,
} from "../repos/assignment-repo.js";
import {
  type AssignmentRow,
  type LearningRow,
  type RunRow,
  toAssignment,
  toLearning,
  toRun,
} from "./assignment-rows.js";
import type { PgDb, PgRunner } from "./pg-db.js";

/** The final states: `list({ open: true })` leaves them out. */
const FINAL: readonly AssignmentState[] = ["stalled", "done", "failed", "cancelled"];

/** Parameters of a statement built in parts: `add` keeps a value and returns its `$n`. */
function params(): { values: unknown[]; add(value: unknown): string } {
  const values: unknown[] = [];
  return {
    values,
    add(value) {
      values.push(value);
      return `$${values.length}`;
    },
  };
}

/** The `col = $n` parts that write `work`, their values kept in `p`. */
function workColumns(work: AssignmentWork, p: ReturnType<typeof params>): string[] {
  const sets: string[] = [];
  if (work.items) sets.push(`items = ${p.add(JSON.stringify(work.items))}`);
  if (work.checkpoint) sets.push(`checkpoint = ${p.add(JSON.stringify(work.checkpoint))}`);
  if (work.question !== undefined)
    sets.push(`question = ${p.add(work.question === null ? null : JSON.stringify(work.question))}`);
  return sets;
}

/** Owns the assignments and assignment_runs tables of one PostgreSQL store. */
export class PgAssignmentRepo implements AssignmentRepo {
  readonly #db: PgDb;

  /** A run's end writes its next wake into the `wakes` table itself, in the end's transaction (as SQLite does). */
  constructor(db: PgDb) {
    this.#db = db;
  }

  async create(a: Assignment): Promise<void> {
    await this.#db.run(
      `INSERT INTO assignments (id, agent_id, goal, owner, session_key, state, state_reason, limits, contract, items, checkpoint, question, created_at, updated_at, requested_by, private)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [
        a.id,
        a.agentId,
        a.goal,
        a.owner ? JSON.stringify(a.owner) : null,
        a.sessionKey,
        a.state,
        a.stateReason,
        JSON.stringify(a.limits),
        JSON.stringify(a.contract),
        JSON.stringify(a.items),
        JSON.stringify(a.checkpoint),
        a.question ? JSON.stringify(a.question) : null,
        a.createdAt,
        a.updatedAt,
        a.requestedBy,
        a.privateChat ? 1 : 0,
      ],
    );
  }

  async get(id: string): Promise<Assignment | undefined> {
    const row = await this.#db.row<AssignmentRow>("SELECT * FROM assignments WHERE id = $1", [id]);
    return row ? toAssignment(row) : undefined;
  }

  async bySession(sessionKey: string): Promise<Assignment | undefined> {
    const row = await this.#db.row<AssignmentRow>("SELECT * FROM assignments WHERE session_key = $1", [
      sessionKey,
    ]);
    return row ? toAssignment(row) : undefined;
  }

  async list(agentId: string, options: { open?: boolean; limit?: number } = {}): Promise<Assignment[]> {
    // seq: the order they were made in (SQLite's rowid), for those of one millisecond.
    const rows = options.open
      ? await this.#db.rows<AssignmentRow>(
          "SELECT * FROM assignments WHERE agent_id = $1 AND state <> ALL($3::text[]) ORDER BY created_at DESC, seq DESC LIMIT $2",
          [agentId, options.limit ?? 1_000, FINAL],
        )
      : await this.#db.rows<AssignmentRow>(
          "SELECT * FROM assignments WHERE agent_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2",
          [agentId, options.limit ?? 1_000],
        );
    return rows.map(toAssignment);
  }

  async waitingOn(target: ChatTarget): Promise<Assignment[]> {
    // On every inbound message's path: the chat is matched in SQL, only its rows are read.
    const rows = await this.#db.rows<AssignmentRow>(
      `SELECT * FROM assignments WHERE state = 'requires_action'
         AND (owner::jsonb ->> 'channel') = $1 AND (owner::jsonb ->> 'accountId') = $2
         AND (owner::jsonb ->> 'chatId') = $3 AND coalesce(owner::jsonb ->> 'threadId', '') = $4
       ORDER BY updated_at, id`,
      [target.channel, target.accountId, target.chatId, target.threadId ?? ""],
    );
    return rows.map(toAssignment);
  }

  async answeredBy(inboxId: number): Promise<Assignment | undefined> {
    const row = await this.#db.row<AssignmentRow>(
      "SELECT * FROM assignments WHERE question IS NOT NULL AND (question::jsonb -> 'answeredBy') = to_jsonb($1::bigint)",
      [inboxId],
    );
    return row ? toAssignment(row) : undefined;
  }

  async saveWork(id: string, work: AssignmentWork, now: number): Promise<void> {
    await this.#saveWork(this.#db, id, work, now);
  }

  async #saveWork(db: PgRunner, id: string, work: AssignmentWork, now: number): Promise<void> {
    const p = params();
    const sets = workColumns(work, p);
    if (sets.length === 0) return;
    await db.run(
      `UPDATE assignments SET ${sets.join(", ")}, updated_at = ${p.add(now)} WHERE id = ${p.add(id)}`,
      p.values,
    );
  }

  async setState(
    id: string,
    state: AssignmentState,
    reason: string | null,
    now: number,
    options: { from?: readonly AssignmentState[]; work?: AssignmentWork } = {},
  ): Promise<boolean> {
    return this.#setState(this.#db, id, state, reason, now, options);
  }

  async #setState(
    db: PgRunner,
    id: string,
    state: AssignmentState,
    reason: string | null,
    now: number,
    options: { from?: readonly AssignmentState[]; work?: AssignmentWork },
  ): Promise<boolean> {
    const from = options.from ?? [];
    const p = params();
    const sets = [
      `state = ${p.add(state)}`,
      `state_reason = ${p.add(reason)}`,
      ...workColumns(options.work ?? {}, p),
    ];
    sets.push(`updated_at = ${p.add(now)}`);
    const where = from.length > 0 ? ` AND state = ANY(${p.add(from)}::text[])` : "";
    return (
      (await db.run(`UPDATE assignments SET ${sets.join(", ")} WHERE id = ${p.add(id)}${where}`, p.values)) >
      0
    );
  }

  async startRun(run: Omit<AssignmentRun, "endedAt" | "directive" | "reason">): Promise<void> {
    await this.#db.run(
      `INSERT INTO assignment_runs (assignment_id, run_no, run_id, started_at, turns, tokens, cost_usd)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (assignment_id, run_no) DO UPDATE SET run_id = excluded.run_id, started_at = excluded.started_at`,
      [run.assignmentId, run.runNo, run.runId, run.startedAt, run.turns, run.tokens, run.costUsd],
    );
  }

  async finishRun(end: RunFinish, now: number): Promise<boolean> {
    return this.#db.tx((tx) => this.#finish(tx, end, now));
  }

  async #finish(tx: PgRunner, end: RunFinish, now: number): Promise<boolean> {
    const { log } = end;
    await tx.run(
      "UPDATE assignment_runs SET ended_at = $1, directive = $2, reason = $3, turns = $4, tokens = $5, cost_usd = $6 WHERE assignment_id = $7 AND run_no = $8",
      [
        log.endedAt,
        log.directive,
        log.reason,
        log.turns,
        log.tokens,
        log.costUsd,
        end.assignmentId,
        end.runNo,
      ],
    );
    const { items, checkpoint } = end.work;
    const moved = await this.#setState(tx, end.assignmentId, end.state, end.reason, now, {
      from: end.from,
      work: end.work,
    });
    if (!moved) {
      await this.#saveWork(tx, end.assignmentId, { items, checkpoint }, now);
      return false;
    }
    if (end.next) {
      // SQLite's SqliteWakeRepo.replacePendingInTransaction: the next wake becomes the
      // session's only pending one, written with the run's end.
      const w = end.next;
      await tx.run("UPDATE wakes SET state = 'cancelled' WHERE session_key = $1 AND state = 'pending'", [
        w.sessionKey,
      ]);
      await tx.run(
        "INSERT INTO wakes (session_key, due_at, reason, target, state, created_at) VALUES ($1, $2, $3, $4, 'pending', $5)",
        [w.sessionKey, w.dueAt, w.reason, w.target ? JSON.stringify(w.target) : null, now],
      );
    }
    return true;
  }

  async runs(assignmentId: string, limit: number): Promise<AssignmentRun[]> {
    const rows = await this.#db.rows<RunRow>(
      "SELECT * FROM assignment_runs WHERE assignment_id = $1 ORDER BY run_no DESC LIMIT $2",
      [assignmentId, limit],
    );
    return rows.map(toRun);
  }
}

/** Owns the learnings table of one PostgreSQL store. */
export class PgLearningRepo implements LearningRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async record(
    l: { agentId: string; norm: string; text: string; scope: string | null; source: string },
    now: number,
  ): Promise<Learning> {
    return this.#db.tx(async (tx): Promise<Learning> => {
      const row = await tx.row<LearningRow>("SELECT * FROM learnings WHERE agent_id = $1 AND norm = $2", [
        l.agentId,
        l.norm,
      ]);
      if (!row) {
        const created = await tx.row<LearningRow>(
          `INSERT INTO learnings (agent_id, norm, text, scope, sources, state, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, 'candidate', $6, $6) RETURNING *`,
          [l.agentId, l.norm, l.text, l.scope, JSON.stringify([l.source]), now],
        );
        return toLearning(created as LearningRow);
      }
      const learning = toLearning(row);
      if (learning.sources.includes(l.source)) return learning;
      learning.sources.push(l.source);
      learning.updatedAt = now;
      await tx.run("UPDATE learnings SET sources = $1, updated_at = $2 WHERE id = $3", [
        JSON.stringify(learning.sources),
        now,
        learning.id,
      ]);
      return learning;
    });
  }

  async get(id: number): Promise<Learning | undefined> {
    const row = await this.#db.row<LearningRow>("SELECT * FROM learnings WHERE id = $1", [id]);
    return row ? toLearning(row) : undefined;
  }

  async list(agentId: string): Promise<Learning[]> {
    const rows = await this.#db.rows<LearningRow>("SELECT * FROM learnings WHERE agent_id = $1 ORDER BY id", [
      agentId,
    ]);
    return rows.map(toLearning);
  }

  async setState(id: number, state: LearningState, now: number): Promise<boolean> {
    return (
      (await this.#db.run("UPDATE learnings SET state = $1, updated_at = $2 WHERE id = $3", [
        state,
        now,
        id,
      ])) > 0
    );
  }
}
