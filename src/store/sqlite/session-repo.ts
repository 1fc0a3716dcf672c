/**
 * Sessions in SQLite: one row per session key holding its current session id, the chat it was
 * last addressed from, the model a person chose for it and its mode.
 */
import type { Database, Statement } from "better-sqlite3";
import type { ChatTarget } from "../../channels/types.js";
import type { SessionMode, SessionRecord, SessionRepo, SessionSummary } from "../repos/session-repo.js";
import { guard } from "./errors.js";

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
  running: 0 | 1;
}

/**
 * `list` in one statement. Every lookup runs on an index: a key's newest transcript event and
 * its message count on transcript_session (session_key, session_id, id), its newest inbox row
 * on inbox_session_id (session_key, id), and the running keys on the partial index
 * inbox_unfinished (the redundant `state IN (...)` lets the planner pick it; `running` rows are
 * few). Counting reads the rows of the listed sessions' current session ids only, after the
 * cut. The CTEs are MATERIALIZED so each correlated lookup runs once per session.
 */
const LIST_SQL = `
  WITH recent AS MATERIALIZED (
    SELECT s.session_key, s.session_id, s.last_target, s.updated_at,
      (SELECT t.created_at FROM transcript t
        WHERE t.session_key = s.session_key AND t.session_id = s.session_id
        ORDER BY t.id DESC LIMIT 1) AS event_at,
      (SELECT MAX(i.received_at, i.updated_at) FROM inbox i
        WHERE i.session_key = s.session_key ORDER BY i.id DESC LIMIT 1) AS inbox_at
    FROM sessions s
  ),
  top AS MATERIALIZED (
    SELECT session_key, session_id, last_target,
      MAX(COALESCE(event_at, inbox_at, updated_at), COALESCE(inbox_at, event_at, updated_at)) AS last_activity_at
    FROM recent ORDER BY last_activity_at DESC, session_key LIMIT ?
  )
  SELECT top.session_key, top.session_id, top.last_target, top.last_activity_at,
    (SELECT COUNT(*) FROM transcript t
      WHERE t.session_key = top.session_key AND t.session_id = top.session_id
        AND t.type IN ('user', 'assistant')) AS messages,
    top.session_key IN (
      SELECT r.session_key FROM inbox r
      WHERE r.state IN ('received', 'queued', 'running') AND r.state = 'running'
    ) AS running
  FROM top ORDER BY top.last_activity_at DESC, top.session_key`;

/**
 * SessionRepo over one better-sqlite3 connection. `ensure` on an existing session keeps its
 * session id and, when given a target, records it as the new `lastTarget`. `reset` creates
 * the session if it does not exist yet, and keeps an existing one's `lastTarget`, `model` and `mode`.
 */
export class SqliteSessionRepo implements SessionRepo {
  readonly #db: Database;
  readonly #path: string;
  readonly #ensure: Statement<
    [{ sessionKey: string; sessionId: string; target: string | null; now: number }]
  >;
  readonly #reset: Statement<[{ sessionKey: string; sessionId: string; now: number }], SessionRow>;
  readonly #byKey: Statement<[string], SessionRow>;
  readonly #count: Statement<[], { n: number }>;
  readonly #latestTarget: Statement<[], { last_target: string }>;
  readonly #keyForTarget: Statement<[string, string, string, string], { session_key: string }>;
  readonly #setTarget: Statement<[string, number, string]>;
  readonly #setModel: Statement<[string | null, number, string]>;
  readonly #setMode: Statement<[SessionMode, number, string]>;
  readonly #list: Statement<[number], SummaryRow>;

