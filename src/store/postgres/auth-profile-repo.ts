/** PostgreSQL: AuthProfileRepo (being built for #27: every method not built yet throws). */
import type { AuthProfileRepo } from "../repos/auth-profile-repo.js";
import type { PgDb } from "./pg-db.js";
import { notBuilt } from "./not-built.js";

/** The AuthProfileRepo on PostgreSQL. */
export class PgAuthProfileRepo implements AuthProfileRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly list: AuthProfileRepo["list"] = notBuilt("authProfile.list");
  readonly save: AuthProfileRepo["save"] = notBuilt("authProfile.save");
  readonly reset: AuthProfileRepo["reset"] = notBuilt("authProfile.reset");
}
