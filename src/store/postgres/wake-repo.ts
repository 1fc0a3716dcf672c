/**
 * Wakes on PostgreSQL (see WakeRepo): the per-session checks and the insert in one transaction;
 * claiming a wake is one conditional update, so of every node only one fires it.
 */
import type { ChatTarget } from "../../channels/types.js";
import type { Wake, WakeAdd, WakeRepo } from "../repos/wake-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";

interface WakeRow {
  id: number;
  session_key: string;
  due_at: number;
  reason: string;
  target: string | null;
  state: Wake["state"];
  created_at: number;
  fired_at: number | null;
}

function toWake(r: WakeRow): Wake {
  return {
    id: r.id,
    sessionKey: r.session_key,
    dueAt: r.due_at,
    reason: r.reason,
    target: r.target === null ? null : (JSON.parse(r.target) as ChatTarget),
    state: r.state,
    createdAt: r.created_at,
    firedAt: r.fired_at,
  };
}

/** A wake to write. */
export type NewWake = { sessionKey: string; dueAt: number; reason: string; target: ChatTarget | null };

/** The WakeRepo on PostgreSQL: owns the wakes table. */
export class PgWakeRepo implements WakeRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  /** The pool this repository runs on. */
  get db(): PgDb {
    return this.#db;
  }

  async add(w: NewWake, limits: { maxPending: number; minGapMs: number }, now: number): Promise<WakeAdd> {
    return this.#db.tx(async (tx): Promise<WakeAdd> => {
      const pending = await tx.rows<WakeRow>(
        "SELECT * FROM wakes WHERE session_key = $1 AND state = 'pending' ORDER BY due_at",
        [w.sessionKey],
      );
      if (pending.length >= limits.maxPending) return { status: "too_many", pending: pending.length };
      const close = pending.find((p) => Math.abs(p.due_at - w.dueAt) < limits.minGapMs);
      if (close) return { status: "too_close", other: toWake(close) };
      return { status: "created", wake: toWake(await insert(tx, w, now)) };
    });
  }

  /**
   * Inside a transaction the caller holds (PgDb.tx): `w` becomes the session's only pending wake
   * (the others are cancelled). For a step that writes a wake with other rows (an assignment
   * run's end); as SQLite's replacePendingInTransaction.
   */
  async replacePendingIn(tx: PgRunner, w: NewWake, now: number): Promise<void> {
    await tx.run("UPDATE wakes SET state = 'cancelled' WHERE session_key = $1 AND state = 'pending'", [
      w.sessionKey,
    ]);
    await insert(tx, w, now);
  }

  async list(sessionKey: string): Promise<Wake[]> {
    const rows = await this.#db.rows<WakeRow>(
      "SELECT * FROM wakes WHERE session_key = $1 AND state = 'pending' ORDER BY due_at, id",
      [sessionKey],
    );
    return rows.map(toWake);
  }

  async cancel(id: number, sessionKey: string): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE wakes SET state = 'cancelled' WHERE id = $1 AND session_key = $2 AND state = 'pending'",
      [id, sessionKey],
    );
    return changed > 0;
  }

  async due(now: number, limit: number): Promise<Wake[]> {
    const rows = await this.#db.rows<WakeRow>(
      "SELECT * FROM wakes WHERE state = 'pending' AND due_at <= $1 ORDER BY due_at, id LIMIT $2",
      [now, limit],
    );
    return rows.map(toWake);
  }

  async nextDue(): Promise<number | undefined> {
    const row = await this.#db.row<{ at: number | null }>(
      "SELECT MIN(due_at) AS at FROM wakes WHERE state = 'pending'",
    );
    return row?.at ?? undefined;
  }

  async claim(id: number, now: number): Promise<Wake | undefined> {
    // One conditional update: a second node's waits for this one and then finds it fired.
    const row = await this.#db.row<WakeRow>(
      "UPDATE wakes SET state = 'fired', fired_at = $1 WHERE id = $2 AND state = 'pending' RETURNING *",
      [now, id],
    );
    return row ? toWake(row) : undefined;
  }
}

/** Inserts `w` pending; resolves its row. */
async function insert(tx: PgRunner, w: NewWake, now: number): Promise<WakeRow> {
  const row = await tx.row<WakeRow>(
    `INSERT INTO wakes (session_key, due_at, reason, target, state, created_at)
     VALUES ($1, $2, $3, $4, 'pending', $5) RETURNING *`,
    [w.sessionKey, w.dueAt, w.reason, w.target ? JSON.stringify(w.target) : null, now],
  );
  return row as WakeRow;
}
