/**
 * The scheduler's schema steps (v8 jobs and the run ledger, v9 wakes), spread into MIGRATIONS
 * in order (migrations.ts); the same rules hold: append only, never edit one that has shipped.
 */

import type { Migration } from "./migration.js";

/** Versions 8 and 9. */
export const SCHEDULER_MIGRATIONS: readonly Migration[] = [
  {
    version: 8,
    name: "scheduled jobs and their run ledger",
    // A slot is claimed by inserting its ledger row: (job_id, scheduled_for) is unique, so no
    // restart or second process runs it twice. cron_version moves with every job change.
    sql: `
      CREATE TABLE cron_jobs (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        name TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('config', 'cli', 'agent')),
        schedule TEXT NOT NULL CHECK (json_valid(schedule)),
        prompt TEXT NOT NULL,
        session_mode TEXT NOT NULL CHECK (session_mode IN ('main', 'isolated')),
        deliver TEXT NOT NULL CHECK (json_valid(deliver)),
        catch_up TEXT NOT NULL CHECK (catch_up IN ('one', 'skip')),
        timeout_ms INTEGER NOT NULL,
        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        next_run_at INTEGER,
        failing INTEGER NOT NULL DEFAULT 0 CHECK (failing IN (0, 1)),
        disabled_reason TEXT,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        delivery_failures INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (agent_id, name)
      );
      -- due, nextWake: enabled jobs by their next slot.
      CREATE INDEX cron_jobs_due ON cron_jobs (next_run_at) WHERE enabled = 1;

      CREATE TABLE cron_runs (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
        scheduled_for INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'retry', 'ok', 'failed', 'skipped', 'missed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        retry_at INTEGER,
        started_at INTEGER,
        finished_at INTEGER,
        duration_ms INTEGER,
        tokens INTEGER,
        error TEXT,
        receipt TEXT,
        note TEXT,
        run_id TEXT,
        UNIQUE (job_id, scheduled_for)
      );
      -- dueRetries, staleRunning.
      CREATE INDEX cron_runs_state ON cron_runs (state, retry_at);

      CREATE TABLE cron_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
      INSERT INTO cron_version (id, version) VALUES (1, 0);
    `,
  },
  {
    version: 9,
    name: "wakes the agent queued for its own sessions",
    // A pending wake runs its session once, as background work; claiming it moves it to fired.
    sql: `
      CREATE TABLE wakes (
        id INTEGER PRIMARY KEY,
        session_key TEXT NOT NULL,
        due_at INTEGER NOT NULL,
        reason TEXT NOT NULL,
        target TEXT CHECK (target IS NULL OR json_valid(target)),
        state TEXT NOT NULL CHECK (state IN ('pending', 'fired', 'cancelled')),
        created_at INTEGER NOT NULL,
        fired_at INTEGER
      );
      -- due, nextDue: pending wakes by time; list and the per-session checks.
      CREATE INDEX wakes_pending ON wakes (due_at) WHERE state = 'pending';
      CREATE INDEX wakes_session ON wakes (session_key, state);
    `,
  },
];
