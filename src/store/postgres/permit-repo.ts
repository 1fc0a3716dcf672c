/**
 * PermitRepo on PostgreSQL (schema v3): the tables model_permits and permit_demands. Each try
 * is one SERIALIZABLE transaction (PgDb.tx), so two nodes counting the same free permit cannot
 * both insert: one of them is run again and sees the other's row.
 */
import type { PermitAnswer, PermitCensus, PermitRepo, PermitRequest } from "../repos/permit-repo.js";
import {
  PERMIT_RANK,
  assertCall,
  assertPermitRequest,
  decidePermit,
  permitPriority,
} from "../rows/permit-rules.js";
import type { PgDb } from "./pg-db.js";

/** The cluster's model-call permits on PostgreSQL. */
export class PgPermitRepo implements PermitRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async tryAcquire(r: PermitRequest): Promise<PermitAnswer> {
    assertPermitRequest(r);
    const until = r.now + r.ttlMs;
    const rank = PERMIT_RANK[r.priority];
    return this.#db.tx(async (tx) => {
      const own = await tx.run(
        "UPDATE model_permits SET lease_until = $3 WHERE owner = $1 AND call_id = $2 AND lease_until > $4",
        [r.owner, r.callId, until, r.now],
      );
      if (own > 0) return { granted: true, leaseUntil: until };
      // Expired rows are free: gone before counting, so a dead node's permit is not in the way.
      await tx.run("DELETE FROM model_permits WHERE lease_until <= $1", [r.now]);
      await tx.run("DELETE FROM permit_demands WHERE lease_until <= $1", [r.now]);
      const live = await tx.row<{ n: number }>("SELECT count(*)::int AS n FROM model_permits", []);
      const outranking = await tx.row<{ n: number }>(
        `SELECT count(*)::int AS n FROM permit_demands WHERE priority > $3
           AND NOT (owner = $1 AND call_id = $2)`,
        [r.owner, r.callId, rank],
      );
      const answer = decidePermit(r, live?.n ?? 0, outranking?.n ?? 0);
      if (answer.granted) {
        await tx.run(
          `INSERT INTO model_permits (owner, call_id, priority, granted_at, lease_until)
             VALUES ($1, $2, $3, $4, $5)`,
          [r.owner, r.callId, rank, r.now, until],
        );
        await tx.run("DELETE FROM permit_demands WHERE owner = $1 AND call_id = $2", [r.owner, r.callId]);
      } else {
        await tx.run(
          `INSERT INTO permit_demands (owner, call_id, priority, since, lease_until)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (owner, call_id) DO UPDATE SET priority = excluded.priority, lease_until = excluded.lease_until`,
          [r.owner, r.callId, rank, r.now, until],
        );
      }
      return answer;
    });
  }

  async release(owner: string, callId: string): Promise<boolean> {
    assertCall(owner, callId);
    return this.#db.tx(async (tx) => {
      await tx.run("DELETE FROM permit_demands WHERE owner = $1 AND call_id = $2", [owner, callId]);
      return (
        (await tx.run("DELETE FROM model_permits WHERE owner = $1 AND call_id = $2", [owner, callId])) > 0
      );
    });
  }

  async withdraw(owner: string, callId: string): Promise<boolean> {
    assertCall(owner, callId);
    return (
      (await this.#db.run("DELETE FROM permit_demands WHERE owner = $1 AND call_id = $2", [owner, callId])) >
      0
    );
  }

  async renew(owner: string, callIds: readonly string[], now: number, ttlMs: number): Promise<number> {
    if (callIds.length === 0) return 0;
    const params = [owner, [...callIds], now, now + ttlMs];
    return this.#db.tx(async (tx) => {
      await tx.run(
        `UPDATE permit_demands SET lease_until = $4
           WHERE owner = $1 AND lease_until > $3 AND call_id = ANY($2::text[])`,
        params,
      );
      return tx.run(
        `UPDATE model_permits SET lease_until = $4
           WHERE owner = $1 AND lease_until > $3 AND call_id = ANY($2::text[])`,
        params,
      );
    });
  }

  async releaseOwner(owner: string): Promise<number> {
    return this.#db.tx(
      async (tx) =>
        (await tx.run("DELETE FROM model_permits WHERE owner = $1", [owner])) +
        (await tx.run("DELETE FROM permit_demands WHERE owner = $1", [owner])),
    );
  }

  async census(now: number): Promise<PermitCensus> {
    const census: PermitCensus = { permits: {}, demands: { human: 0, normal: 0, background: 0 } };
    const permits = await this.#db.rows<{ owner: string; n: number }>(
      "SELECT owner, count(*)::int AS n FROM model_permits WHERE lease_until > $1 GROUP BY owner",
      [now],
    );
    for (const r of permits) census.permits[r.owner] = r.n;
    const demands = await this.#db.rows<{ priority: number; n: number }>(
      "SELECT priority, count(*)::int AS n FROM permit_demands WHERE lease_until > $1 GROUP BY priority",
      [now],
    );
    for (const r of demands) census.demands[permitPriority(r.priority)] += r.n;
    return census;
  }
}
