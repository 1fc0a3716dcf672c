/** PostgreSQL: SessionRepo (being built for #27: every method not built yet throws). */
import type { SessionRepo } from "../repos/session-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import type { ChatTarget } from "../../channels/types.js";
import { notBuilt } from "./not-built.js";

/** The SessionRepo on PostgreSQL. */
export class PgSessionRepo implements SessionRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly ensure: SessionRepo["ensure"] = notBuilt("session.ensure");
  readonly get: SessionRepo["get"] = notBuilt("session.get");
  readonly reset: SessionRepo["reset"] = notBuilt("session.reset");
  readonly count: SessionRepo["count"] = notBuilt("session.count");
  readonly setModel: SessionRepo["setModel"] = notBuilt("session.setModel");
  readonly setMode: SessionRepo["setMode"] = notBuilt("session.setMode");
  readonly latestTarget: SessionRepo["latestTarget"] = notBuilt("session.latestTarget");
  readonly keyForTarget: SessionRepo["keyForTarget"] = notBuilt("session.keyForTarget");
  readonly list: SessionRepo["list"] = notBuilt("session.list");

  /** For commitTurn: where the session's replies went last. */
  readonly setLastTargetIn: (
    tx: PgRunner,
    sessionKey: string,
    target: ChatTarget,
    now: number,
  ) => Promise<void> = notBuilt("session.setLastTargetIn");
}
