/**
 * PostgreSQL schema, version 3: the cluster's model-call permits and the demands of calls
 * waiting for one (SQLite v19). Priority is a rank (2 human, 1 normal, 0 background); epoch ms
 * are BIGINT. Both tables stay small (live rows only: a try deletes the expired ones).
 */

/** The statements, in order. */
export const permitSchema: readonly string[] = [
  `CREATE TABLE model_permits (
     owner TEXT NOT NULL,
     call_id TEXT NOT NULL,
     priority SMALLINT NOT NULL CHECK (priority IN (0, 1, 2)),
     granted_at BIGINT NOT NULL,
     lease_until BIGINT NOT NULL,
     PRIMARY KEY (owner, call_id)
   )`,
  `CREATE TABLE permit_demands (
     owner TEXT NOT NULL,
     call_id TEXT NOT NULL,
     priority SMALLINT NOT NULL CHECK (priority IN (0, 1, 2)),
     since BIGINT NOT NULL,
     lease_until BIGINT NOT NULL,
     PRIMARY KEY (owner, call_id)
   )`,
];
