/**
 * PermitRepo in SQLite (schema v19): the tables model_permits and permit_demands, each try one
 * immediate transaction, so the count and the insert of two processes never interleave.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { PermitAnswer, PermitCensus, PermitRepo, PermitRequest } from "../repos/permit-repo.js";
import {
  PERMIT_RANK,
  assertCall,
  assertPermitRequest,
  decidePermit,
  permitPriority,
} from "../rows/permit-rules.js";
import { guard } from "./errors.js";

type Call = { owner: string; callId: string };

/** The cluster's model-call permits in one SQLite database (shared by its processes). */
export class SqlitePermitRepo implements PermitRepo {
  readonly #path: string;
  readonly #purge: Statement<[{ now: number }]>;
  readonly #purgeDemands: Statement<[{ now: number }]>;
  readonly #extendOwn: Statement<[Call & { until: number; now: number }]>;
  readonly #live: Statement<[{ now: number }], { n: number }>;
  readonly #outranking: Statement<[Call & { now: number; rank: number }], { n: number }>;
  readonly #grant: Statement<[Call & { rank: number; now: number; until: number }]>;
  readonly #demand: Statement<[Call & { rank: number; now: number; until: number }]>;
  readonly #dropDemand: Statement<[Call]>;
  readonly #dropPermit: Statement<[Call]>;
  readonly #renewPermits: Statement<[{ owner: string; ids: string; now: number; until: number }]>;
  readonly #renewDemands: Statement<[{ owner: string; ids: string; now: number; until: number }]>;
  readonly #dropOwnerPermits: Statement<[string]>;
  readonly #dropOwnerDemands: Statement<[string]>;
  readonly #livePermits: Statement<[{ now: number }], { owner: string; n: number }>;
  readonly #liveDemands: Statement<[{ now: number }], { priority: number; n: number }>;
  readonly #tryTx: Transaction<(r: PermitRequest) => PermitAnswer>;
  readonly #releaseTx: Transaction<(c: Call) => boolean>;
  readonly #renewTx: Transaction<(owner: string, ids: string, now: number, until: number) => number>;
  readonly #releaseOwnerTx: Transaction<(owner: string) => number>;

  constructor(db: Database, path: string) {
    this.#path = path;
    this.#purge = db.prepare("DELETE FROM model_permits WHERE lease_until <= @now");
    this.#purgeDemands = db.prepare("DELETE FROM permit_demands WHERE lease_until <= @now");
    this.#extendOwn = db.prepare(
      "UPDATE model_permits SET lease_until = @until WHERE owner = @owner AND call_id = @callId AND lease_until > @now",
    );
    this.#live = db.prepare("SELECT count(*) AS n FROM model_permits WHERE lease_until > @now");
    this.#outranking = db.prepare(
      `SELECT count(*) AS n FROM permit_demands WHERE lease_until > @now AND priority > @rank
         AND NOT (owner = @owner AND call_id = @callId)`,
    );
    this.#grant = db.prepare(
      `INSERT INTO model_permits (owner, call_id, priority, granted_at, lease_until)
         VALUES (@owner, @callId, @rank, @now, @until)`,
    );
    this.#demand = db.prepare(
      `INSERT INTO permit_demands (owner, call_id, priority, since, lease_until)
         VALUES (@owner, @callId, @rank, @now, @until)
         ON CONFLICT (owner, call_id) DO UPDATE SET priority = excluded.priority, lease_until = excluded.lease_until`,
    );
    this.#dropDemand = db.prepare("DELETE FROM permit_demands WHERE owner = @owner AND call_id = @callId");
    this.#dropPermit = db.prepare("DELETE FROM model_permits WHERE owner = @owner AND call_id = @callId");
    this.#renewPermits = db.prepare(
      `UPDATE model_permits SET lease_until = @until WHERE owner = @owner AND lease_until > @now
         AND call_id IN (SELECT value FROM json_each(@ids))`,
    );
    this.#renewDemands = db.prepare(
      `UPDATE permit_demands SET lease_until = @until WHERE owner = @owner AND lease_until > @now
         AND call_id IN (SELECT value FROM json_each(@ids))`,
    );
    this.#dropOwnerPermits = db.prepare("DELETE FROM model_permits WHERE owner = ?");
    this.#dropOwnerDemands = db.prepare("DELETE FROM permit_demands WHERE owner = ?");
    this.#livePermits = db.prepare(
      "SELECT owner, count(*) AS n FROM model_permits WHERE lease_until > @now GROUP BY owner",
    );
    this.#liveDemands = db.prepare(
      "SELECT priority, count(*) AS n FROM permit_demands WHERE lease_until > @now GROUP BY priority",
    );
    this.#tryTx = db.transaction((r: PermitRequest) => this.#try(r));
    this.#releaseTx = db.transaction((c: Call) => {
      this.#dropDemand.run(c);
      return this.#dropPermit.run(c).changes > 0;
    });
    this.#renewTx = db.transaction((owner: string, ids: string, now: number, until: number) => {
      this.#renewDemands.run({ owner, ids, now, until });
      return this.#renewPermits.run({ owner, ids, now, until }).changes;
    });
    this.#releaseOwnerTx = db.transaction(
      (owner: string) =>
        this.#dropOwnerPermits.run(owner).changes + this.#dropOwnerDemands.run(owner).changes,
    );
  }

  async tryAcquire(request: PermitRequest): Promise<PermitAnswer> {
    assertPermitRequest(request);
    return guard(this.#path, () => this.#tryTx.immediate(request));
  }

  #try(r: PermitRequest): PermitAnswer {
    const call = { owner: r.owner, callId: r.callId };
    const now = r.now;
    const until = now + r.ttlMs;
    const rank = PERMIT_RANK[r.priority];
    if (this.#extendOwn.run({ ...call, until, now }).changes > 0) return { granted: true, leaseUntil: until };
    // Expired rows are free: gone before counting, so a dead process's permit is not in the way.
    this.#purge.run({ now });
    this.#purgeDemands.run({ now });
    const live = this.#live.get({ now })?.n ?? 0;
    const outranking = this.#outranking.get({ ...call, now, rank })?.n ?? 0;
    const answer = decidePermit(r, live, outranking);
    if (answer.granted) {
      this.#grant.run({ ...call, rank, now, until });
      this.#dropDemand.run(call);
    } else {
      this.#demand.run({ ...call, rank, now, until });
    }
    return answer;
  }

  async release(owner: string, callId: string): Promise<boolean> {
    assertCall(owner, callId);
    return guard(this.#path, () => this.#releaseTx.immediate({ owner, callId }));
  }

  async withdraw(owner: string, callId: string): Promise<boolean> {
    assertCall(owner, callId);
    return guard(this.#path, () => this.#dropDemand.run({ owner, callId }).changes > 0);
  }

  async renew(owner: string, callIds: readonly string[], now: number, ttlMs: number): Promise<number> {
    if (callIds.length === 0) return 0;
    return guard(this.#path, () => this.#renewTx.immediate(owner, JSON.stringify(callIds), now, now + ttlMs));
  }

  async releaseOwner(owner: string): Promise<number> {
    return guard(this.#path, () => this.#releaseOwnerTx.immediate(owner));
  }

  async census(now: number): Promise<PermitCensus> {
    return guard(this.#path, () => {
      const census: PermitCensus = { permits: {}, demands: { human: 0, normal: 0, background: 0 } };
      for (const r of this.#livePermits.all({ now })) census.permits[r.owner] = r.n;
      for (const r of this.#liveDemands.all({ now })) census.demands[permitPriority(r.priority)] += r.n;
      return census;
    });
  }
}
