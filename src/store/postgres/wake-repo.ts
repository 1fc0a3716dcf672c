/** PostgreSQL: WakeRepo (being built for #27: every method not built yet throws). */
import type { WakeRepo } from "../repos/wake-repo.js";
import type { PgDb } from "./pg-db.js";
import { notBuilt } from "./not-built.js";

/** The WakeRepo on PostgreSQL. */
export class PgWakeRepo implements WakeRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly add: WakeRepo["add"] = notBuilt("wake.add");
  readonly list: WakeRepo["list"] = notBuilt("wake.list");
  readonly cancel: WakeRepo["cancel"] = notBuilt("wake.cancel");
  readonly due: WakeRepo["due"] = notBuilt("wake.due");
  readonly nextDue: WakeRepo["nextDue"] = notBuilt("wake.nextDue");
  readonly claim: WakeRepo["claim"] = notBuilt("wake.claim");
}
