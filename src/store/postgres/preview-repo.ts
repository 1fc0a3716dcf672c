/** PostgreSQL: PreviewRepo (being built for #27: every method not built yet throws). */
import type { PreviewRepo } from "../repos/preview-repo.js";
import type { PgDb } from "./pg-db.js";
import { notBuilt } from "./not-built.js";

/** The PreviewRepo on PostgreSQL. */
export class PgPreviewRepo implements PreviewRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  get db(): PgDb {
    return this.#db;
  }

  readonly record: PreviewRepo["record"] = notBuilt("preview.record");
  readonly list: PreviewRepo["list"] = notBuilt("preview.list");
  readonly forget: PreviewRepo["forget"] = notBuilt("preview.forget");
}
