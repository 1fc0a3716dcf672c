/** PostgreSQL: CronRepo (being built for #27: every method not built yet throws). */
import type { CronRepo } from "../repos/cron-repo.js";
import type { PgDb } from "./pg-db.js";
import { notBuilt } from "./not-built.js";

/** The CronRepo on PostgreSQL. */
export class PgCronRepo implements CronRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly add: CronRepo["add"] = notBuilt("cron.add");
  readonly upsertConfig: CronRepo["upsertConfig"] = notBuilt("cron.upsertConfig");
  readonly get: CronRepo["get"] = notBuilt("cron.get");
  readonly byName: CronRepo["byName"] = notBuilt("cron.byName");
  readonly list: CronRepo["list"] = notBuilt("cron.list");
  readonly update: CronRepo["update"] = notBuilt("cron.update");
  readonly remove: CronRepo["remove"] = notBuilt("cron.remove");
  readonly due: CronRepo["due"] = notBuilt("cron.due");
  readonly nextWake: CronRepo["nextWake"] = notBuilt("cron.nextWake");
  readonly version: CronRepo["version"] = notBuilt("cron.version");
  readonly claimSlot: CronRepo["claimSlot"] = notBuilt("cron.claimSlot");
  readonly recordSkipped: CronRepo["recordSkipped"] = notBuilt("cron.recordSkipped");
  readonly claimRetry: CronRepo["claimRetry"] = notBuilt("cron.claimRetry");
  readonly dueRetries: CronRepo["dueRetries"] = notBuilt("cron.dueRetries");
  readonly staleRunning: CronRepo["staleRunning"] = notBuilt("cron.staleRunning");
  readonly started: CronRepo["started"] = notBuilt("cron.started");
  readonly finish: CronRepo["finish"] = notBuilt("cron.finish");
  readonly setReceipt: CronRepo["setReceipt"] = notBuilt("cron.setReceipt");
  readonly history: CronRepo["history"] = notBuilt("cron.history");
}
