/** PostgreSQL: LeaseRepo (being built for #27: every method not built yet throws). */
import type { LeaseRepo } from "../repos/lease-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import type { SessionFence } from "../repos/lease-repo.js";
import { notBuilt } from "./not-built.js";

/** The LeaseRepo on PostgreSQL. */
export class PgLeaseRepo implements LeaseRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly acquireSession: LeaseRepo["acquireSession"] = notBuilt("lease.acquireSession");
  readonly releaseSession: LeaseRepo["releaseSession"] = notBuilt("lease.releaseSession");
  readonly getSession: LeaseRepo["getSession"] = notBuilt("lease.getSession");
  readonly renew: LeaseRepo["renew"] = notBuilt("lease.renew");
  readonly registerOwner: LeaseRepo["registerOwner"] = notBuilt("lease.registerOwner");
  readonly listOwners: LeaseRepo["listOwners"] = notBuilt("lease.listOwners");
  readonly ownerHoldings: LeaseRepo["ownerHoldings"] = notBuilt("lease.ownerHoldings");
  readonly retireOwner: LeaseRepo["retireOwner"] = notBuilt("lease.retireOwner");

  /** Inside a transaction: whether `lease` is the session's current fence (see SqliteLeaseRepo). */
  readonly isCurrentIn: (tx: PgRunner, sessionKey: string, lease: SessionFence) => Promise<boolean> =
    notBuilt("lease.isCurrentIn");
}
