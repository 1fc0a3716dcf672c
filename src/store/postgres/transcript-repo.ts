/**
 * The transcript in PostgreSQL: every event of every session id, in append order. A user event
 * carries its inbox id, and a partial unique index keeps it to one per inbox row, ever. A port
 * of SqliteTranscriptRepo, tail cache included.
 */
import type { SessionFence } from "../repos/lease-repo.js";
import type { TranscriptEvent, TranscriptPayload, TranscriptRepo } from "../repos/transcript-repo.js";
import type { PgLeaseRepo } from "./lease-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";

interface TranscriptRow {
  id: number;
  session_key: string;
  session_id: string;
  run_id: string | null;
  payload: string;
  created_at: number;
}

/** The newest events of one session id as last read, and where reading stopped. */
interface CachedTail {
  events: TranscriptEvent[];
  lastId: number;
  /** True when `events` is the whole history of the session id. */
  complete: boolean;
}

/** Sessions whose tails are kept in memory (least recently used are dropped). */
const TAIL_CACHE_SESSIONS = 128;

/** Rows per INSERT statement (7 parameters each, far below PostgreSQL's 65535). */
const ROWS_PER_INSERT = 500;

/**
 * The first key of the two-key advisory locks that order a session's transcript writers (the
 * second is the session key's hash); the two-key space does not overlap the one-key space the
 * migrations lock in.
 */
const TRANSCRIPT_LOCK_CLASS = 27_001;

/**
 * TranscriptRepo over a PgDb.
 *
 * `tail` keeps the last tail read per session id (LRU) and afterwards reads only the rows
 * appended since (`id >` the last id read). That needs what SQLite's single writer gave: no row
 * of a session commits after a row of that session with a higher id. PostgreSQL hands identity
 * values out before commit, so every append takes a per-session advisory lock (held to the end
 * of its transaction) before it takes ids: a session's appends commit in id order, whoever
 * makes them. The cache holds committed rows only (it is filled by reads outside transactions,
 * never inside a transaction that may be run again). Nothing deletes or rewrites transcript
 * rows; whatever starts to (compaction) must drop this cache.
 */
export class PgTranscriptRepo implements TranscriptRepo {
  readonly #db: PgDb;
  readonly #leases: PgLeaseRepo;
  readonly #tails = new Map<string, CachedTail>();

  constructor(db: PgDb, leases: PgLeaseRepo) {
    this.#db = db;
    this.#leases = leases;
  }

  /** The pool this repository writes through. */
  get db(): PgDb {
    return this.#db;
  }

  /** Appends in order while `lease` is the session's holder and fence; false (nothing written) if not. */
  async append(
    sessionKey: string,
    sessionId: string,
    runId: string | null,
    payloads: TranscriptPayload[],
    now: number,
    lease: SessionFence,
  ): Promise<boolean> {
    return this.#db.tx(async (tx) => {
      if (!(await this.#leases.isCurrentIn(tx, sessionKey, lease))) return false;
      await this.appendIn(tx, sessionKey, sessionId, runId, payloads, now);
      return true;
    });
  }

  async tail(sessionKey: string, sessionId: string, limit: number): Promise<TranscriptEvent[]> {
    const n = Math.max(0, limit);
    if (n === 0) return [];
    const key = `${sessionKey}\u0000${sessionId}`;
    let cached = this.#tails.get(key);
    // Taken out while reading: a concurrent tail of the same key reads on its own.
    this.#tails.delete(key);
    if (cached && (cached.complete || cached.events.length >= n)) {
      const fresh = (
        await this.#db.rows<TranscriptRow>(
          `SELECT id, session_key, session_id, run_id, payload, created_at FROM transcript
           WHERE session_key = $1 AND session_id = $2 AND id > $3 ORDER BY id`,
          [sessionKey, sessionId, cached.lastId],
        )
      ).map(toEvent);
      if (fresh.length > 0) {
        cached.events.push(...fresh);
        cached.lastId = (fresh.at(-1) as TranscriptEvent).id;
      }
    } else {
      const events = (
        await this.#db.rows<TranscriptRow>(
          `SELECT id, session_key, session_id, run_id, payload, created_at FROM (
             SELECT * FROM transcript WHERE session_key = $1 AND session_id = $2 ORDER BY id DESC LIMIT $3
           ) t ORDER BY id`,
          [sessionKey, sessionId, n],
        )
      ).map(toEvent);
      cached = { events, lastId: events.at(-1)?.id ?? 0, complete: events.length < n };
    }
    if (cached.events.length > n) {
      cached.events.splice(0, cached.events.length - n);
      cached.complete = false;
    }
    this.#tails.set(key, cached);
    if (this.#tails.size > TAIL_CACHE_SESSIONS) {
      const oldest = this.#tails.keys().next().value;
      if (oldest !== undefined) this.#tails.delete(oldest);
    }
    return cached.events.slice();
  }

  /**
   * For claims, appends and commitTurn: the append itself, inside the caller's transaction.
   * A user event whose inbox id is already in the transcript is skipped. Takes the session's
   * transcript lock first (see the class comment).
   */
  async appendIn(
    tx: PgRunner,
    sessionKey: string,
    sessionId: string,
    runId: string | null,
    payloads: readonly TranscriptPayload[],
    now: number,
  ): Promise<void> {
    if (payloads.length === 0) return;
    await tx.exec("SELECT pg_advisory_xact_lock($1, hashtext($2))", [TRANSCRIPT_LOCK_CLASS, sessionKey]);
    for (let start = 0; start < payloads.length; start += ROWS_PER_INSERT) {
      const chunk = payloads.slice(start, start + ROWS_PER_INSERT);
      const params: unknown[] = [];
      const values = chunk.map((payload) => {
        const at = params.length;
        params.push(
          sessionKey,
          sessionId,
          runId,
          payload.type,
          JSON.stringify(payload),
          payload.type === "user" ? payload.inboxId : null,
          now,
        );
        return `($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6}, $${at + 7})`;
      });
      // Rows take their ids in VALUES order. The conflict target names the partial index, so
      // only a repeated user event is skipped; any other constraint failure still raises.
      await tx.exec(
        `INSERT INTO transcript (session_key, session_id, run_id, type, payload, inbox_id, created_at)
         VALUES ${values.join(", ")}
         ON CONFLICT (inbox_id) WHERE type = 'user' DO NOTHING`,
        params,
      );
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
