/** ClusterRepo on PostgreSQL: the table cluster_values, a value inserted once per key. */
import type { ClusterRepo } from "../repos/cluster-repo.js";
import type { PgDb } from "./pg-db.js";

/** The cluster's set-once values on PostgreSQL. */
export class PgClusterRepo implements ClusterRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async claimValue(key: string, value: string, now: number): Promise<string> {
    // One statement: the insert, or (on conflict) nothing; then whichever value is there.
    return this.#db.tx(async (tx) => {
      await tx.run(
        "INSERT INTO cluster_values (key, value, set_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING",
        [key, value, now],
      );
      return (
        (await tx.row<{ value: string }>("SELECT value FROM cluster_values WHERE key = $1", [key]))?.value ??
        value
      );
    });
  }
}
