/**
 * Session leases in SQLite (schema v5): which process runs a session, under which fence and
 * until when; the renewal, in one step, of everything one owner has in progress (its
 * sessions, its running inbox rows, its sending outbox rows); and the owners themselves
 * (schema v13), so a dead one is retired at once.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type {
  AcquiredSession,
  LeaseRenewal,
  LeaseRepo,
  OwnerHoldings,
  OwnerRecord,
  ReleasedSession,
  SessionFence,
  SessionLease,
} from "../repos/lease-repo.js";
import { assertLeaseArgs, withResources } from "../leases.js";
import { guard } from "./errors.js";

interface OwnerRow {
  owner: string;
  host: string;
  pid: number;
  boot_id: string | null;
  pid_namespace: string | null;
  start_ticks: number | null;
  started_at: number;
  heartbeat_at?: number | null;
}

interface LeaseRow {
  session_key: string;
  owner: string | null;
  lease_until: number;
  fence: number;
}

/**
 * LeaseRepo over one better-sqlite3 connection. A lease row is written on the first grant and
 * never deleted (a release clears its owner), so a session's fence only grows. The statements
 * on inbox and outbox rows here are the lease side of those rows: extension, renewal, and the
 * requeue of a session's runs when its lease changes hands.
 *
 * Invariant kept by every method: a running inbox row's lease never outlasts its session's
 * lease (claim copies it, acquire and renew extend both together), so when a session lease has
 * expired, so have its rows, and a new holder may requeue them at once.
 */
export class SqliteLeaseRepo implements LeaseRepo {
  readonly #path: string;
  readonly #byKey: Statement<[string], LeaseRow>;
  readonly #insert: Statement<[{ sessionKey: string; owner: string; until: number }]>;
  readonly #grant: Statement<[{ sessionKey: string; owner: string; until: number; fence: number }]>;
  readonly #extendSessionRows: Statement<[{ sessionKey: string; owner: string; until: number; now: number }]>;
  readonly #requeueExpiredOf: Statement<[{ sessionKey: string; now: number }]>;
  readonly #release: Statement<[{ sessionKey: string; owner: string; fence: number }]>;
  readonly #requeueOwnedOf: Statement<[{ sessionKey: string; owner: string; now: number }]>;
  readonly #renewSessions: Statement<
    [{ owner: string; until: number; now: number }],
    { session_key: string }
  >;
  readonly #renewInbox: Statement<[{ owner: string; until: number; now: number }]>;
  readonly #renewOutbox: Statement<[{ owner: string; until: number; now: number }]>;
  readonly #acquireTx: Transaction<
    (sessionKey: string, owner: string, now: number, ttlMs: number) => AcquiredSession | undefined
  >;
  readonly #releaseTx: Transaction<
    (sessionKey: string, owner: string, fence: number, now: number) => ReleasedSession | undefined
  >;
  readonly #renewTx: Transaction<(owner: string, now: number, ttlMs: number) => LeaseRenewal>;
  readonly #retireTx: Transaction<(owner: string, now: number) => number>;
  readonly #registerOwner: Statement<[OwnerRow]>;
  readonly #listOwners: Statement<[], OwnerRow>;
  readonly #holdings: Statement<{ now: number }, Omit<OwnerHoldings, "resources">>;
  readonly #resources: Statement<{ now: number }, { owner: string; session_key: string }>;

