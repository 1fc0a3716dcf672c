/** PostgreSQL: UsageRepo (being built for #27: every method not built yet throws). */
import type { UsageRepo } from "../repos/usage-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import type { RunRecord } from "../repos/run-repo.js";
import { notBuilt } from "./not-built.js";

/** The UsageRepo on PostgreSQL. */
export class PgUsageRepo implements UsageRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly byDay: UsageRepo["byDay"] = notBuilt("usage.byDay");
  readonly summarize: UsageRepo["summarize"] = notBuilt("usage.summarize");
  readonly totalsSince: UsageRepo["totalsSince"] = notBuilt("usage.totalsSince");
  readonly sessionTokensSince: UsageRepo["sessionTokensSince"] = notBuilt("usage.sessionTokensSince");
  readonly byProfileSince: UsageRepo["byProfileSince"] = notBuilt("usage.byProfileSince");
  readonly billedTotals: UsageRepo["billedTotals"] = notBuilt("usage.billedTotals");

  /** For commitTurn: the day's totals and one usage row per model call (run.calls). */
  readonly addRunIn: (tx: PgRunner, run: RunRecord) => Promise<void> = notBuilt("usage.addRunIn");
}
