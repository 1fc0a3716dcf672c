/** ClusterRepo in SQLite: the table cluster_values, a value inserted once per key. */
import type { Database, Statement } from "better-sqlite3";
import type { ClusterRepo } from "../repos/cluster-repo.js";
import { guard } from "./errors.js";

/** The cluster's set-once values in one SQLite database. */
export class SqliteClusterRepo implements ClusterRepo {
  readonly #path: string;
  readonly #insert: Statement<[string, string, number]>;
  readonly #get: Statement<[string], { value: string }>;

  constructor(db: Database, path: string) {
    this.#path = path;
    this.#insert = db.prepare(
      "INSERT INTO cluster_values (key, value, set_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
    );
    this.#get = db.prepare("SELECT value FROM cluster_values WHERE key = ?");
  }

  async claimValue(key: string, value: string, now: number): Promise<string> {
    return guard(this.#path, () => {
      this.#insert.run(key, value, now);
      return this.#get.get(key)?.value ?? value;
    });
  }
}
