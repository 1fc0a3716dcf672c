/** PostgreSQL: PairingRepo (being built for #27: every method not built yet throws). */
import type { PairingRepo } from "../repos/pairing-repo.js";
import type { PgDb } from "./pg-db.js";
import { notBuilt } from "./not-built.js";

/** The PairingRepo on PostgreSQL. */
export class PgPairingRepo implements PairingRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly request: PairingRepo["request"] = notBuilt("pairing.request");
  readonly approve: PairingRepo["approve"] = notBuilt("pairing.approve");
  readonly isApproved: PairingRepo["isApproved"] = notBuilt("pairing.isApproved");
  readonly listPending: PairingRepo["listPending"] = notBuilt("pairing.listPending");
  readonly listApproved: PairingRepo["listApproved"] = notBuilt("pairing.listApproved");
  readonly revoke: PairingRepo["revoke"] = notBuilt("pairing.revoke");
}
