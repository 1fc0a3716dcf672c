/** PostgreSQL schema, version 1: inbox, outbox, mailboxes, previews (the tables of SQLite's schema, in PostgreSQL types). */
export const queueSchema: readonly string[] = [];
