/** PostgreSQL schema, version 1: assignments, their run log, learnings, sub-agents (the tables of SQLite's schema, in PostgreSQL types). */
export const assignmentSchema: readonly string[] = [];