  constructor(db: Database, path: string) {
    this.#path = path;
    this.#byKey = db.prepare("SELECT * FROM session_leases WHERE session_key = ?");
    this.#insert = db.prepare(
      `INSERT INTO session_leases (session_key, owner, lease_until, fence)
       VALUES (@sessionKey, @owner, @until, 1)`,
    );
    this.#grant = db.prepare(
      `UPDATE session_leases SET owner = @owner, lease_until = @until, fence = @fence
       WHERE session_key = @sessionKey`,
    );
    // The IN terms let the planner seek the partial index inbox_unfinished by session.
    this.#extendSessionRows = db.prepare(
      `UPDATE inbox SET lease_until = @until
       WHERE state IN ('received', 'queued', 'running') AND state = 'running'
         AND session_key = @sessionKey AND owner = @owner AND lease_until > @now`,
    );
    this.#requeueExpiredOf = db.prepare(
      `UPDATE inbox SET state = 'queued', owner = NULL, lease_until = NULL, updated_at = @now
       WHERE state IN ('received', 'queued', 'running') AND state = 'running'
         AND session_key = @sessionKey AND IFNULL(lease_until, 0) <= @now`,
    );
    this.#release = db.prepare(
      `UPDATE session_leases SET owner = NULL, lease_until = 0
       WHERE session_key = @sessionKey AND owner = @owner AND fence = @fence`,
    );
    this.#requeueOwnedOf = db.prepare(
      `UPDATE inbox SET state = 'queued', owner = NULL, lease_until = NULL, updated_at = @now
       WHERE state IN ('received', 'queued', 'running') AND state = 'running'
         AND session_key = @sessionKey AND owner = @owner`,
    );
    this.#renewSessions = db.prepare(
      `UPDATE session_leases SET lease_until = @until
       WHERE owner = @owner AND lease_until > @now
       RETURNING session_key`,
    );
    // After #renewSessions: the sessions still held are exactly those now leased until @until.
    this.#renewInbox = db.prepare(
      `UPDATE inbox SET lease_until = @until
       WHERE state IN ('received', 'queued', 'running') AND state = 'running'
         AND owner = @owner AND lease_until > @now
         AND session_key IN (SELECT session_key FROM session_leases WHERE owner = @owner AND lease_until = @until)`,
    );
    // The IN term lets the planner use the partial index outbox_chat_unsent.
    this.#renewOutbox = db.prepare(
      `UPDATE outbox SET lease_until = @until
       WHERE state IN ('pending', 'sending') AND state = 'sending' AND owner = @owner AND lease_until > @now`,
    );

    this.#acquireTx = db.transaction((sessionKey, owner, now, ttlMs) => {
      const until = now + ttlMs;
      const row = this.#byKey.get(sessionKey);
      if (row && row.owner !== null && row.lease_until > now) {
        if (row.owner !== owner) return undefined;
        // Still ours: the same fence, the lease and our running rows extended together.
        this.#grant.run({ sessionKey, owner, until, fence: row.fence });
        this.#extendSessionRows.run({ sessionKey, owner, until, now });
        return { sessionKey, owner, fence: row.fence, leaseUntil: until, requeued: 0 };
      }
      const fence = row ? row.fence + 1 : 1;
      if (row) this.#grant.run({ sessionKey, owner, until, fence });
      else this.#insert.run({ sessionKey, owner, until });
      // A released lease left no running rows behind (release requeued them); a never-leased
      // session may have running rows from before schema 5.
      const requeued = row?.owner === null ? 0 : this.#requeueExpiredOf.run({ sessionKey, now }).changes;
      return { sessionKey, owner, fence, leaseUntil: until, requeued };
    });
    this.#releaseTx = db.transaction((sessionKey, owner, fence, now) => {
      if (this.#release.run({ sessionKey, owner, fence }).changes === 0) return undefined;
      return { requeued: this.#requeueOwnedOf.run({ sessionKey, owner, now }).changes };
    });
    const revokeSessions = db.prepare<{ owner: string; now: number }>(
      "UPDATE session_leases SET lease_until = @now WHERE owner = @owner AND lease_until > @now",
    );
    const revokeInbox = db.prepare<{ owner: string; now: number }>(
      `UPDATE inbox SET lease_until = @now
       WHERE state IN ('received', 'queued', 'running') AND state = 'running' AND owner = @owner AND lease_until > @now`,
    );
    const revokeOutbox = db.prepare<{ owner: string; now: number }>(
      `UPDATE outbox SET lease_until = @now
       WHERE state IN ('pending', 'sending') AND state = 'sending' AND owner = @owner AND lease_until > @now`,
    );
    const removeOwner = db.prepare<[string]>("DELETE FROM owners WHERE owner = ?");
    this.#retireTx = db.transaction((owner: string, now: number) => {
      const sessions = revokeSessions.run({ owner, now }).changes;
      revokeInbox.run({ owner, now });
      revokeOutbox.run({ owner, now });
      removeOwner.run(owner);
      return sessions;
    });
    this.#registerOwner = db.prepare(
      `INSERT OR REPLACE INTO owners (owner, host, pid, boot_id, pid_namespace, start_ticks, started_at, heartbeat_at)
       VALUES (@owner, @host, @pid, @boot_id, @pid_namespace, @start_ticks, @started_at, @started_at)`,
    );
    this.#listOwners = db.prepare("SELECT * FROM owners ORDER BY started_at, owner");
    const beat = db.prepare<{ owner: string; now: number }>(
      "UPDATE owners SET heartbeat_at = @now WHERE owner = @owner",
    );
    this.#holdings = db.prepare(
      `SELECT owner, sum(s) AS sessions, sum(i) AS inbox, sum(o) AS outbox FROM (
         SELECT owner, sum(session_key NOT LIKE 'resource:%') AS s, 0 AS i, 0 AS o FROM session_leases
           WHERE owner IS NOT NULL AND lease_until > @now GROUP BY owner
         UNION ALL SELECT owner, 0, count(*), 0 FROM inbox
           WHERE state IN ('received', 'queued', 'running') AND state = 'running' AND lease_until > @now GROUP BY owner
         UNION ALL SELECT owner, 0, 0, count(*) FROM outbox
           WHERE state IN ('pending', 'sending') AND state = 'sending' AND lease_until > @now GROUP BY owner
       ) WHERE owner IS NOT NULL GROUP BY owner ORDER BY owner`,
    );
    this.#resources = db.prepare(
      `SELECT owner, session_key FROM session_leases
       WHERE owner IS NOT NULL AND lease_until > @now AND session_key LIKE 'resource:%'
       ORDER BY session_key`,
    );
    this.#renewTx = db.transaction((owner, now, ttlMs) => {
      const until = now + ttlMs;
      beat.run({ owner, now });
      const sessions = this.#renewSessions
        .all({ owner, until, now })
        .map((r) => r.session_key)
        .sort();
      const inbox = sessions.length === 0 ? 0 : this.#renewInbox.run({ owner, until, now }).changes;
      const outbox = this.#renewOutbox.run({ owner, until, now }).changes;
      return { sessions, inbox, outbox };
    });
  }

  async acquireSession(
    sessionKey: string,
    owner: string,
    now: number,
    ttlMs: number,
  ): Promise<AcquiredSession | undefined> {
    assertLeaseArgs(owner, ttlMs);
    return guard(this.#path, () => this.#acquireTx.immediate(sessionKey, owner, now, ttlMs));
  }

  async releaseSession(
    sessionKey: string,
    owner: string,
    fence: number,
    now: number,
  ): Promise<ReleasedSession | undefined> {
    return guard(this.#path, () => this.#releaseTx.immediate(sessionKey, owner, fence, now));
  }

  async getSession(sessionKey: string, now: number): Promise<SessionLease | undefined> {
    return guard(this.#path, () => {
      const row = this.#byKey.get(sessionKey);
      if (!row || row.owner === null || row.lease_until <= now) return undefined;
      return { sessionKey, owner: row.owner, fence: row.fence, leaseUntil: row.lease_until };
    });
  }

  async registerOwner(owner: OwnerRecord): Promise<void> {
    if (typeof owner.owner !== "string" || owner.owner === "")
      throw new TypeError(
        `owner must be a non-empty process instance id, got ${JSON.stringify(owner.owner)}`,
      );
    guard(this.#path, () =>
      this.#registerOwner.run({
        owner: owner.owner,
        host: owner.host,
        pid: owner.pid,
        boot_id: owner.bootId,
        pid_namespace: owner.pidNamespace,
        start_ticks: owner.startTicks,
        started_at: owner.startedAt,
      }),
    );
  }

  async listOwners(): Promise<OwnerRecord[]> {
    return guard(this.#path, () =>
      this.#listOwners.all().map((r) => ({
        owner: r.owner,
        host: r.host,
        pid: r.pid,
        bootId: r.boot_id,
        pidNamespace: r.pid_namespace,
        startTicks: r.start_ticks,
        startedAt: r.started_at,
        heartbeatAt: r.heartbeat_at ?? null,
      })),
    );
  }

  async ownerHoldings(now: number): Promise<OwnerHoldings[]> {
    return guard(this.#path, () => withResources(this.#holdings.all({ now }), this.#resources.all({ now })));
  }

  async retireOwner(owner: string, now: number): Promise<number> {
    return guard(this.#path, () => this.#retireTx.immediate(owner, now));
  }

  async renew(owner: string, now: number, ttlMs: number): Promise<LeaseRenewal> {
    assertLeaseArgs(owner, ttlMs);
    return guard(this.#path, () => this.#renewTx.immediate(owner, now, ttlMs));
  }

  /**
   * For claim, inside its transaction: the session lease's expiry if `lease` is its current
   * holder and fence and it is unexpired at `now`; undefined otherwise.
   */
  heldUntilInTransaction(sessionKey: string, lease: SessionFence, now: number): number | undefined {
    const row = this.#byKey.get(sessionKey);
    if (!row || row.owner !== lease.owner || row.fence !== lease.fence || row.lease_until <= now)
      return undefined;
    return row.lease_until;
  }

  /**
   * For commitTurn and a fenced append, inside their transaction: is `lease` the session's
   * current holder and fence? Expiry alone does not matter: only a new grant moves the fence,
   * and until one happens nobody else has written for the session.
   */
  isCurrentInTransaction(sessionKey: string, lease: SessionFence): boolean {
    const row = this.#byKey.get(sessionKey);
    return row !== undefined && row.owner === lease.owner && row.fence === lease.fence;
  }
}
