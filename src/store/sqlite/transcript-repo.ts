/**
 * The transcript in SQLite: every event of every session id, in append order. A user event
 * carries its inbox id, and a partial unique index keeps it to one per inbox row, ever.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { SessionFence } from "../repos/lease-repo.js";
import type { TranscriptEvent, TranscriptPayload, TranscriptRepo } from "../repos/transcript-repo.js";
import { guard } from "./errors.js";
import type { SqliteLeaseRepo } from "./lease-repo.js";

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

/** The newest events of one session id as last read, and where reading stopped. */
interface CachedTail {
  events: TranscriptEvent[];
  lastId: number;
  /** True when `events` is the whole history of the session id. */
  complete: boolean;
}

/** Sessions whose tails are kept in memory (least recently used are dropped). */
const TAIL_CACHE_SESSIONS = 128;

/**
 * TranscriptRepo over one better-sqlite3 connection.
 *
 * `tail` keeps the last tail read per session id (LRU) and afterwards reads only the rows
 * appended since (`id >` the last id read), so a turn parses two new events instead of the whole
 * window. That is sound because the transcript is append-only, reads happen outside
 * transactions (the cache only ever holds committed rows), and no row of a session can commit
 * after a row of that session with a higher id: in SQLite ids are taken under the one write
 * lock, and on any engine a session's writers are one lease holder at a time (claim, append and
 * commitTurn carry its fence, and a new holder's grant waits for the old holder's writes).
 * Nothing deletes or rewrites transcript rows;
 * whatever starts to (compaction) must drop this cache.
 */
export class SqliteTranscriptRepo implements TranscriptRepo {
  readonly #path: string;
  readonly #leases: SqliteLeaseRepo;
  readonly #tails = new Map<string, CachedTail>();
  readonly #since: Statement<[string, string, number], TranscriptRow>;
  readonly #appendTx: Transaction<
    (
      sessionKey: string,
      sessionId: string,
      runId: string | null,
      payloads: TranscriptPayload[],
      now: number,
      lease: SessionFence,
    ) => boolean
  >;
  readonly #insert: Statement<[TranscriptInsert]>;
  readonly #tail: Statement<[string, string, number], TranscriptRow>;

  constructor(db: Database, path: string, leases: SqliteLeaseRepo) {
    this.#path = path;
    this.#leases = leases;
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
    this.#since = db.prepare(
      `SELECT id, session_key, session_id, run_id, payload, created_at FROM transcript
       WHERE session_key = ? AND session_id = ? AND id > ? ORDER BY id`,
    );
    this.#appendTx = db.transaction(
      (
        sessionKey: string,
        sessionId: string,
        runId: string | null,
        payloads: TranscriptPayload[],
        now: number,
        lease: SessionFence,
      ) => {
        if (!this.#leases.isCurrentInTransaction(sessionKey, lease)) return false;
        this.appendInTransaction(sessionKey, sessionId, runId, payloads, now);
        return true;
      },
    );
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
    return guard(this.#path, () =>
      this.#appendTx.immediate(sessionKey, sessionId, runId, payloads, now, lease),
    );
  }

  async tail(sessionKey: string, sessionId: string, limit: number): Promise<TranscriptEvent[]> {
    const n = Math.max(0, limit);
    if (n === 0) return [];
    return guard(this.#path, () => {
      const key = `${sessionKey}\u0000${sessionId}`;
      let cached = this.#tails.get(key);
      this.#tails.delete(key);
      if (cached && (cached.complete || cached.events.length >= n)) {
        const fresh = this.#since.all(sessionKey, sessionId, cached.lastId).map(toEvent);
        if (fresh.length > 0) {
          cached.events.push(...fresh);
          cached.lastId = (fresh.at(-1) as TranscriptEvent).id;
        }
      } else {
        const events = this.#tail.all(sessionKey, sessionId, n).map(toEvent);
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
    });
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
