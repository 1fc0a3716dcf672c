/**
 * Assignments' schema steps (v10: assignments, their run log, learnings; v11: who started one
 * and whether its chat is private; v12: an index of the waiting ones), spread into MIGRATIONS
 * after the scheduler's (migrations.ts); append only, never edit one that has shipped.
 */

import type { Migration } from "./migration.js";

/** Versions 10 to 12. */
export const ASSIGNMENT_MIGRATIONS: readonly Migration[] = [
  {
    version: 10,
    name: "assignments, their runs, and learnings",
    // Items, checkpoint and question are JSON written by the run holding the assignment's
    // session; state changes that can race (cancel, answer) are conditional updates.
    sql: `
      CREATE TABLE assignments (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        goal TEXT NOT NULL,
        owner TEXT CHECK (owner IS NULL OR json_valid(owner)),
        session_key TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL CHECK (state IN ('active', 'sleeping', 'requires_action', 'stalled', 'done', 'failed', 'cancelled')),
        state_reason TEXT,
        limits TEXT NOT NULL CHECK (json_valid(limits)),
        contract TEXT NOT NULL CHECK (json_valid(contract)),
        items TEXT NOT NULL CHECK (json_valid(items)),
        checkpoint TEXT NOT NULL CHECK (json_valid(checkpoint)),
        question TEXT CHECK (question IS NULL OR json_valid(question)),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX assignments_agent ON assignments (agent_id, created_at);

      CREATE TABLE assignment_runs (
        assignment_id TEXT NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
        run_no INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        directive TEXT CHECK (directive IS NULL OR directive IN ('continue', 'sleep', 'pause', 'done')),
        reason TEXT,
        turns INTEGER NOT NULL DEFAULT 0,
        tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (assignment_id, run_no)
      );

      CREATE TABLE learnings (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        norm TEXT NOT NULL,
        text TEXT NOT NULL,
        scope TEXT,
        sources TEXT NOT NULL CHECK (json_valid(sources)),
        state TEXT NOT NULL CHECK (state IN ('candidate', 'promoted', 'dropped')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (agent_id, norm)
      );
    `,
  },
  {
    version: 11,
    name: "who started an assignment, and whether its chat is private",
    // requested_by: only that sender answers the assignment's questions in its chat (null:
    // anyone there). private: the owner chat is a direct one, so runs may load MEMORY.md.
    sql: `
      ALTER TABLE assignments ADD COLUMN requested_by TEXT;
      ALTER TABLE assignments ADD COLUMN private INTEGER NOT NULL DEFAULT 1 CHECK (private IN (0, 1));
    `,
  },
  {
    version: 12,
    name: "an index of the assignments waiting on their owner",
    // The router asks on every inbound message whether an assignment waits on that chat: only
    // the waiting rows are read (usually none), not the whole table.
    sql: `
      CREATE INDEX assignments_waiting ON assignments (updated_at) WHERE state = 'requires_action';
    `,
  },
];
