/**
 * Sessions in PostgreSQL: one row per session key holding its current session id, the chat it
 * was last addressed from, the model a person chose for it and its mode.
 */
import type { ChatTarget } from "../../channels/types.js";
import type { SessionMode, SessionRecord, SessionRepo, SessionSummary } from "../repos/session-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";

interface SessionRow {
  session_key: string;
  session_id: string;
  last_target: string | null;
  model: string | null;
  mode: SessionMode;
  created_at: number;
  updated_at: number;
}

interface SummaryRow {
  session_key: string;
  session_id: string;
  last_target: string | null;
  last_activity_at: number;
  messages: number;
  running: boolean;
}

/**
 * `list` in one statement (SQLite's, in PostgreSQL): a key's newest transcript event and its
 * message count on transcript_session (session_key, session_id, id), its newest inbox row on
 * inbox_session_id (session_key, id), the running keys on inbox_unfinished. The CTEs are
 * MATERIALIZED so each correlated lookup runs once per session. Keys compare bytewise (COLLATE
 * "C"), as in SQLite, whatever the database's collation.
 */
const LIST_SQL = `
  WITH recent AS MATERIALIZED (
    SELECT s.session_key, s.session_id, s.last_target, s.updated_at,
      (SELECT t.created_at FROM transcript t
        WHERE t.session_key = s.session_key AND t.session_id = s.session_id
        ORDER BY t.id DESC LIMIT 1) AS event_at,
      (SELECT GREATEST(i.received_at, i.updated_at) FROM inbox i
        WHERE i.session_key = s.session_key ORDER BY i.id DESC LIMIT 1) AS inbox_at
    FROM sessions s
  ),
  top AS MATERIALIZED (
    SELECT session_key, session_id, last_target,
      GREATEST(COALESCE(event_at, inbox_at, updated_at), COALESCE(inbox_at, event_at, updated_at)) AS last_activity_at
    FROM recent ORDER BY last_activity_at DESC, session_key COLLATE "C" LIMIT $1
  )
  SELECT top.session_key, top.session_id, top.last_target, top.last_activity_at,
    (SELECT COUNT(*) FROM transcript t
      WHERE t.session_key = top.session_key AND t.session_id = top.session_id
        AND t.type IN ('user', 'assistant')) AS messages,
    top.session_key IN (
      SELECT r.session_key FROM inbox r
      WHERE r.state IN ('received', 'queued', 'running') AND r.state = 'running'
    ) AS running
  FROM top ORDER BY top.last_activity_at DESC, top.session_key COLLATE "C"`;

/**
 * SessionRepo over a PgDb. `ensure` on an existing session keeps its session id and, when given
 * a target, records it as the new `lastTarget`. `reset` creates the session if it does not exist
 * yet, and keeps an existing one's `lastTarget`, `model` and `mode`.
 */
