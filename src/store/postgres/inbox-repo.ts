/** PostgreSQL: InboxRepo (being built for #27: every method not built yet throws). */
import type { InboxRepo } from "../repos/inbox-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import { notBuilt } from "./not-built.js";

/** The InboxRepo on PostgreSQL. */
export class PgInboxRepo implements InboxRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly receive: InboxRepo["receive"] = notBuilt("inbox.receive");
  readonly markQueued: InboxRepo["markQueued"] = notBuilt("inbox.markQueued");
  readonly reject: InboxRepo["reject"] = notBuilt("inbox.reject");
  readonly claim: InboxRepo["claim"] = notBuilt("inbox.claim");
  readonly get: InboxRepo["get"] = notBuilt("inbox.get");
  readonly listUnfinished: InboxRepo["listUnfinished"] = notBuilt("inbox.listUnfinished");
  readonly requeueExpired: InboxRepo["requeueExpired"] = notBuilt("inbox.requeueExpired");
  readonly sessionsWithQueued: InboxRepo["sessionsWithQueued"] = notBuilt("inbox.sessionsWithQueued");
  readonly countByState: InboxRepo["countByState"] = notBuilt("inbox.countByState");
  readonly countRejected: InboxRepo["countRejected"] = notBuilt("inbox.countRejected");
  readonly groupContext: InboxRepo["groupContext"] = notBuilt("inbox.groupContext");
  readonly lastPerChat: InboxRepo["lastPerChat"] = notBuilt("inbox.lastPerChat");

  /** For rejectWithReply, inside its transaction: the row's session, if the row exists. */
  readonly getIn: (tx: PgRunner, id: number) => Promise<{ sessionKey: string } | undefined> =
    notBuilt("inbox.getIn");
  /** For rejectWithReply: received → rejected with `reason`; false when the row was not received. */
  readonly rejectIn: (tx: PgRunner, id: number, reason: string, now: number) => Promise<boolean> =
    notBuilt("inbox.rejectIn");
  /** For commitTurn: whether the row is running under `runId`. */
  readonly isRunningUnderIn: (tx: PgRunner, id: number, runId: string) => Promise<boolean> =
    notBuilt("inbox.isRunningUnderIn");
  /** For commitTurn: running (under `runId`) → final state. */
  readonly finishIn: (
    tx: PgRunner,
    id: number,
    runId: string,
    state: "answered" | "failed",
    error: string | null,
    now: number,
  ) => Promise<void> = notBuilt("inbox.finishIn");
}
