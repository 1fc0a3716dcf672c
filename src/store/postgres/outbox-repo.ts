/** PostgreSQL: OutboxRepo (being built for #27: every method not built yet throws). */
import type { OutboxRepo } from "../repos/outbox-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import type { OutboxInsert } from "../repos/outbox-repo.js";
import { notBuilt } from "./not-built.js";

/** The OutboxRepo on PostgreSQL. */
export class PgOutboxRepo implements OutboxRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly claimDue: OutboxRepo["claimDue"] = notBuilt("outbox.claimDue");
  readonly markSent: OutboxRepo["markSent"] = notBuilt("outbox.markSent");
  readonly markRetry: OutboxRepo["markRetry"] = notBuilt("outbox.markRetry");
  readonly markDead: OutboxRepo["markDead"] = notBuilt("outbox.markDead");
  readonly expireOlderThan: OutboxRepo["expireOlderThan"] = notBuilt("outbox.expireOlderThan");
  readonly resetExpired: OutboxRepo["resetExpired"] = notBuilt("outbox.resetExpired");
  readonly get: OutboxRepo["get"] = notBuilt("outbox.get");
  readonly listForInbox: OutboxRepo["listForInbox"] = notBuilt("outbox.listForInbox");
  readonly listForRun: OutboxRepo["listForRun"] = notBuilt("outbox.listForRun");
  readonly insert: OutboxRepo["insert"] = notBuilt("outbox.insert");
  readonly listMailbox: OutboxRepo["listMailbox"] = notBuilt("outbox.listMailbox");
  readonly mailboxEnd: OutboxRepo["mailboxEnd"] = notBuilt("outbox.mailboxEnd");
  readonly listByState: OutboxRepo["listByState"] = notBuilt("outbox.listByState");
  readonly countByState: OutboxRepo["countByState"] = notBuilt("outbox.countByState");
  readonly nextDueAt: OutboxRepo["nextDueAt"] = notBuilt("outbox.nextDueAt");

  /** For commitTurn and rejectWithReply, inside their transaction: the reply rows, in chunk order. */
  readonly insertIn: (
    tx: PgRunner,
    rows: readonly OutboxInsert[],
    owner: { sessionKey: string; runId: string | null; inboxId: number | null },
    now: number,
  ) => Promise<void> = notBuilt("outbox.insertIn");
}
