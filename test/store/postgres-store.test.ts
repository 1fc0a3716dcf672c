/**
 * The PostgreSQL store's own cases on a throwaway cluster (test/helpers/postgres.ts): opening a
 * wrong URL, an unreachable server, a missing database, a database newer than the binary, and
 * several stores migrating one database at once. (The Store contract runs in
 * postgres-contract.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPgStore } from "../../src/store/postgres/open-pg-store.js";
import { PgDb } from "../../src/store/postgres/pg-db.js";
import { PG_MIGRATIONS, PG_SCHEMA_VERSION, pgSchemaVersion } from "../../src/store/postgres/pg-migrations.js";
import { StoreError } from "../../src/store/store-error.js";
import { type TestPostgres, startPostgres } from "../helpers/postgres.js";

let server: TestPostgres;
let url = "";

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase("contract");
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

/** The StoreError `fn` rejected with. */
async function storeErrorOf(fn: () => Promise<unknown>): Promise<StoreError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return err as StoreError;
  }
  throw new Error("expected a StoreError");
}

describe("PostgreSQL store: opening", () => {
  it("names a URL that is no postgres:// URL, without its password", async () => {
    const err = await storeErrorOf(() => openPgStore({ url: "mysql://me:secret@db/x" }));
    expect(err.code).toBe("unavailable");
    expect(err.message).toContain("store.url must be a postgres:// URL");
    expect(err.message).not.toContain("secret");
  });

  it("names an unreachable server and a missing database in one line, without the password", async () => {
    const dead = await storeErrorOf(() => openPgStore({ url: "postgres://me:secret@127.0.0.1:1/x" }));
    expect(dead.code).toBe("unavailable");
    expect(dead.message).toMatch(/^the PostgreSQL store at 127\.0\.0\.1:1\/x is unreachable: /);
    expect(dead.message).not.toContain("secret");
    expect(dead.message).not.toContain("\n");
    const missing = await storeErrorOf(() => openPgStore({ url: `${url}-missing` }));
    expect(missing.message).toContain("has no such database");
  });

  it("several stores opening one empty database together migrate it once", async () => {
    const db = await server.createDatabase("together");
    const stores = await Promise.all([1, 2, 3].map(() => openPgStore({ url: db, poolSize: 2 })));
    expect(stores.map((s) => s.schemaVersion())).toEqual([
      PG_SCHEMA_VERSION,
      PG_SCHEMA_VERSION,
      PG_SCHEMA_VERSION,
    ]);
    const check = new PgDb({ url: db });
    const rows = await check.rows<{ version: number }>("SELECT version FROM schema_migrations");
    // Each version once, though three stores migrated at the same time.
    expect(rows.map((r) => r.version).sort()).toEqual(PG_MIGRATIONS.map((m) => m.version));
    expect(await pgSchemaVersion(check)).toBe(PG_SCHEMA_VERSION);
    await check.close();
    await Promise.all(stores.map((s) => s.close()));
  });

  it("refuses a database at a newer schema version, naming both versions", async () => {
    const db = await server.createDatabase("newer");
    const first = await openPgStore({ url: db });
    await first.db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)", [
      PG_SCHEMA_VERSION + 5,
    ]);
    await first.close();
    const err = await storeErrorOf(() => openPgStore({ url: db }));
    expect(err.code).toBe("schema_too_new");
    expect(err.message).toContain(
      `schema version ${PG_SCHEMA_VERSION + 5}, newer than this switchyard knows (${PG_SCHEMA_VERSION})`,
    );
  });
});

describe("PostgreSQL store: batched transaction statements", () => {
  it("values sent as literals with a batched write come back exactly; a NUL still goes as a parameter", async () => {
    const db = new PgDb({ url: await server.createDatabase() });
    try {
      await db.run("CREATE TABLE t (id bigint PRIMARY KEY, s text, n double precision, b boolean)");
      const tricky = "it's \\ a 'quote' \\' $1 $$ ü 🙂\nnew line";
      const row = await db.tx(async (tx) => {
        await tx.exec("INSERT INTO t (id, s, n, b) VALUES ($1, $2, $3, $4)", [1, tricky, 1.5, true]);
        await tx.exec("INSERT INTO t (id, s, n, b) VALUES ($1, $2, $3, $4)", [2, null, -3, false]);
        return tx.rows<{ id: number; s: string | null; n: number; b: boolean }>(
          "SELECT * FROM t ORDER BY id",
        );
      });
      expect(row).toEqual([
        { id: 1, s: tricky, n: 1.5, b: true },
        { id: 2, s: null, n: -3, b: false },
      ]);
      const err = await storeErrorOf(() =>
        db.tx((tx) => tx.exec("INSERT INTO t (id, s) VALUES ($1, $2)", [3, "a\u0000b"])),
      );
      expect(err.code).toBe("io");
    } finally {
      await db.close();
    }
  });

  it("a batched write that fails fails its transaction at COMMIT, and nothing of it is kept", async () => {
    const db = new PgDb({ url: await server.createDatabase() });
    try {
      await db.run("CREATE TABLE t (id bigint PRIMARY KEY)");
      await db.run("INSERT INTO t (id) VALUES (1)");
      const err = await storeErrorOf(() =>
        db.tx(async (tx) => {
          await tx.exec("INSERT INTO t (id) VALUES ($1)", [2]);
          await tx.exec("INSERT INTO t (id) VALUES ($1)", [1]);
        }),
      );
      expect(err.code).toBe("conflict");
      expect(await db.rows("SELECT id FROM t ORDER BY id")).toEqual([{ id: 1 }]);
    } finally {
      await db.close();
    }
  });
});
