/** PostgreSQL: AssignmentRepo, LearningRepo (being built for #27: every method not built yet throws). */
import type { AssignmentRepo, LearningRepo } from "../repos/assignment-repo.js";
import type { PgDb } from "./pg-db.js";
import { notBuilt } from "./not-built.js";

/** The AssignmentRepo on PostgreSQL. */
export class PgAssignmentRepo implements AssignmentRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly create: AssignmentRepo["create"] = notBuilt("assignment.create");
  readonly get: AssignmentRepo["get"] = notBuilt("assignment.get");
  readonly bySession: AssignmentRepo["bySession"] = notBuilt("assignment.bySession");
  readonly list: AssignmentRepo["list"] = notBuilt("assignment.list");
  readonly waitingOn: AssignmentRepo["waitingOn"] = notBuilt("assignment.waitingOn");
  readonly answeredBy: AssignmentRepo["answeredBy"] = notBuilt("assignment.answeredBy");
  readonly saveWork: AssignmentRepo["saveWork"] = notBuilt("assignment.saveWork");
  readonly setState: AssignmentRepo["setState"] = notBuilt("assignment.setState");
  readonly startRun: AssignmentRepo["startRun"] = notBuilt("assignment.startRun");
  readonly finishRun: AssignmentRepo["finishRun"] = notBuilt("assignment.finishRun");
  readonly runs: AssignmentRepo["runs"] = notBuilt("assignment.runs");
}

/** The LearningRepo on PostgreSQL. */
export class PgLearningRepo implements LearningRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly record: LearningRepo["record"] = notBuilt("learning.record");
  readonly get: LearningRepo["get"] = notBuilt("learning.get");
  readonly list: LearningRepo["list"] = notBuilt("learning.list");
  readonly setState: LearningRepo["setState"] = notBuilt("learning.setState");
}
