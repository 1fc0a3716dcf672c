/**
 * Session leases in PostgreSQL: which process runs a session, under which fence and until when;
 * the renewal, in one transaction, of everything one owner has in progress (its sessions, its
 * running inbox rows, its sending outbox rows); and the owners themselves, so a dead one is
 * retired at once. A port of SqliteLeaseRepo: each of its write transactions is one PgDb.tx.
 */
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
import type { PgDb, PgRunner } from "./pg-db.js";

interface OwnerRow {
  owner: string;
  host: string;
  pid: number;
  boot_id: string | null;
  pid_namespace: string | null;
  start_ticks: number | null;
  started_at: number;
  heartbeat_at: number | null;
}

interface LeaseRow {
  session_key: string;
  owner: string | null;
  lease_until: number;
  fence: number;
}

const BY_KEY = "SELECT * FROM session_leases WHERE session_key = $1";

/** Rows `running` in one session whose lease expired, back to `queued`. */
const REQUEUE_EXPIRED_OF = `UPDATE inbox SET state = 'queued', owner = NULL, lease_until = NULL, updated_at = $2
   WHERE state = 'running' AND session_key = $1 AND COALESCE(lease_until, 0) <= $2`;

/**
 * LeaseRepo over a PgDb. A lease row is written on the first grant and never deleted (a release
 * clears its owner), so a session's fence only grows. The statements on inbox and outbox rows
 * here are the lease side of those rows: extension, renewal, and the requeue of a session's runs
 * when its lease changes hands.
 *
 * Invariant kept by every method: a running inbox row's lease never outlasts its session's
 * lease (claim copies it, acquire and renew extend both together), so when a session lease has
 * expired, so have its rows, and a new holder may requeue them at once.
 */
