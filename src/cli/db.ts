/**
 * `switchyard db status|migrate [--config PATH] [--home DIR] [--json]`: the store the
 * configuration names (`store.engine`: the SQLite file in the home folder, or PostgreSQL at
 * `store.url`), the schema version it is at against the one this binary knows, and (migrate)
 * bringing it up to date — under PostgreSQL's advisory lock, so it is safe while gateways run
 * on other nodes. A database newer than the binary: exit 1, naming both versions.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Config } from "../config/schema.js";
import { LATEST_SCHEMA_VERSION as SCHEMA_VERSION } from "../store/sqlite/migrations.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { StoreError } from "../store/store-error.js";
import { databasePath } from "./open-database.js";
import { UsageError, parseOrUsage, runSubcommand, subcommandHome } from "./subcommand.js";

const USAGE_LINE =
  "usage: switchyard db status [--json] | migrate | copy --from sqlite --to postgres [--config PATH] [--home DIR]";

const FLAGS = {
  json: { type: "boolean", default: false },
  from: { type: "string" },
  to: { type: "string" },
  config: { type: "string" },
  home: { type: "string" },
} as const;

/** What `db status` reports. */
export interface DbStatus {
  engine: "sqlite" | "postgres";
  /** The file, or `host:port/database` (never the password). */
  where: string;
  /** The database's schema version (0: not created yet). */
  version: number;
  /** The newest version this binary knows. */
  known: number;
  /** PostgreSQL's server version, e.g. "15.18". */
  server?: string;
}

/** Runs `switchyard db …` (argv after `db`); resolves with the exit code. */
export async function runDb(argv: string[]): Promise<number> {
  return runSubcommand(argv[0] ? `db ${argv[0]}` : "db", () => db(argv));
}

async function db(argv: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage(
    () => parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true }),
    USAGE_LINE,
  );
  const [action, extra] = positionals;
  if (action !== "status" && action !== "migrate" && action !== "copy")
    throw new UsageError(action ? `unknown action "${action}"` : "missing action", USAGE_LINE);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, USAGE_LINE);
  if (action === "copy") return copy(values);
  const { config, home } = subcommandHome(`db ${action}`, values, action === "status");
  const before = await statusOf(config, home);
  if (action === "status") {
    if (values.json) process.stdout.write(`${JSON.stringify(before)}\n`);
    else process.stdout.write(`${describe(before)}\n`);
    return before.version > before.known ? 1 : 0;
  }
  if (before.version > before.known)
    throw new StoreError(
      "schema_too_new",
      `${before.where} is at schema version ${before.version}, newer than this switchyard knows (${before.known}): upgrade switchyard`,
    );
  const after = await migrate(config, home);
  process.stdout.write(
    after === before.version
      ? `${before.where}: already at schema version ${after}\n`
      : `${before.where}: migrated from schema version ${before.version} to ${after}\n`,
  );
  return 0;
}

/** `db copy --from sqlite --to postgres`: the home's SQLite file into `store.url`. */
async function copy(values: { from?: string; to?: string; config?: string; home?: string }): Promise<number> {
  if (values.from !== "sqlite" || values.to !== "postgres")
    throw new UsageError("copy goes --from sqlite --to postgres (the only direction there is)", USAGE_LINE);
  const { config, home } = subcommandHome("db copy", values);
  const url = config.store.url;
  if (url === undefined)
    throw new UsageError(
      "store.url is not set: name the PostgreSQL database to copy into in the configuration",
      USAGE_LINE,
    );
  const { copySqliteToPostgres } = await import("./db-copy.js");
  const report = await copySqliteToPostgres(databasePath(home), url);
  const { labelOf } = await import("../store/postgres/pg-db.js");
  const tables = Object.entries(report.tables)
    .map(([t, n]) => `${t} ${n}`)
    .join(", ");
  process.stdout.write(
    `copied ${report.rows} rows from ${databasePath(home)} to ${labelOf(url)}${tables ? `: ${tables}` : ""}\nset store.engine: postgres to run the gateway on it\n`,
  );
  return 0;
}

/** One line: engine, where, version against the known one. */
function describe(s: DbStatus): string {
  const state =
    s.version === s.known
      ? "up to date"
      : s.version > s.known
        ? `newer than this switchyard knows (${s.known}): upgrade switchyard`
        : `behind (this switchyard knows ${s.known}): the gateway migrates it at start, or run switchyard db migrate`;
  return `${s.engine} ${s.where}${s.server ? ` (server ${s.server})` : ""}: schema version ${s.version}, ${state}`;
}

/** The store's state without changing it. */
async function statusOf(config: Config, home: string): Promise<DbStatus> {
  if (config.store.engine === "postgres" && config.store.url !== undefined) {
    const { PgDb } = await import("../store/postgres/pg-db.js");
    const { PG_SCHEMA_VERSION, pgSchemaVersion } = await import("../store/postgres/pg-migrations.js");
    const pg = new PgDb({ url: config.store.url, poolSize: 1 });
    try {
      const server = await pg.row<{ v: string }>("SELECT current_setting('server_version') AS v");
      return {
        engine: "postgres",
        where: pg.label,
        version: await pgSchemaVersion(pg),
        known: PG_SCHEMA_VERSION,
        server: (server?.v ?? "").split(" ")[0] ?? "",
      };
    } finally {
      await pg.close();
    }
  }
  const path = databasePath(home);
  if (!existsSync(path)) return { engine: "sqlite", where: path, version: 0, known: SCHEMA_VERSION };
  const BetterSqlite3 = (await import("better-sqlite3")).default;
  const file = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    const version = Number(file.pragma("user_version", { simple: true }));
    return { engine: "sqlite", where: path, version, known: SCHEMA_VERSION };
  } finally {
    file.close();
  }
}

/** Brings the store to this binary's version; resolves the version it is at. */
async function migrate(config: Config, home: string): Promise<number> {
  if (config.store.engine === "postgres" && config.store.url !== undefined) {
    const { openPgStore } = await import("../store/postgres/open-pg-store.js");
    const store = await openPgStore({ url: config.store.url, poolSize: 1 });
    await store.close();
    return store.schemaVersion();
  }
  const store = openSqliteStore({ path: databasePath(home) });
  const version = store.schemaVersion();
  await store.close();
  return version;
}
