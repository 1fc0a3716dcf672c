/**
 * The PostgreSQL store's access to its database: a `pg` pool, statements outside a transaction
 * (each atomic on its own), and `tx`, which runs a function in one SERIALIZABLE transaction and
 * runs it again when PostgreSQL reports a serialization failure or a deadlock. SERIALIZABLE is
 * what SQLite's single writer gave every repository method for free (a check and the write it
 * guards see one state), so the repositories keep the same logic; a retried function must not
 * change anything outside the database before it returns.
 *
 * Every failure becomes a StoreError naming the store and the cause (see pgStoreError).
 */
import pg from "pg";
import { StoreError } from "../store-error.js";
import { PgTxRunner } from "./pg-tx-runner.js";

/** Something statements can run on: the pool or a transaction's client. */
export interface PgRunner {
  /** The rows of `sql` with `$1…` bound to `params`. */
  rows<R>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** The first row, or undefined. */
  row<R>(sql: string, params?: readonly unknown[]): Promise<R | undefined>;
  /** Runs `sql`; resolves the rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * Runs `sql`, a write whose result is not needed. In a transaction it may be sent later,
   * with the transaction's next statement or its COMMIT (see PgTxRunner); a failure then fails
   * the transaction there.
   */
  exec(sql: string, params?: readonly unknown[]): Promise<void>;
}

/** Transaction attempts before a serialization failure is reported (`locked`). */
const MAX_ATTEMPTS = 12;
/** SQLSTATEs after which the whole transaction is run again. */
const RETRY_CODES = new Set(["40001", "40P01"]);
/**
 * A unique violation: under SERIALIZABLE, two transactions that each read "the next number is
 * N" (a max, a count) and insert it conflict on the unique index, which PostgreSQL reports as
 * 23505, not 40001, unless the very key was read. Run again a few times like a serialization
 * failure: a real duplicate fails the same way each time and is then reported (`conflict`).
 */
const UNIQUE_VIOLATION = "23505";
const MAX_UNIQUE_ATTEMPTS = 4;

/** int8 (count, ids, epoch ms) and numeric (sums) as JS numbers: every value here is < 2^53. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/** Where and how to connect. */
export interface PgDbOptions {
  /** `postgres://user:pass@host:5432/db` */
  url: string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** A schema to use instead of `public` (tests give each store its own). */
  schema?: string;
  /** How long a connection attempt may take, in ms (default 5000). */
  connectTimeoutMs?: number;
}

/** Owns the pool of one PostgreSQL store (see the file header). */
export class PgDb implements PgRunner {
  /** `host:port/database` for messages: never the password. */
  readonly label: string;
  readonly #pool: pg.Pool;
  #closed = false;

  constructor(options: PgDbOptions) {
    this.label = labelOf(options.url);
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      types,
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    });
    // An idle client's connection dropping (the server restarted) must not kill the process:
    // the pool discards it and the next query connects again.
    this.#pool.on("error", () => {});
  }

  async rows<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    try {
      return (await this.#pool.query(sql, params as unknown[])).rows as R[];
    } catch (err) {
      throw pgStoreError(this.label, err);
    }
  }

  async row<R>(sql: string, params: readonly unknown[] = []): Promise<R | undefined> {
    return (await this.rows<R>(sql, params))[0];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    try {
      return (await this.#pool.query(sql, params as unknown[])).rowCount ?? 0;
    } catch (err) {
      throw pgStoreError(this.label, err);
    }
  }

  async exec(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.run(sql, params);
  }

  /**
   * Runs `fn` in one SERIALIZABLE transaction, again (up to 12 attempts) when it fails with a
   * serialization failure or a deadlock, after a random pause under a ceiling that doubles from
   * 8 ms to 250 ms (about 1.8 s at most in all): transactions that collided once collide again
   * if they are run again at once, as several busy nodes showed. The connection goes back to
   * the pool during the pause. Resolves what `fn` resolved once the transaction committed.
   */
  async tx<T>(fn: (tx: PgRunner) => Promise<T>): Promise<T> {
    let pauseMs = 0;
    for (let attempt = 1; ; attempt++) {
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      let client: pg.PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (err) {
        throw pgStoreError(this.label, err);
      }
      let broken = false;
      // BEGIN goes with the first statement, waiting writes with COMMIT (see PgTxRunner).
      const runner = new PgTxRunner(client);
      try {
        const value = await fn(runner);
        await runner.commit();
        return value;
      } catch (err) {
        if (runner.sentAny)
          await client.query("ROLLBACK").catch(() => {
            broken = true; // the connection itself failed: do not give it back
          });
        const code = sqlState(err);
        const again =
          (code !== undefined && RETRY_CODES.has(code) && attempt < MAX_ATTEMPTS) ||
          (code === UNIQUE_VIOLATION && attempt < MAX_UNIQUE_ATTEMPTS);
        if (again) {
          pauseMs = Math.random() * Math.min(250, 4 * 2 ** attempt);
          continue;
        }
        throw err instanceof StoreError ? err : pgStoreError(this.label, err);
      } finally {
        client.release(broken);
      }
    }
  }

  /** A connection of its own, outside the pool (LISTEN). */
  async connect(): Promise<pg.PoolClient> {
    try {
      return await this.#pool.connect();
    } catch (err) {
      throw pgStoreError(this.label, err);
    }
  }

  /** Closes the pool; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }
}

/** The SQLSTATE of a PostgreSQL error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** `host:port/database` of a URL, without credentials. */
export function labelOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return "(an unparsable store.url)";
  }
}

/**
 * A StoreError for a failure of the PostgreSQL store at `label`: the server unreachable or gone
 * (`unavailable`), a refused login (`unavailable`, saying so), the disk full, a read-only
 * server, serialization failures that kept coming (`locked`), a duplicate key (`conflict`),
 * anything else `io`.
 */
export function pgStoreError(label: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = sqlState(err);
  const sys = (err as { code?: unknown } | null)?.code;
  const at = `the PostgreSQL store at ${label}`;
  if (code === "28P01" || code === "28000")
    return new StoreError("unavailable", `${at} refused the login: ${message}`, { cause: err });
  if (code === "3D000")
    return new StoreError("unavailable", `${at} has no such database: ${message}`, { cause: err });
  if (
    (code !== undefined && (code.startsWith("08") || code === "57P01" || code === "57P03")) ||
    sys === "ECONNREFUSED" ||
    sys === "ECONNRESET" ||
    sys === "ENOTFOUND" ||
    sys === "EAI_AGAIN" ||
    sys === "ETIMEDOUT" ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      message,
    )
  )
    return new StoreError("unavailable", `${at} is unreachable: ${message}`, { cause: err });
  if (code === "53100")
    return new StoreError("disk_full", `${at} is out of disk space: ${message}`, { cause: err });
  if (code === "25006") return new StoreError("read_only", `${at} is read-only: ${message}`, { cause: err });
  if (code === UNIQUE_VIOLATION)
    return new StoreError("conflict", `${at} refused a duplicate: ${message}`, { cause: err });
  if (code !== undefined && RETRY_CODES.has(code))
    return new StoreError("locked", `${at} kept reporting conflicting transactions: ${message}`, {
      cause: err,
    });
  return new StoreError("io", `${at} failed: ${message}`, { cause: err });
}
