/**
 * Schema steps for sub-agents (v16: a child session's row — its parent, task, tools, state and
 * result), spread into MIGRATIONS after the mode ones (migrations.ts); append only, never edit
 * one that has shipped.
 */

import type { Migration } from "./migration.js";

/** Versions 16 on. */
export const SUBAGENT_MIGRATIONS: readonly Migration[] = [
  {
    version: 16,
    name: "subagents: child sessions, their parent link, state and result",
    sql: `
      CREATE TABLE subagents (
        id TEXT PRIMARY KEY,
        parent_session_key TEXT NOT NULL,
        parent_run_id TEXT NOT NULL,
        child_session_key TEXT NOT NULL UNIQUE,
        seq INTEGER NOT NULL,
        depth INTEGER NOT NULL CHECK (depth >= 1),
        label TEXT NOT NULL,
        task TEXT NOT NULL,
        context TEXT NOT NULL,
        tools TEXT NOT NULL CHECK (json_valid(tools)),
        model TEXT,
        origin TEXT NOT NULL CHECK (json_valid(origin)),
        state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
        run_id TEXT,
        result TEXT,
        result_path TEXT,
        error TEXT,
        delivered_run_id TEXT,
        wait_deadline INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        ended_at INTEGER,
        UNIQUE (parent_session_key, seq)
      );
      -- Limits (active children, spawns per run) and a parent's results.
      CREATE INDEX subagents_parent ON subagents (parent_session_key, state);
      CREATE INDEX subagents_parent_run ON subagents (parent_run_id);
      -- A restart: children to run again.
      CREATE INDEX subagents_active ON subagents (state) WHERE state IN ('queued', 'running');
    `,
  },
];
