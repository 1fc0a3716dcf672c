/** PostgreSQL: TranscriptRepo (being built for #27: every method not built yet throws). */
import type { TranscriptRepo } from "../repos/transcript-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import type { TranscriptPayload } from "../repos/transcript-repo.js";
import { notBuilt } from "./not-built.js";

/** The TranscriptRepo on PostgreSQL. */
export class PgTranscriptRepo implements TranscriptRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly append: TranscriptRepo["append"] = notBuilt("transcript.append");
  readonly tail: TranscriptRepo["tail"] = notBuilt("transcript.tail");

  /** For claims and commitTurn, inside their transaction: the append itself. */
  readonly appendIn: (
    tx: PgRunner,
    sessionKey: string,
    sessionId: string,
    runId: string | null,
    payloads: readonly TranscriptPayload[],
    now: number,
  ) => Promise<void> = notBuilt("transcript.appendIn");
}
