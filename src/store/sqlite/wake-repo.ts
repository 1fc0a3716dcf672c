/** Wakes in SQLite (see WakeRepo): the per-session checks and the insert in one immediate transaction. */
import type { Database } from "better-sqlite3";
import type { ChatTarget } from "../../channels/types.js";
import type { Wake, WakeAdd, WakeRepo } from "../repos/wake-repo.js";
import { guard } from "./errors.js";
import { type StatementCache, statementCache } from "./statements.js";

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
type NewWake = { sessionKey: string; dueAt: number; reason: string; target: ChatTarget | null };

/** The WakeRepo on one SQLite database. */
export class SqliteWakeRepo implements WakeRepo {
  readonly #db: Database;
  readonly #sql: StatementCache;
  readonly #path: string;

  constructor(db: Database, path: string) {
    this.#db = db;
    this.#sql = statementCache(db);
    this.#path = path;
  }

  async add(w: NewWake, limits: { maxPending: number; minGapMs: number }, now: number): Promise<WakeAdd> {
    return guard(this.#path, () =>
      this.#db
        .transaction((): WakeAdd => {
          const pending = this.#sql<[string], WakeRow>(
            "SELECT * FROM wakes WHERE session_key = ? AND state = 'pending' ORDER BY due_at",
          ).all(w.sessionKey);
          if (pending.length >= limits.maxPending) return { status: "too_many", pending: pending.length };
          const close = pending.find((p) => Math.abs(p.due_at - w.dueAt) < limits.minGapMs);
          if (close) return { status: "too_close", other: toWake(close) };
          const id = this.#insert(w, now);
          const row = this.#sql<[number], WakeRow>("SELECT * FROM wakes WHERE id = ?").get(id);
          return { status: "created", wake: toWake(row as WakeRow) };
        })
        .immediate(),
    );
  }

  /**
   * Inside a write transaction the caller holds: `w` becomes the session's only pending wake
   * (the others are cancelled). For a step that writes a wake with other rows (an assignment
   * run's end).
   */
  replacePendingInTransaction(w: NewWake, now: number): void {
    this.#sql("UPDATE wakes SET state = 'cancelled' WHERE session_key = ? AND state = 'pending'").run(
      w.sessionKey,
    );
    this.#insert(w, now);
  }

  #insert(w: NewWake, now: number): number {
    const r = this.#sql(
      "INSERT INTO wakes (session_key, due_at, reason, target, state, created_at) VALUES (?, ?, ?, ?, 'pending', ?)",
    ).run(w.sessionKey, w.dueAt, w.reason, w.target ? JSON.stringify(w.target) : null, now);
    return Number(r.lastInsertRowid);
  }

  async list(sessionKey: string): Promise<Wake[]> {
    return guard(this.#path, () =>
      this.#sql<[string], WakeRow>(
        "SELECT * FROM wakes WHERE session_key = ? AND state = 'pending' ORDER BY due_at, id",
      )
        .all(sessionKey)
        .map(toWake),
    );
  }

  async cancel(id: number, sessionKey: string): Promise<boolean> {
    return guard(
      this.#path,
      () =>
        this.#sql(
          "UPDATE wakes SET state = 'cancelled' WHERE id = ? AND session_key = ? AND state = 'pending'",
        ).run(id, sessionKey).changes > 0,
    );
  }

  async due(now: number, limit: number): Promise<Wake[]> {
    return guard(this.#path, () =>
      this.#sql<[number, number], WakeRow>(
        "SELECT * FROM wakes WHERE state = 'pending' AND due_at <= ? ORDER BY due_at, id LIMIT ?",
      )
        .all(now, limit)
        .map(toWake),
    );
  }

  async nextDue(): Promise<number | undefined> {
    return guard(this.#path, () => {
      const row = this.#sql<[], { at: number | null }>(
        "SELECT MIN(due_at) AS at FROM wakes WHERE state = 'pending'",
      ).get();
      return row?.at ?? undefined;
    });
  }

  async claim(id: number, now: number): Promise<Wake | undefined> {
    return guard(this.#path, () => {
      const row = this.#sql<[number, number], WakeRow>(
        "UPDATE wakes SET state = 'fired', fired_at = ? WHERE id = ? AND state = 'pending' RETURNING *",
      ).get(now, id);
      return row ? toWake(row) : undefined;
    });
  }
}
