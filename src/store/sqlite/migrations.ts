/**
 * Versioned, forward-only schema migrations, tracked with `PRAGMA user_version`. Append new
 * migrations to the end of MIGRATIONS; never edit one that has shipped.
 */
import { NODE_MIGRATIONS } from "./migrations-nodes.js";
import type { Database } from "better-sqlite3";
import { StoreError } from "../store-error.js";
import { ASSIGNMENT_MIGRATIONS } from "./migrations-assignments.js";
import { SCHEDULER_MIGRATIONS } from "./migrations-scheduler.js";
import { CRASH_MIGRATIONS } from "./migrations-crash.js";
import { MODE_MIGRATIONS } from "./migrations-modes.js";
import { SUBAGENT_MIGRATIONS } from "./migrations-subagents.js";

import type { Migration } from "./migration.js";

export type { Migration } from "./migration.js";

/** Every migration in order; versions are 1, 2, 3, … without gaps. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: `
      CREATE TABLE inbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dedupe_key TEXT NOT NULL UNIQUE,
        session_key TEXT NOT NULL,
        message TEXT NOT NULL CHECK (json_valid(message)),
        state TEXT NOT NULL
          CHECK (state IN ('received', 'queued', 'running', 'answered', 'failed', 'rejected')),
        attempts INTEGER NOT NULL DEFAULT 0,
        run_id TEXT,
        error TEXT,
        received_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX inbox_session_state ON inbox (session_key, state, id);
      CREATE INDEX inbox_state ON inbox (state);

      CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_key TEXT NOT NULL,
        run_id TEXT,
        inbox_id INTEGER REFERENCES inbox (id),
        channel TEXT NOT NULL,
        account_id TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        thread_id TEXT,
        reply_to TEXT,
        recipient_id TEXT,
        text TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('reply', 'notice')),
        state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'dead', 'expired')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        platform_message_id TEXT,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      -- claimDue and nextDueAt: due pending rows in order.
      CREATE INDEX outbox_due ON outbox (state, next_attempt_at, id);
      -- claimDue: is an earlier row of the same chat still unsent?
      CREATE INDEX outbox_chat_unsent ON outbox (channel, account_id, chat_id, thread_id, id)
        WHERE state IN ('pending', 'sending');
      CREATE INDEX outbox_state ON outbox (state, id);
      CREATE INDEX outbox_inbox ON outbox (inbox_id, id);
      -- listSentFor: one recipient's sent mailbox.
      CREATE INDEX outbox_mailbox ON outbox (state, channel, recipient_id, id);

      CREATE TABLE sessions (
        session_key TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        last_target TEXT CHECK (last_target IS NULL OR json_valid(last_target)),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );

      CREATE TABLE transcript (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_key TEXT NOT NULL,
        session_id TEXT NOT NULL,
        run_id TEXT,
        type TEXT NOT NULL,
        payload TEXT NOT NULL CHECK (json_valid(payload)),
        inbox_id INTEGER,
        created_at INTEGER NOT NULL
      );
      -- A user message enters the transcript once per inbox row, ever.
      CREATE UNIQUE INDEX transcript_user_once ON transcript (inbox_id) WHERE type = 'user';
      CREATE INDEX transcript_session ON transcript (session_key, session_id, id);

      CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        session_key TEXT NOT NULL,
        run_trigger TEXT NOT NULL,
        channel TEXT,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        tool_calls INTEGER NOT NULL,
        model_calls INTEGER NOT NULL,
        error_kind TEXT,
        error TEXT,
        committed_at INTEGER NOT NULL
      );
      CREATE INDEX runs_recent ON runs (started_at, run_id);

      CREATE TABLE usage (
        day TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        runs INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (day, provider, model)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: "pairing requests and approved senders",
    sql: `
      CREATE TABLE pairing_requests (
        channel TEXT NOT NULL,
        account_id TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        sender_name TEXT NOT NULL,
        code TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (channel, sender_id)
      ) WITHOUT ROWID;
      CREATE UNIQUE INDEX pairing_code ON pairing_requests (channel, code);

      CREATE TABLE approved_senders (
        channel TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        sender_name TEXT NOT NULL,
        code TEXT NOT NULL,
        approved_at INTEGER NOT NULL,
        PRIMARY KEY (channel, sender_id)
      ) WITHOUT ROWID;

      -- groupContext: a session's rows by state, newest first.
      CREATE INDEX inbox_session_id ON inbox (session_key, id);
    `,
  },
  {
    version: 3,
    name: "partial indexes: index only the rows still moving",
    // Every index a row's state change touches is another B-tree page written per commit, and a
    // message changes state four times. Full indexes on `state` are replaced by partial ones
    // that a row enters once and leaves once; finished rows (nearly all of them) are in none.
    sql: `
      DROP INDEX inbox_session_state;
      DROP INDEX inbox_state;
      -- claim: a session's queued rows in order; sessionsWithQueued.
      CREATE INDEX inbox_queued ON inbox (session_key, id) WHERE state = 'queued';
      -- listUnfinished, requeueInterrupted (start-up).
      CREATE INDEX inbox_unfinished ON inbox (id) WHERE state IN ('received', 'queued', 'running');

      DROP INDEX outbox_due;
      DROP INDEX outbox_state;
      DROP INDEX outbox_mailbox;
      -- claimDue, nextDueAt, expiry: pending rows by due time.
      CREATE INDEX outbox_pending ON outbox (next_attempt_at, id) WHERE state = 'pending';
      -- listSentFor: one recipient's delivered mailbox.
      CREATE INDEX outbox_mailbox ON outbox (channel, recipient_id, id)
        WHERE state = 'sent' AND recipient_id IS NOT NULL;
      -- status: undelivered replies.
      CREATE INDEX outbox_dead ON outbox (id) WHERE state = 'dead';
    `,
  },
  {
    version: 4,
    name: "dedupe keys carry the chat",
    // A platform message id is unique only within its chat (Telegram, Slack) or, over HTTP,
    // within one client's numbering: two senders that both number their messages "m1" must
    // not be taken for one message redelivered. Keys become channel:account:chat:message.
    sql: `
      UPDATE inbox SET dedupe_key =
        json_extract(message, '$.channel') || ':' || json_extract(message, '$.accountId') || ':' ||
        json_extract(message, '$.chatId') || ':' || json_extract(message, '$.platformMessageId');
    `,
  },
  {
    version: 5,
    name: "owners, leases and fences; mailbox cursors",
    // Several processes may share the store: running inbox rows and sending outbox rows carry
    // their owner and lease expiry, a session is run under a lease with a fence number, and the
    // HTTP mailbox is read by a per-recipient cursor instead of ids (see types.ts).
    //
    // No index is added on the owner or lease columns: the rows that carry them (running,
    // sending) are already the partial indexes inbox_unfinished and outbox_chat_unsent, which
    // renewal and takeover scan, and a lease renewal then writes table pages only. Rows running
    // or sending from before the upgrade have no owner and an expired lease (0): the next start
    // takes them over, as it always did.
    //
    // Mailbox cursors of rows already sent are their ids, and each mailbox's counter starts at
    // its largest id, so an `after` a client kept from before the upgrade still means the same.
    sql: `
      ALTER TABLE inbox ADD COLUMN owner TEXT;
      ALTER TABLE inbox ADD COLUMN lease_until INTEGER;
      UPDATE inbox SET lease_until = 0
        WHERE state IN ('received', 'queued', 'running') AND state = 'running';
      -- Keyed by session now: acquiring and releasing a session requeue its running rows, a
      -- seek instead of a walk over every unfinished row. Same rows, same writes as before.
      DROP INDEX inbox_unfinished;
      CREATE INDEX inbox_unfinished ON inbox (session_key, id) WHERE state IN ('received', 'queued', 'running');

      ALTER TABLE outbox ADD COLUMN owner TEXT;
      ALTER TABLE outbox ADD COLUMN lease_until INTEGER;
      ALTER TABLE outbox ADD COLUMN mailbox_cursor INTEGER;
      UPDATE outbox SET lease_until = 0
        WHERE state IN ('pending', 'sending') AND state = 'sending';
      UPDATE outbox SET mailbox_cursor = id WHERE state = 'sent' AND recipient_id IS NOT NULL;

      -- One row per session key ever leased; a release clears the owner and keeps the fence.
      CREATE TABLE session_leases (
        session_key TEXT PRIMARY KEY,
        owner TEXT,
        lease_until INTEGER NOT NULL,
        fence INTEGER NOT NULL CHECK (fence > 0)
      ) WITHOUT ROWID;
      -- renew: one owner's leases. Released leases leave it; renewing writes no index page.
      CREATE INDEX session_leases_owner ON session_leases (owner) WHERE owner IS NOT NULL;

      -- The last cursor handed out per mailbox; bumped in the transaction that sends a row.
      CREATE TABLE mailboxes (
        channel TEXT NOT NULL,
        recipient_id TEXT NOT NULL,
        last_cursor INTEGER NOT NULL,
        PRIMARY KEY (channel, recipient_id)
      ) WITHOUT ROWID;
      INSERT INTO mailboxes (channel, recipient_id, last_cursor)
        SELECT channel, recipient_id, MAX(id) FROM outbox
        WHERE mailbox_cursor IS NOT NULL GROUP BY channel, recipient_id;

      -- listMailbox: one recipient's mailbox in cursor order. Replaces the v3 index on ids and
      -- holds the same rows (sent, with a recipient); the counter row above is the one page a
      -- send to a recipient writes in addition.
      DROP INDEX outbox_mailbox;
      CREATE UNIQUE INDEX outbox_mailbox ON outbox (channel, recipient_id, mailbox_cursor)
        WHERE mailbox_cursor IS NOT NULL;
    `,
  },
  {
    version: 6,
    name: "auth profiles, usage per model call, run attempts, session model",
    // Auth profiles keep each credential's health across restarts (never a key). Usage gets one
    // row per model call, written by commitTurn beside the per-day totals, for `switchyard
    // usage`, `auth status` and the spend caps; they read a time range (at) or one session's
    // recent calls (session_key, at), and nothing else, so those are the only indexes: a call
    // row costs its table page and two index pages. The origin has no CHECK: a new trigger
    // must not need a table rebuild. Runs keep their attempts as JSON (old rows: none); their
    // calls are the usage rows, not a copy on the run. Sessions keep the model `/model` chose.
    sql: `
      CREATE TABLE auth_profiles (
        provider TEXT NOT NULL,
        profile_id TEXT NOT NULL,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        cooldown_until INTEGER,
        cooldown_reason TEXT,
        last_used_at INTEGER,
        last_error_kind TEXT,
        last_error_at INTEGER,
        reset_at INTEGER,
        PRIMARY KEY (provider, profile_id)
      ) WITHOUT ROWID;

      CREATE TABLE usage_calls (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        -- The UTC day (YYYY-MM-DD) of at.
        day TEXT NOT NULL,
        run_id TEXT NOT NULL,
        session_key TEXT NOT NULL,
        origin TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        profile_id TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL
      );
      -- summarize, totalsSince, byProfileSince: the calls since a time.
      CREATE INDEX usage_calls_at ON usage_calls (at);
      -- sessionTokensSince: one session's calls since a time.
      CREATE INDEX usage_calls_session ON usage_calls (session_key, at);

      ALTER TABLE runs ADD COLUMN attempts TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(attempts));
      ALTER TABLE sessions ADD COLUMN model TEXT;
    `,
  },
  {
    version: 7,
    name: "outbox rows whose earlier send may have been delivered",
    // Set when a send was interrupted (its row taken over from \`sending\`) or failed in a way
    // that may still have delivered it (a timeout, a dropped connection); a channel that can
    // look its sent messages up (Slack) checks before it sends such a row again.
    sql: `
      ALTER TABLE outbox ADD COLUMN in_doubt INTEGER NOT NULL DEFAULT 0 CHECK (in_doubt IN (0, 1));
    `,
  },
  ...SCHEDULER_MIGRATIONS,
  ...ASSIGNMENT_MIGRATIONS,
  ...CRASH_MIGRATIONS,
  ...MODE_MIGRATIONS,
  ...SUBAGENT_MIGRATIONS,
  ...NODE_MIGRATIONS,
];

/** The newest schema version this code knows. */
export const LATEST_SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;

