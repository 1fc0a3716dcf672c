/**
 * `switchyard db status|migrate` on both engines, as a person runs them: SQLite in a home folder
 * (none yet, then created by migrate), and PostgreSQL on a throwaway cluster (`store.engine:
 * postgres`, the URL from `${DATABASE_URL}`): behind, migrated, up to date, a database newer than
 * the binary refused naming both versions. And the gateway's start on an unreachable PostgreSQL:
 * one line naming the store and the cause, exit 1.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgDb } from "../../src/store/postgres/pg-db.js";
import { PG_SCHEMA_VERSION } from "../../src/store/postgres/pg-migrations.js";
import { LATEST_SCHEMA_VERSION } from "../../src/store/sqlite/migrations.js";
import { type TestPostgres, startPostgres } from "../helpers/postgres.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/** A cwd whose switchyard.yaml holds `yaml`, and a home. */
function setup(yaml = ""): { cwd: string; home: string } {
  const cwd = tempDir();
  writeFileSync(join(cwd, "switchyard.yaml"), yaml);
  return { cwd, home: tempDir() };
}

const POSTGRES = "store:\n  engine: postgres\n  url: ${DATABASE_URL}\n";

describe("switchyard db", () => {
  it("SQLite: a home without a database is at version 0; migrate creates it; then it is up to date", async () => {
    const s = setup();
    const before = await runCli(["db", "status", "--home", s.home], { cwd: s.cwd });
    expect(before.code).toBe(0);
    expect(before.out).toContain(`sqlite ${join(s.home, "switchyard.db")}: schema version 0, behind`);
    const migrated = await runCli(["db", "migrate", "--home", s.home], { cwd: s.cwd });
    expect(migrated.code).toBe(0);
    expect(migrated.out).toContain(`migrated from schema version 0 to ${LATEST_SCHEMA_VERSION}`);
    const after = await runCli(["db", "status", "--json", "--home", s.home], { cwd: s.cwd });
    expect(JSON.parse(after.out)).toMatchObject({
      engine: "sqlite",
      version: LATEST_SCHEMA_VERSION,
      known: LATEST_SCHEMA_VERSION,
    });
  });

  it("PostgreSQL: status names the server and the version; migrate once, then already there; the password never shows", async () => {
    const s = setup(POSTGRES);
    const url = (await server.createDatabase("cli")).replace("postgres@", "postgres:hunter2@");
    const env = { DATABASE_URL: url };
    const before = await runCli(["db", "status", "--home", s.home], { cwd: s.cwd, env });
    expect(before.code).toBe(0);
    expect(before.out).toMatch(
      /^postgres 127\.0\.0\.1:\d+\/cli \(server 1\d\.\d+\): schema version 0, behind/,
    );
    const migrated = await runCli(["db", "migrate", "--home", s.home], { cwd: s.cwd, env });
    expect(migrated.out).toContain(`migrated from schema version 0 to ${PG_SCHEMA_VERSION}`);
    const again = await runCli(["db", "migrate", "--home", s.home], { cwd: s.cwd, env });
    expect(again.out).toContain(`already at schema version ${PG_SCHEMA_VERSION}`);
    expect(`${before.out}${before.err}${migrated.out}${again.out}`).not.toContain("hunter2");

    // A database a newer switchyard migrated: status says so (exit 1), migrate refuses.
    const db = new PgDb({ url });
    await db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)", [
      PG_SCHEMA_VERSION + 1,
    ]);
    await db.close();
    const newer = await runCli(["db", "status", "--home", s.home], { cwd: s.cwd, env });
    expect(newer.code).toBe(1);
    expect(newer.out).toContain(`schema version ${PG_SCHEMA_VERSION + 1}, newer than this switchyard knows`);
    const refused = await runCli(["db", "migrate", "--home", s.home], { cwd: s.cwd, env });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`newer than this switchyard knows (${PG_SCHEMA_VERSION})`);
  }, 120_000);

  it("doctor checks PostgreSQL: the server, its version, the schema level; an unreachable one fails", async () => {
    const s = setup(POSTGRES);
    const url = await server.createDatabase("doctor");
    const behind = await runCli(["doctor", "--home", s.home], { cwd: s.cwd, env: { DATABASE_URL: url } });
    expect(behind.out).toMatch(
      /database.*PostgreSQL 127\.0\.0\.1:\d+\/doctor \(server 1\d\.\d+\) is at schema v0; the gateway migrates it/,
    );
    await runCli(["db", "migrate", "--home", s.home], { cwd: s.cwd, env: { DATABASE_URL: url } });
    const ok = await runCli(["doctor", "--home", s.home], { cwd: s.cwd, env: { DATABASE_URL: url } });
    expect(ok.out).toMatch(
      new RegExp(`database.*/doctor \\(server 1\\d\\.\\d+\\) connects \\(schema v${PG_SCHEMA_VERSION}\\)`),
    );
    const dead = await runCli(["doctor", "--home", s.home], {
      cwd: s.cwd,
      env: { DATABASE_URL: "postgres://me:hunter2@127.0.0.1:1/x" },
    });
    expect(dead.code).toBe(1);
    expect(dead.out).toContain("the PostgreSQL store at 127.0.0.1:1/x is unreachable");
    expect(dead.out).not.toContain("hunter2");
  }, 120_000);

  it("the gateway on an unreachable PostgreSQL exits 1 with one line naming the store and the cause", async () => {
    const s = setup(POSTGRES);
    const res = await runCli(["gateway", "--port", "0", "--home", s.home], {
      cwd: s.cwd,
      env: { DATABASE_URL: "postgres://me:hunter2@127.0.0.1:1/switchyard" },
    });
    expect(res.code).toBe(1);
    expect(res.err).toMatch(/the PostgreSQL store at 127\.0\.0\.1:1\/switchyard is unreachable: /);
    expect(res.err).not.toContain("hunter2");
    expect(res.err).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("a postgres engine without a url is a configuration error naming store.url", async () => {
    const s = setup("store:\n  engine: postgres\n");
    const res = await runCli(["db", "status", "--home", s.home], { cwd: s.cwd });
    expect(res.code).toBe(2);
    expect(res.err).toContain("store.url");
  });
});
