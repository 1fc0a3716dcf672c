/** PostgreSQL schema, version 1: cron jobs and their ledger, wakes, pairing, auth profiles (the tables of SQLite's schema, in PostgreSQL types). */
export const schedulingSchema: readonly string[] = [];