/**
 * Brings the database to LATEST_SCHEMA_VERSION, one transaction per migration (so a crash
 * leaves it at a whole version). Refuses a database newer than this code with
 * `schema_too_new`, and a read-only connection that would need a migration with `read_only`.
 * Returns the resulting version.
 */
export function migrate(db: Database, path: string): number {
  const current = userVersion(db);
  assertNotTooNew(current, path);
  if (current === LATEST_SCHEMA_VERSION) return current;
  if (db.readonly) {
    throw new StoreError(
      "read_only",
      `database ${path} has schema version ${current} but needs ${LATEST_SCHEMA_VERSION}; open it read-write once to upgrade it`,
    );
  }
  for (const migration of MIGRATIONS) {
    // IMMEDIATE takes the write lock first, so two processes opening at once cannot both
    // apply the same step; the version is re-read under the lock.
    db.transaction(() => {
      const before = userVersion(db);
      assertNotTooNew(before, path);
      if (before >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
  return userVersion(db);
}

/** The database's `PRAGMA user_version`. */
export function userVersion(db: Database): number {
  const version = db.pragma("user_version", { simple: true });
  return typeof version === "number" ? version : 0;
}

function assertNotTooNew(version: number, path: string): void {
  if (version <= LATEST_SCHEMA_VERSION) return;
  throw new StoreError(
    "schema_too_new",
    `database ${path} has schema version ${version} but this switchyard knows up to ${LATEST_SCHEMA_VERSION}; upgrade switchyard or restore a backup`,
  );
}
