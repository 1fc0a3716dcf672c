/**
 * Schema steps for gateways as nodes of a cluster (v17: each owner's heartbeat, the last time it
 * renewed its leases, so a node on another machine can be seen alive or stale; v18: values the
 * nodes agree on, such as the shared workspace's id; v19: the cluster's model-call permits and
 * the demands of calls waiting for one, `lanes.clusterMaxConcurrent`), spread into
 * MIGRATIONS after the sub-agents' (migrations.ts); append only, never edit one that has shipped.
 */
import type { Migration } from "./migration.js";

/** Versions 17 on. */
export const NODE_MIGRATIONS: readonly Migration[] = [
  {
    version: 17,
    name: "owners: heartbeat_at, the last lease renewal of each gateway process",
    sql: "ALTER TABLE owners ADD COLUMN heartbeat_at INTEGER;",
  },
  {
    version: 18,
    name: "cluster_values: facts the nodes agree on, set once (the workspace's id)",
    sql: `
      CREATE TABLE cluster_values (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        set_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 19,
    name: "model_permits, permit_demands: the cluster's model-call cap, leased rows",
    sql: `
      CREATE TABLE model_permits (
        owner TEXT NOT NULL,
        call_id TEXT NOT NULL,
        priority INTEGER NOT NULL CHECK (priority IN (0, 1, 2)),
        granted_at INTEGER NOT NULL,
        lease_until INTEGER NOT NULL,
        PRIMARY KEY (owner, call_id)
      ) WITHOUT ROWID;
      CREATE TABLE permit_demands (
        owner TEXT NOT NULL,
        call_id TEXT NOT NULL,
        priority INTEGER NOT NULL CHECK (priority IN (0, 1, 2)),
        since INTEGER NOT NULL,
        lease_until INTEGER NOT NULL,
        PRIMARY KEY (owner, call_id)
      ) WITHOUT ROWID;
    `,
  },
];
