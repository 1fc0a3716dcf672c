/**
 * Schema steps for what a crash leaves behind (v13: the processes that own work, so a gateway
 * starting after one died takes its work over at once; v14: streaming previews' messages), spread into MIGRATIONS after the
 * assignments' (migrations.ts); append only, never edit one that has shipped.
 */

import type { Migration } from "./migration.js";

/** Versions 13 on. */
export const CRASH_MIGRATIONS: readonly Migration[] = [
  {
    version: 13,
    name: "owners: the gateway processes that hold leases",
    // One row per live gateway process (and per one that died without retiring), written before
    // it takes any lease: a gateway starting on the same host judges each by its process state
    // and start time, and retires a dead one's leases at once.
    sql: `
      CREATE TABLE owners (
        owner TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        boot_id TEXT,
        pid_namespace TEXT,
        start_ticks INTEGER,
        started_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 14,
    name: "previews: the message that shows a running turn's text",
    // Written once per preview, when its message was posted; a reply chunk sent for the same key
    // deletes it (markSent). A turn redone after a crash edits that message into its answer.
    sql: `
      CREATE TABLE previews (
        channel TEXT NOT NULL,
        account_id TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        reply_to TEXT NOT NULL,
        message_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (channel, account_id, chat_id, thread_id, reply_to)
      ) WITHOUT ROWID;
    `,
  },
];
