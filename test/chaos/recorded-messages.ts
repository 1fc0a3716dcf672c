/**
 * What the gateway's store knew of the bot's messages, read by the chaos driver while no
 * gateway runs (after a kill, once the process is dead, before the restart): the message ids of
 * recorded previews and of sent outbox rows, as `<chat_id>:<message_id>`. On Telegram, where a
 * sent message cannot be looked up, a copy its poster never recorded is the platform's window;
 * one that was recorded and still left over is the gateway's bug.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { ChannelName } from "./types.js";

/** Reads the recorded message keys of one channel from a gateway home's database (read-only). */
export class RecordedMessages {
  readonly #path: string;
  readonly #channel: ChannelName;
  #db: Database.Database | undefined;

  constructor(home: string, channel: ChannelName) {
    this.#path = join(home, "switchyard.db");
    this.#channel = channel;
  }

  /** The keys now; empty before the gateway created its database. */
  read(): string[] {
    if (!this.#db) {
      if (!existsSync(this.#path)) return [];
      this.#db = new Database(this.#path, { readonly: true, fileMustExist: true });
    }
    const rows = this.#db
      .prepare(
        `SELECT chat_id || ':' || message_id AS k FROM previews WHERE channel = ?
         UNION SELECT chat_id || ':' || platform_message_id FROM outbox
           WHERE channel = ? AND state = 'sent' AND platform_message_id IS NOT NULL`,
      )
      .all(this.#channel, this.#channel) as Array<{ k: string }>;
    return rows.map((r) => r.k);
  }

  close(): void {
    this.#db?.close();
    this.#db = undefined;
  }
}
