/** PostgreSQL schema, version 1: sessions, transcript, runs, usage, leases (and the nodes table to come) (the tables of SQLite's schema, in PostgreSQL types). */
export const coreSchema: readonly string[] = [];
