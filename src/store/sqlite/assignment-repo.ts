/** Assignments, their run log and learnings in SQLite (see AssignmentRepo, LearningRepo). */
import type { Database, Transaction } from "better-sqlite3";
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
import { guard } from "./errors.js";
import { type StatementCache, statementCache } from "./statements.js";
import type { SqliteWakeRepo } from "./wake-repo.js";

interface AssignmentRow {
  id: string;
  agent_id: string;
  goal: string;
  owner: string | null;
  session_key: string;
  state: AssignmentState;
  state_reason: string | null;
  limits: string;
  contract: string;
  items: string;
  checkpoint: string;
  question: string | null;
  created_at: number;
  updated_at: number;
  requested_by: string | null;
  private: 0 | 1;
}

function toAssignment(r: AssignmentRow): Assignment {
  return {
    id: r.id,
    agentId: r.agent_id,
    goal: r.goal,
    owner: r.owner === null ? null : (JSON.parse(r.owner) as ChatTarget),
    requestedBy: r.requested_by,
    privateChat: r.private === 1,
    sessionKey: r.session_key,
    state: r.state,
    stateReason: r.state_reason,
    limits: JSON.parse(r.limits),
    contract: JSON.parse(r.contract),
    items: JSON.parse(r.items),
    checkpoint: JSON.parse(r.checkpoint),
    question: r.question === null ? null : JSON.parse(r.question),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

interface RunRow {
  assignment_id: string;
  run_no: number;
  run_id: string;
  started_at: number;
  ended_at: number | null;
  directive: AssignmentRun["directive"];
  reason: string | null;
  turns: number;
  tokens: number;
  cost_usd: number;
}

/** The columns `work` sets, as `col = ?` parts and their values. */
function workColumns(work: AssignmentWork): { sets: string[]; values: Array<string | null> } {
  const sets: string[] = [];
  const values: Array<string | null> = [];
  if (work.items) {
    sets.push("items = ?");
    values.push(JSON.stringify(work.items));
  }
  if (work.checkpoint) {
    sets.push("checkpoint = ?");
    values.push(JSON.stringify(work.checkpoint));
  }
  if (work.question !== undefined) {
    sets.push("question = ?");
    values.push(work.question === null ? null : JSON.stringify(work.question));
  }
  return { sets, values };
}

/** The AssignmentRepo on one SQLite database. */
export class SqliteAssignmentRepo implements AssignmentRepo {
  readonly #sql: StatementCache;
  readonly #path: string;

  readonly #finishTx: Transaction<(end: RunFinish, now: number) => boolean>;
  readonly #wakes: SqliteWakeRepo;

  /** `wakes` writes a run's next wake in the run end's transaction. */
  constructor(db: Database, path: string, wakes: SqliteWakeRepo) {
    this.#sql = statementCache(db);
    this.#path = path;
    this.#wakes = wakes;
    this.#finishTx = db.transaction((end: RunFinish, now: number) => this.#finish(end, now));
  }

  async create(a: Assignment): Promise<void> {
    guard(this.#path, () =>
      this.#sql(
        `INSERT INTO assignments (id, agent_id, goal, owner, session_key, state, state_reason, limits, contract, items, checkpoint, question, created_at, updated_at, requested_by, private)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
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
      ),
    );
  }

  async get(id: string): Promise<Assignment | undefined> {
    return guard(this.#path, () => {
      const row = this.#sql<[string], AssignmentRow>("SELECT * FROM assignments WHERE id = ?").get(id);
      return row ? toAssignment(row) : undefined;
    });
  }

  async bySession(sessionKey: string): Promise<Assignment | undefined> {
    return guard(this.#path, () => {
      const row = this.#sql<[string], AssignmentRow>("SELECT * FROM assignments WHERE session_key = ?").get(
        sessionKey,
      );
      return row ? toAssignment(row) : undefined;
    });
  }

  async list(agentId: string, options: { open?: boolean; limit?: number } = {}): Promise<Assignment[]> {
    return guard(this.#path, () =>
      this.#sql<[string, number], AssignmentRow>(
        options.open
          ? "SELECT * FROM assignments WHERE agent_id = ? AND state NOT IN ('stalled', 'done', 'failed', 'cancelled') ORDER BY created_at DESC, rowid DESC LIMIT ?"
          : "SELECT * FROM assignments WHERE agent_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?",
      )
        .all(agentId, options.limit ?? 1_000)
        .map(toAssignment),
    );
  }

  async waitingOn(target: ChatTarget): Promise<Assignment[]> {
    return guard(this.#path, () =>
      // On every inbound message's path: the chat is matched in SQL, only its rows are read.
      this.#sql<[string, string, string, string], AssignmentRow>(
        `SELECT * FROM assignments WHERE state = 'requires_action'
           AND json_extract(owner, '$.channel') = ? AND json_extract(owner, '$.accountId') = ?
           AND json_extract(owner, '$.chatId') = ? AND IFNULL(json_extract(owner, '$.threadId'), '') = ?
         ORDER BY updated_at, id`,
      )
        .all(target.channel, target.accountId, target.chatId, target.threadId ?? "")
        .map(toAssignment),
    );
  }

  async answeredBy(inboxId: number): Promise<Assignment | undefined> {
    return guard(this.#path, () => {
      const row = this.#sql<[number], AssignmentRow>(
        "SELECT * FROM assignments WHERE question IS NOT NULL AND json_extract(question, '$.answeredBy') = ?",
      ).get(inboxId);
      return row ? toAssignment(row) : undefined;
    });
  }

  async saveWork(id: string, work: AssignmentWork, now: number): Promise<void> {
    guard(this.#path, () => this.#saveWork(id, work, now));
  }

  #saveWork(id: string, work: AssignmentWork, now: number): void {
    const { sets, values } = workColumns(work);
    if (sets.length === 0) return;
    this.#sql(`UPDATE assignments SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`).run(
      ...values,
      now,
      id,
    );
  }

  async setState(
    id: string,
    state: AssignmentState,
    reason: string | null,
    now: number,
    options: { from?: readonly AssignmentState[]; work?: AssignmentWork } = {},
  ): Promise<boolean> {
    return guard(this.#path, () => this.#setState(id, state, reason, now, options));
  }

  #setState(
    id: string,
    state: AssignmentState,
    reason: string | null,
    now: number,
    options: { from?: readonly AssignmentState[]; work?: AssignmentWork },
  ): boolean {
    const { sets, values } = workColumns(options.work ?? {});
    const from = options.from ?? [];
    const where = from.length > 0 ? ` AND state IN (${from.map(() => "?").join(", ")})` : "";
    return (
      this.#sql(
        `UPDATE assignments SET state = ?, state_reason = ?, ${[...sets, "updated_at = ?"].join(", ")} WHERE id = ?${where}`,
      ).run(state, reason, ...values, now, id, ...from).changes > 0
    );
  }

  async startRun(run: Omit<AssignmentRun, "endedAt" | "directive" | "reason">): Promise<void> {
    guard(this.#path, () =>
      this.#sql(
        `INSERT INTO assignment_runs (assignment_id, run_no, run_id, started_at, turns, tokens, cost_usd)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (assignment_id, run_no) DO UPDATE SET run_id = excluded.run_id, started_at = excluded.started_at`,
      ).run(run.assignmentId, run.runNo, run.runId, run.startedAt, run.turns, run.tokens, run.costUsd),
    );
  }

  async finishRun(end: RunFinish, now: number): Promise<boolean> {
    return guard(this.#path, () => this.#finishTx.immediate(end, now));
  }

  #finish(end: RunFinish, now: number): boolean {
    const { log } = end;
    this.#sql(
      "UPDATE assignment_runs SET ended_at = ?, directive = ?, reason = ?, turns = ?, tokens = ?, cost_usd = ? WHERE assignment_id = ? AND run_no = ?",
    ).run(
      log.endedAt,
      log.directive,
      log.reason,
      log.turns,
      log.tokens,
      log.costUsd,
      end.assignmentId,
      end.runNo,
    );
    const { items, checkpoint } = end.work;
    if (!this.#setState(end.assignmentId, end.state, end.reason, now, { from: end.from, work: end.work })) {
      this.#saveWork(end.assignmentId, { items, checkpoint }, now);
      return false;
    }
    if (end.next) this.#wakes.replacePendingInTransaction(end.next, now);
    return true;
  }

  async runs(assignmentId: string, limit: number): Promise<AssignmentRun[]> {
    return guard(this.#path, () =>
      this.#sql<[string, number], RunRow>(
        "SELECT * FROM assignment_runs WHERE assignment_id = ? ORDER BY run_no DESC LIMIT ?",
      )
        .all(assignmentId, limit)
        .map((r) => ({
          assignmentId: r.assignment_id,
          runNo: r.run_no,
          runId: r.run_id,
          startedAt: r.started_at,
          endedAt: r.ended_at,
          directive: r.directive,
          reason: r.reason,
          turns: r.turns,
          tokens: r.tokens,
          costUsd: r.cost_usd,
        })),
    );
  }
}

interface LearningRow {
  id: number;
  agent_id: string;
  norm: string;
  text: string;
  scope: string | null;
  sources: string;
  state: LearningState;
  created_at: number;
  updated_at: number;
}

function toLearning(r: LearningRow): Learning {
  return {
    id: r.id,
    agentId: r.agent_id,
    norm: r.norm,
    text: r.text,
    scope: r.scope,
    sources: JSON.parse(r.sources),
    state: r.state,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The LearningRepo on one SQLite database. */
export class SqliteLearningRepo implements LearningRepo {
  readonly #db: Database;
  readonly #sql: StatementCache;
  readonly #path: string;

  constructor(db: Database, path: string) {
    this.#db = db;
    this.#sql = statementCache(db);
    this.#path = path;
  }

  async record(
    l: { agentId: string; norm: string; text: string; scope: string | null; source: string },
    now: number,
  ): Promise<Learning> {
    return guard(this.#path, () =>
      this.#db
        .transaction((): Learning => {
          const row = this.#sql<[string, string], LearningRow>(
            "SELECT * FROM learnings WHERE agent_id = ? AND norm = ?",
          ).get(l.agentId, l.norm);
          if (!row) {
            const r = this.#sql(
              "INSERT INTO learnings (agent_id, norm, text, scope, sources, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'candidate', ?, ?)",
            ).run(l.agentId, l.norm, l.text, l.scope, JSON.stringify([l.source]), now, now);
            return toLearning(
              this.#sql<[number], LearningRow>("SELECT * FROM learnings WHERE id = ?").get(
                Number(r.lastInsertRowid),
              ) as LearningRow,
            );
          }
          const learning = toLearning(row);
          if (learning.sources.includes(l.source)) return learning;
          learning.sources.push(l.source);
          learning.updatedAt = now;
          this.#sql("UPDATE learnings SET sources = ?, updated_at = ? WHERE id = ?").run(
            JSON.stringify(learning.sources),
            now,
            learning.id,
          );
          return learning;
        })
        .immediate(),
    );
  }

  async get(id: number): Promise<Learning | undefined> {
    return guard(this.#path, () => {
      const row = this.#sql<[number], LearningRow>("SELECT * FROM learnings WHERE id = ?").get(id);
      return row ? toLearning(row) : undefined;
    });
  }

  async list(agentId: string): Promise<Learning[]> {
    return guard(this.#path, () =>
      this.#sql<[string], LearningRow>("SELECT * FROM learnings WHERE agent_id = ? ORDER BY id")
        .all(agentId)
        .map(toLearning),
    );
  }

  async setState(id: number, state: LearningState, now: number): Promise<boolean> {
    return guard(
      this.#path,
      () =>
        this.#sql("UPDATE learnings SET state = ?, updated_at = ? WHERE id = ?").run(state, now, id).changes >
        0,
    );
  }
}