export class PgLeaseRepo implements LeaseRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  /** The pool this repository writes through. */
  get db(): PgDb {
    return this.#db;
  }

  async acquireSession(
    sessionKey: string,
    owner: string,
    now: number,
    ttlMs: number,
  ): Promise<AcquiredSession | undefined> {
    assertLeaseArgs(owner, ttlMs);
    const until = now + ttlMs;
    return this.#db.tx(async (tx) => {
      const row = await tx.row<LeaseRow>(`${BY_KEY} FOR UPDATE`, [sessionKey]);
      if (row && row.owner !== null && row.lease_until > now) {
        if (row.owner !== owner) return undefined;
        // Still ours: the same fence, the lease and our running rows extended together.
        await tx.run("UPDATE session_leases SET lease_until = $2 WHERE session_key = $1", [
          sessionKey,
          until,
        ]);
        await tx.run(
          `UPDATE inbox SET lease_until = $3
           WHERE state = 'running' AND session_key = $1 AND owner = $2 AND lease_until > $4`,
          [sessionKey, owner, until, now],
        );
        return { sessionKey, owner, fence: row.fence, leaseUntil: until, requeued: 0 };
      }
      const fence = row ? row.fence + 1 : 1;
      if (row)
        await tx.run(
          "UPDATE session_leases SET owner = $2, lease_until = $3, fence = $4 WHERE session_key = $1",
          [sessionKey, owner, until, fence],
        );
      // Two first grants at once: the later one sees the row it could not read as a
      // serialization failure, and its transaction is run again (and finds the row held).
      else
        await tx.run(
          `INSERT INTO session_leases (session_key, owner, lease_until, fence) VALUES ($1, $2, $3, 1)
           ON CONFLICT (session_key) DO NOTHING`,
          [sessionKey, owner, until],
        );
      // A released lease left no running rows behind (release requeued them).
      const requeued = row?.owner === null ? 0 : await tx.run(REQUEUE_EXPIRED_OF, [sessionKey, now]);
      return { sessionKey, owner, fence, leaseUntil: until, requeued };
    });
  }

  async releaseSession(
    sessionKey: string,
    owner: string,
    fence: number,
    now: number,
  ): Promise<ReleasedSession | undefined> {
    return this.#db.tx(async (tx) => {
      const released = await tx.run(
        `UPDATE session_leases SET owner = NULL, lease_until = 0
         WHERE session_key = $1 AND owner = $2 AND fence = $3`,
        [sessionKey, owner, fence],
      );
      if (released === 0) return undefined;
      const requeued = await tx.run(
        `UPDATE inbox SET state = 'queued', owner = NULL, lease_until = NULL, updated_at = $3
         WHERE state = 'running' AND session_key = $1 AND owner = $2`,
        [sessionKey, owner, now],
      );
      return { requeued };
    });
  }

  async getSession(sessionKey: string, now: number): Promise<SessionLease | undefined> {
    const row = await this.#db.row<LeaseRow>(BY_KEY, [sessionKey]);
    if (!row || row.owner === null || row.lease_until <= now) return undefined;
    return { sessionKey, owner: row.owner, fence: row.fence, leaseUntil: row.lease_until };
  }

  async renew(owner: string, now: number, ttlMs: number): Promise<LeaseRenewal> {
    assertLeaseArgs(owner, ttlMs);
    const until = now + ttlMs;
    return this.#db.tx(async (tx) => {
      await tx.run("UPDATE owners SET heartbeat_at = $2 WHERE owner = $1", [owner, now]);
      const renewed = await tx.rows<{ session_key: string }>(
        `UPDATE session_leases SET lease_until = $2
         WHERE owner = $1 AND lease_until > $3
         RETURNING session_key`,
        [owner, until, now],
      );
      // Code-unit order, as SQLite's (and JS's) sort gives, whatever the database's collation.
      const sessions = renewed.map((r) => r.session_key).sort();
      // After the update above: the sessions still held are exactly those now leased until `until`.
      const inbox =
        sessions.length === 0
          ? 0
          : await tx.run(
              `UPDATE inbox SET lease_until = $2
               WHERE state = 'running' AND owner = $1 AND lease_until > $3
                 AND session_key IN (SELECT session_key FROM session_leases WHERE owner = $1 AND lease_until = $2)`,
              [owner, until, now],
            );
      const outbox = await tx.run(
        `UPDATE outbox SET lease_until = $2
         WHERE state = 'sending' AND owner = $1 AND lease_until > $3`,
        [owner, until, now],
      );
      return { sessions, inbox, outbox };
    });
  }

  async registerOwner(owner: OwnerRecord): Promise<void> {
    if (typeof owner.owner !== "string" || owner.owner === "")
      throw new TypeError(
        `owner must be a non-empty process instance id, got ${JSON.stringify(owner.owner)}`,
      );
    await this.#db.run(
      `INSERT INTO owners (owner, host, pid, boot_id, pid_namespace, start_ticks, started_at, heartbeat_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
       ON CONFLICT (owner) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid,
         boot_id = EXCLUDED.boot_id, pid_namespace = EXCLUDED.pid_namespace,
         start_ticks = EXCLUDED.start_ticks, started_at = EXCLUDED.started_at,
         heartbeat_at = EXCLUDED.heartbeat_at`,
      [
        owner.owner,
        owner.host,
        owner.pid,
        owner.bootId,
        owner.pidNamespace,
        owner.startTicks,
        owner.startedAt,
      ],
    );
  }

  async listOwners(): Promise<OwnerRecord[]> {
    const rows = await this.#db.rows<OwnerRow>(`SELECT * FROM owners ORDER BY started_at, owner COLLATE "C"`);
    return rows.map((r) => ({
      owner: r.owner,
      host: r.host,
      pid: r.pid,
      bootId: r.boot_id,
      pidNamespace: r.pid_namespace,
      startTicks: r.start_ticks,
      startedAt: r.started_at,
      heartbeatAt: r.heartbeat_at,
    }));
  }

  async ownerHoldings(now: number): Promise<OwnerHoldings[]> {
    const holdings = await this.#db.rows<Omit<OwnerHoldings, "resources">>(
      `SELECT owner, sum(s) AS sessions, sum(i) AS inbox, sum(o) AS outbox FROM (
         SELECT owner, count(*) FILTER (WHERE session_key NOT LIKE 'resource:%') AS s, 0 AS i, 0 AS o
           FROM session_leases
           WHERE owner IS NOT NULL AND lease_until > $1 GROUP BY owner
         UNION ALL SELECT owner, 0, count(*), 0 FROM inbox
           WHERE state = 'running' AND lease_until > $1 GROUP BY owner
         UNION ALL SELECT owner, 0, 0, count(*) FROM outbox
           WHERE state = 'sending' AND lease_until > $1 GROUP BY owner
       ) held WHERE owner IS NOT NULL GROUP BY owner ORDER BY owner COLLATE "C"`,
      [now],
    );
    const resources = await this.#db.rows<{ owner: string; session_key: string }>(
      `SELECT owner, session_key FROM session_leases
       WHERE owner IS NOT NULL AND lease_until > $1 AND session_key LIKE 'resource:%'`,
      [now],
    );
    return withResources(holdings, resources);
  }

  async retireOwner(owner: string, now: number): Promise<number> {
    return this.#db.tx(async (tx) => {
      const sessions = await tx.run(
        "UPDATE session_leases SET lease_until = $2 WHERE owner = $1 AND lease_until > $2",
        [owner, now],
      );
      await tx.run(
        "UPDATE inbox SET lease_until = $2 WHERE state = 'running' AND owner = $1 AND lease_until > $2",
        [owner, now],
      );
      await tx.run(
        "UPDATE outbox SET lease_until = $2 WHERE state = 'sending' AND owner = $1 AND lease_until > $2",
        [owner, now],
      );
      await tx.run("DELETE FROM owners WHERE owner = $1", [owner]);
      return sessions;
    });
  }

  /**
   * For commitTurn and a fenced append, inside their transaction: is `lease` the session's
   * current holder and fence? Expiry alone does not matter: only a new grant moves the fence,
   * and until one happens nobody else has written for the session. (A grant racing the
   * caller's transaction is a serialization conflict: one of the two is run again.)
   */
  async isCurrentIn(tx: PgRunner, sessionKey: string, lease: SessionFence): Promise<boolean> {
    const row = await tx.row<LeaseRow>(BY_KEY, [sessionKey]);
    return row !== undefined && row.owner === lease.owner && row.fence === lease.fence;
  }
}
