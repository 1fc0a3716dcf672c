/**
 * Schema steps for session modes (v15: a session's plan / execute / normal mode, which `/plan`,
 * `/execute` and `task add --plan` set), spread into MIGRATIONS after the crash ones
 * (migrations.ts); append only, never edit one that has shipped.
 */

import type { Migration } from "./migration.js";

/** Versions 15 on. */
export const MODE_MIGRATIONS: readonly Migration[] = [
  {
    version: 15,
    name: "sessions: the mode (plan, execute, normal)",
    // Session state, not prompt text: it survives restarts, compaction and `/new` (reset keeps
    // it, like the model); every existing session is in normal mode.
    sql: `
      ALTER TABLE sessions ADD COLUMN mode TEXT NOT NULL DEFAULT 'normal'
        CHECK (mode IN ('normal', 'plan', 'execute'));
    `,
  },
];
