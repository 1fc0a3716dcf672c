/**
 * The statements of one PgDb transaction, sent in as few round trips as the logic allows. On a
 * local server a round trip costs far more than running a small statement, and a turn's
 * transactions are mostly small statements, so:
 *
 * - BEGIN goes to the server together with the transaction's first statement, and COMMIT
 *   together with whatever is still waiting (one multi-statement simple query each);
 * - `exec` statements (writes whose result the caller does not need) wait and go with the next
 *   statement or with COMMIT, in the order they were made;
 * - a transaction that sent nothing costs no round trip at all.
 *
 * A simple query has no parameters, so a batched statement carries its values as literals:
 * each value quoted with pg's escapeLiteral, NULL for null. A quoted literal is of unknown type
 * until its context decides, exactly as an untyped parameter `$n` (node-postgres sends its
 * parameters untyped), so the statement means the same. Values of any other kind (arrays,
 * objects) are never inlined: the waiting statements are sent first, then the statement with
 * its parameters on its own. The statements given here are the repositories' own SQL, whose
 * only `$` are parameter references.
 *
 * In a multi-statement query PostgreSQL stops at the first failing statement, leaving the
 * transaction aborted (COMMIT is never reached), and reports that failure: a batched write fails
 * its transaction as it would have failed at its own call, only later; PgDb.tx rolls back and
 * runs the transaction again or reports the error as before.
 */
import pg from "pg";
import type { PgRunner } from "./pg-db.js";

/** How every transaction begins (see PgDb.tx for why SERIALIZABLE). */
export const BEGIN = "BEGIN ISOLATION LEVEL SERIALIZABLE";

type Inlinable = string | number | boolean | bigint | null | undefined;

/** Owns the batching of one transaction's statements on its client (see the file header). */
export class PgTxRunner implements PgRunner {
  readonly #client: pg.PoolClient;
  #began = false;
  /** Inlined statements not sent yet, BEGIN first when it has not been sent. */
  #waiting: string[] = [];

  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  /** Whether anything reached the server (a ROLLBACK is then due on failure). */
  get sentAny(): boolean {
    return this.#began;
  }

  async rows<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    return (await this.#query(sql, params)).rows as R[];
  }

  async row<R>(sql: string, params: readonly unknown[] = []): Promise<R | undefined> {
    return (await this.#query(sql, params)).rows[0] as R | undefined;
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.#query(sql, params)).rowCount ?? 0;
  }

  async exec(sql: string, params: readonly unknown[] = []): Promise<void> {
    const inlined = inline(sql, params);
    if (inlined === undefined) await this.#query(sql, params);
    else this.#waiting.push(inlined);
  }

  /** Sends what is waiting with COMMIT; nothing when the transaction sent and made nothing. */
  async commit(): Promise<void> {
    if (!this.#began && this.#waiting.length === 0) return;
    await this.#send([...this.#prefix(), "COMMIT"]);
  }

  /** The statements due before the next one: BEGIN (once) and the waiting writes. */
  #prefix(): string[] {
    const prefix = this.#began ? this.#waiting : [BEGIN, ...this.#waiting];
    this.#began = true;
    this.#waiting = [];
    return prefix;
  }

  async #query(sql: string, params: readonly unknown[]): Promise<pg.QueryResult> {
    const prefix = this.#prefix();
    const inlined = inline(sql, params);
    if (inlined !== undefined) return this.#send([...prefix, inlined]);
    if (prefix.length > 0) await this.#send(prefix);
    return this.#client.query(sql, params as unknown[]);
  }

  /** One simple query of `statements`; the last statement's result. */
  async #send(statements: readonly string[]): Promise<pg.QueryResult> {
    const result = (await this.#client.query(statements.join(";\n"))) as pg.QueryResult | pg.QueryResult[];
    return Array.isArray(result) ? (result.at(-1) as pg.QueryResult) : result;
  }
}

/** `sql` with each `$n` replaced by its value as a literal; undefined if a value cannot be. */
export function inline(sql: string, params: readonly unknown[]): string | undefined {
  const literals: string[] = [];
  for (const value of params) {
    const literal = literalOf(value as Inlinable);
    if (literal === undefined) return undefined;
    literals.push(literal);
  }
  return sql.replace(/\$(\d+)/g, (ref, n: string) => {
    const literal = literals[Number(n) - 1];
    if (literal === undefined)
      throw new TypeError(`statement refers to ${ref}, given ${params.length} values`);
    return literal;
  });
}

function literalOf(value: Inlinable): string | undefined {
  if (value === null || value === undefined) return "NULL";
  switch (typeof value) {
    case "string":
      // A NUL cannot be in a query string: the parameter is refused by the server instead.
      return value.includes("\u0000") ? undefined : pg.escapeLiteral(value);
    case "number":
      return Number.isFinite(value) ? `'${String(value)}'` : undefined;
    case "boolean":
    case "bigint":
      return `'${String(value)}'`;
    default:
      return undefined;
  }
}
