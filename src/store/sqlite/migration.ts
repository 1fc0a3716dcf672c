/** One schema step, as the migration lists declare them (migrations.ts). */

/** `version` is the user_version the database has after `sql` ran. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