  constructor(db: Database, path: string) {
    this.#keyForTarget = db.prepare(
      `SELECT session_key FROM sessions
       WHERE json_extract(last_target, '$.channel') = ? AND json_extract(last_target, '$.accountId') = ?
         AND json_extract(last_target, '$.chatId') = ?
         AND coalesce(json_extract(last_target, '$.threadId'), '') = ?
       ORDER BY updated_at DESC LIMIT 1`,
    );
    this.#db = db;
    this.#path = path;
    this.#ensure = db.prepare(
      `INSERT INTO sessions (session_key, session_id, last_target, created_at, updated_at)
       VALUES (@sessionKey, @sessionId, @target, @now, @now)
       ON CONFLICT (session_key) DO UPDATE SET last_target = excluded.last_target, updated_at = excluded.updated_at
         WHERE excluded.last_target IS NOT NULL`,
    );
    this.#reset = db.prepare(
      `INSERT INTO sessions (session_key, session_id, last_target, created_at, updated_at)
       VALUES (@sessionKey, @sessionId, NULL, @now, @now)
       ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at
       RETURNING *`,
    );
    this.#byKey = db.prepare("SELECT * FROM sessions WHERE session_key = ?");
    this.#count = db.prepare("SELECT COUNT(*) AS n FROM sessions");
    this.#latestTarget = db.prepare(
      "SELECT last_target FROM sessions WHERE last_target IS NOT NULL ORDER BY updated_at DESC, rowid DESC LIMIT 1",
    );
    this.#setTarget = db.prepare("UPDATE sessions SET last_target = ?, updated_at = ? WHERE session_key = ?");
    this.#setModel = db.prepare("UPDATE sessions SET model = ?, updated_at = ? WHERE session_key = ?");
    this.#setMode = db.prepare("UPDATE sessions SET mode = ?, updated_at = ? WHERE session_key = ?");
    this.#list = db.prepare(LIST_SQL);
  }

  async latestTarget(): Promise<ChatTarget | undefined> {
    return guard(this.#path, () => {
      const row = this.#latestTarget.get();
      return row ? (JSON.parse(row.last_target) as ChatTarget) : undefined;
    });
  }

  async keyForTarget(target: ChatTarget): Promise<string | undefined> {
    return guard(this.#path, () => {
      const row = this.#keyForTarget.get(
        target.channel,
        target.accountId,
        target.chatId,
        target.threadId ?? "",
      );
      return row?.session_key;
    });
  }

  /** For commitTurn, inside its transaction: the chat this session was last addressed from. */
  setLastTargetInTransaction(sessionKey: string, target: ChatTarget, now: number): void {
    this.#setTarget.run(JSON.stringify(target), now, sessionKey);
  }

  async ensure(
    sessionKey: string,
    newSessionId: string,
    target: ChatTarget | null,
    now: number,
  ): Promise<SessionRecord> {
    return guard(this.#path, () =>
      this.#db
        .transaction(() => {
          const json = target ? JSON.stringify(target) : null;
          this.#ensure.run({ sessionKey, sessionId: newSessionId, target: json, now });
          return this.#mustGet(sessionKey);
        })
        .immediate(),
    );
  }

  async get(sessionKey: string): Promise<SessionRecord | undefined> {
    return guard(this.#path, () => {
      const row = this.#byKey.get(sessionKey);
      return row ? toSessionRecord(row) : undefined;
    });
  }

  async reset(sessionKey: string, newSessionId: string, now: number): Promise<SessionRecord> {
    return guard(this.#path, () => {
      // One statement, so one step: the upsert returns the row it wrote.
      const row = this.#reset.get({ sessionKey, sessionId: newSessionId, now });
      if (!row) throw new Error(`session ${sessionKey} was not written by its reset`);
      return toSessionRecord(row);
    });
  }

  async setModel(sessionKey: string, model: string | null, now: number): Promise<boolean> {
    return guard(this.#path, () => this.#setModel.run(model, now, sessionKey).changes > 0);
  }

  async setMode(sessionKey: string, mode: SessionMode, now: number): Promise<boolean> {
    return guard(this.#path, () => this.#setMode.run(mode, now, sessionKey).changes > 0);
  }

  async count(): Promise<number> {
    return guard(this.#path, () => this.#count.get()?.n ?? 0);
  }

  async list(limit: number): Promise<SessionSummary[]> {
    const n = Math.max(0, Math.floor(limit));
    if (n === 0) return [];
    return guard(this.#path, () => this.#list.all(n).map(toSessionSummary));
  }

  #mustGet(sessionKey: string): SessionRecord {
    const row = this.#byKey.get(sessionKey);
    if (!row) throw new Error(`session ${sessionKey} vanished right after it was written`);
    return toSessionRecord(row);
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
    running: row.running === 1,
  };
}

/** `agent:<agentId>:<channel>:…` → channel; any other shape → its last segment. */
function keyChannel(sessionKey: string): string {
  const parts = sessionKey.split(":");
  return (parts[0] === "agent" ? parts[2] : undefined) ?? parts.at(-1) ?? sessionKey;
}
