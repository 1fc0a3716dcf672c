/**
 * The transcript in SQLite: every event of every session id, in append order. A user event
 * carries its inbox id, and a partial unique index keeps it to one per inbox row, ever.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { TranscriptEvent, TranscriptPayload, TranscriptRepo } from "../types.js";
import { guard } from "./errors.js";

interface TranscriptRow {
  id: number;
  session_key: string;
  session_id: string;
  run_id: string | null;
  payload: string;
  created_at: number;
}

interface TranscriptInsert {
  sessionKey: string;
  sessionId: string;
  runId: string | null;
  type: TranscriptPayload["type"];
  payload: string;
  inboxId: number | null;
  now: number;
}

/** TranscriptRepo over one better-sqlite3 connection. */
export class SqliteTranscriptRepo implements TranscriptRepo {
  readonly #path: string;
  readonly #appendTx: Transaction<
    (
      sessionKey: string,
      sessionId: string,
      runId: string | null,
      payloads: TranscriptPayload[],
      now: number,
    ) => void
  >;
  readonly #insert: Statement<[TranscriptInsert]>;
  readonly #tail: Statement<[string, string, number], TranscriptRow>;

  constructor(db: Database, path: string) {
    this.#path = path;
    // The conflict target names the partial index, so only a repeated user event is skipped;
    // any other constraint failure still raises.
    this.#insert = db.prepare(
      `INSERT INTO transcript (session_key, session_id, run_id, type, payload, inbox_id, created_at)
       VALUES (@sessionKey, @sessionId, @runId, @type, @payload, @inboxId, @now)
       ON CONFLICT (inbox_id) WHERE type = 'user' DO NOTHING`,
    );
    this.#tail = db.prepare(
      `SELECT id, session_key, session_id, run_id, payload, created_at FROM (
         SELECT * FROM transcript WHERE session_key = ? AND session_id = ? ORDER BY id DESC LIMIT ?
       ) ORDER BY id`,
    );
    this.#appendTx = db.transaction(
      (
        sessionKey: string,
        sessionId: string,
        runId: string | null,
        payloads: TranscriptPayload[],
        now: number,
      ) => this.appendInTransaction(sessionKey, sessionId, runId, payloads, now),
    );
  }

  /** Appends in order; a user event for an inbox id that already has one is skipped. */
  async append(
    sessionKey: string,
    sessionId: string,
    runId: string | null,
    payloads: TranscriptPayload[],
    now: number,
  ): Promise<void> {
    guard(this.#path, () => this.#appendTx.immediate(sessionKey, sessionId, runId, payloads, now));
  }

  async tail(sessionKey: string, sessionId: string, limit: number): Promise<TranscriptEvent[]> {
    return guard(this.#path, () => this.#tail.all(sessionKey, sessionId, Math.max(0, limit)).map(toEvent));
  }

  /** For claim and commitTurn: the append itself, inside the caller's transaction. */
  appendInTransaction(
    sessionKey: string,
    sessionId: string,
    runId: string | null,
    payloads: readonly TranscriptPayload[],
    now: number,
  ): void {
    for (const payload of payloads) {
      this.#insert.run({
        sessionKey,
        sessionId,
        runId,
        type: payload.type,
        payload: JSON.stringify(payload),
        inboxId: payload.type === "user" ? payload.inboxId : null,
        now,
      });
    }
  }
}

function toEvent(row: TranscriptRow): TranscriptEvent {
  return {
    id: row.id,
    sessionKey: row.session_key,
    sessionId: row.session_id,
    runId: row.run_id,
    payload: JSON.parse(row.payload) as TranscriptPayload,
    createdAt: row.created_at,
  };
}
