/** PostgreSQL: SubagentRepo (being built for #27: every method not built yet throws). */
import type { SubagentRepo } from "../repos/subagent-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import type { SubagentEnd } from "../repos/subagent-repo.js";
import { notBuilt } from "./not-built.js";

/** The SubagentRepo on PostgreSQL. */
export class PgSubagentRepo implements SubagentRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly spawn: SubagentRepo["spawn"] = notBuilt("subagent.spawn");
  readonly get: SubagentRepo["get"] = notBuilt("subagent.get");
  readonly byChildSession: SubagentRepo["byChildSession"] = notBuilt("subagent.byChildSession");
  readonly listForParent: SubagentRepo["listForParent"] = notBuilt("subagent.listForParent");
  readonly listActive: SubagentRepo["listActive"] = notBuilt("subagent.listActive");
  readonly parentsWithResults: SubagentRepo["parentsWithResults"] = notBuilt("subagent.parentsWithResults");
  readonly start: SubagentRepo["start"] = notBuilt("subagent.start");
  readonly startFrom: SubagentRepo["startFrom"] = notBuilt("subagent.startFrom");
  readonly endCheck: SubagentRepo["endCheck"] = notBuilt("subagent.endCheck");
  readonly cancel: SubagentRepo["cancel"] = notBuilt("subagent.cancel");
  readonly await: SubagentRepo["await"] = notBuilt("subagent.await");
  readonly claimResults: SubagentRepo["claimResults"] = notBuilt("subagent.claimResults");

  /** For commitTurn: the child's end (see SqliteSubagentRepo.finishInTransaction). */
  readonly finishIn: (tx: PgRunner, end: SubagentEnd, runId: string, now: number) => Promise<void> =
    notBuilt("subagent.finishIn");
}