export class PgSessionRepo implements SessionRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  async latestTarget(): Promise<ChatTarget | undefined> {
    // Ties (one millisecond) by key: PostgreSQL has no insertion order to break them with.
    const row = await this.#db.row<{ last_target: string }>(
      `SELECT last_target FROM sessions WHERE last_target IS NOT NULL
       ORDER BY updated_at DESC, session_key COLLATE "C" DESC LIMIT 1`,
    );
    return row ? (JSON.parse(row.last_target) as ChatTarget) : undefined;
  }

  async keyForTarget(target: ChatTarget): Promise<string | undefined> {
    const row = await this.#db.row<{ session_key: string }>(
      `SELECT session_key FROM sessions
       WHERE (last_target::jsonb ->> 'channel') = $1 AND (last_target::jsonb ->> 'accountId') = $2
         AND (last_target::jsonb ->> 'chatId') = $3
         AND COALESCE(last_target::jsonb ->> 'threadId', '') = $4
       ORDER BY updated_at DESC, session_key COLLATE "C" DESC LIMIT 1`,
      [target.channel, target.accountId, target.chatId, target.threadId ?? ""],
    );
    return row?.session_key;
  }

  /** For commitTurn, inside its transaction: the chat this session was last addressed from. */
  async setLastTargetIn(tx: PgRunner, sessionKey: string, target: ChatTarget, now: number): Promise<void> {
    await tx.exec("UPDATE sessions SET last_target = $1, updated_at = $2 WHERE session_key = $3", [
      JSON.stringify(target),
      now,
      sessionKey,
    ]);
  }

  async ensure(
    sessionKey: string,
    newSessionId: string,
    target: ChatTarget | null,
    now: number,
  ): Promise<SessionRecord> {
    const json = target ? JSON.stringify(target) : null;
    const row = await this.#db.tx(async (tx) => {
      await tx.run(
        `INSERT INTO sessions (session_key, session_id, last_target, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $4)
         ON CONFLICT (session_key) DO UPDATE
           SET last_target = EXCLUDED.last_target, updated_at = EXCLUDED.updated_at
           WHERE EXCLUDED.last_target IS NOT NULL`,
        [sessionKey, newSessionId, json, now],
      );
      return tx.row<SessionRow>("SELECT * FROM sessions WHERE session_key = $1", [sessionKey]);
    });
    if (!row) throw new Error(`session ${sessionKey} vanished right after it was written`);
    return toSessionRecord(row);
  }

  async get(sessionKey: string): Promise<SessionRecord | undefined> {
    const row = await this.#db.row<SessionRow>("SELECT * FROM sessions WHERE session_key = $1", [sessionKey]);
    return row ? toSessionRecord(row) : undefined;
  }

  async reset(sessionKey: string, newSessionId: string, now: number): Promise<SessionRecord> {
    // One statement, so one step: the upsert returns the row it wrote.
    const row = await this.#db.row<SessionRow>(
      `INSERT INTO sessions (session_key, session_id, last_target, created_at, updated_at)
       VALUES ($1, $2, NULL, $3, $3)
       ON CONFLICT (session_key) DO UPDATE
         SET session_id = EXCLUDED.session_id, updated_at = EXCLUDED.updated_at
       RETURNING *`,
      [sessionKey, newSessionId, now],
    );
    if (!row) throw new Error(`session ${sessionKey} was not written by its reset`);
    return toSessionRecord(row);
  }

  async setModel(sessionKey: string, model: string | null, now: number): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE sessions SET model = $1, updated_at = $2 WHERE session_key = $3",
      [model, now, sessionKey],
    );
    return changed > 0;
  }

  async setMode(sessionKey: string, mode: SessionMode, now: number): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE sessions SET mode = $1, updated_at = $2 WHERE session_key = $3",
      [mode, now, sessionKey],
    );
    return changed > 0;
  }

  async count(): Promise<number> {
    return (await this.#db.row<{ n: number }>("SELECT COUNT(*) AS n FROM sessions"))?.n ?? 0;
  }

  async list(limit: number): Promise<SessionSummary[]> {
    const n = Math.max(0, Math.floor(limit));
    if (n === 0) return [];
    return (await this.#db.rows<SummaryRow>(LIST_SQL, [n])).map(toSessionSummary);
  }
}

function toSessionRecord(row: SessionRow): SessionRecord {
  return {
    sessionKey: row.session_key,
    sessionId: row.session_id,
    lastTarget: row.last_target === null ? null : (JSON.parse(row.last_target) as ChatTarget),
    model: row.model,
    mode: row.mode,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toSessionSummary(row: SummaryRow): SessionSummary {
  const lastTarget = row.last_target === null ? null : (JSON.parse(row.last_target) as ChatTarget);
  return {
    sessionKey: row.session_key,
    sessionId: row.session_id,
    channel: lastTarget?.channel ?? keyChannel(row.session_key),
    lastTarget,
    lastActivityAt: row.last_activity_at,
    messages: row.messages,
    running: row.running,
  };
}

/** `agent:<agentId>:<channel>:…` → channel; any other shape → its last segment. */
function keyChannel(sessionKey: string): string {
  const parts = sessionKey.split(":");
  return (parts[0] === "agent" ? parts[2] : undefined) ?? parts.at(-1) ?? sessionKey;
}
