/** PostgreSQL: RunRepo (being built for #27: every method not built yet throws). */
import type { RunRepo } from "../repos/run-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import type { RunRecord } from "../repos/run-repo.js";
import { notBuilt } from "./not-built.js";

/** The RunRepo on PostgreSQL. */
export class PgRunRepo implements RunRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly get: RunRepo["get"] = notBuilt("run.get");
  readonly recent: RunRepo["recent"] = notBuilt("run.recent");
  readonly countByOutcome: RunRepo["countByOutcome"] = notBuilt("run.countByOutcome");

  /** For commitTurn: whether a run with this id was committed. */
  readonly existsIn: (tx: PgRunner, runId: string) => Promise<boolean> = notBuilt("run.existsIn");
  /** For commitTurn: the run's row (and its attempts). */
  readonly insertIn: (tx: PgRunner, run: RunRecord, now: number) => Promise<void> = notBuilt("run.insertIn");
}
