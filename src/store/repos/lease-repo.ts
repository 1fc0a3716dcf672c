/**
 * The session leases' contract: which process runs a session, under which fence, until when;
 * the fence every write made for a session carries; and the renewal and takeover of work in
 * progress. How owners and leases apply to inbox and outbox rows is in `../types.ts`.
 */

/**
 * Proof of holding a session: the holder's process instance id and the fence number its lease
 * was granted under. Writes made for a session (claim, append, commitTurn) carry it and are
 * refused once the session's fence has moved on.
 */
export interface SessionFence {
  owner: string;
  fence: number;
}

/** A held session lease. */
export interface SessionLease extends SessionFence {
  sessionKey: string;
  /** Epoch ms; held while `now < leaseUntil`. */
  leaseUntil: number;
}

/** What acquireSession granted. */
export interface AcquiredSession extends SessionLease {
  /** Rows left `running` under an earlier, expired lease of the session, now `queued` again. */
  requeued: number;
}

/** What releaseSession did. */
export interface ReleasedSession {
  /** The holder's rows still `running` in the session, now `queued` again. */
  requeued: number;
}

/** What renew extended: only leases `owner` still held, unexpired. */
export interface LeaseRenewal {
  /** Session keys whose leases were extended, sorted; a running session missing here was lost. */
  sessions: string[];
  /** `running` inbox rows extended (those in the sessions above). */
  inbox: number;
  /** `sending` outbox rows extended. */
  outbox: number;
}

/**
 * Session leases: which process runs a session. At most one owner holds a session's lease at a
 * time; each grant to a new holder (or after expiry) carries a higher fence number, so a
 * process that lost its lease (paused past its TTL, partitioned) cannot claim, append or commit
 * for the session any more. A lease is a row that outlives its holder: releasing keeps the
 * fence, so fences never repeat for a session key.
 */
export interface LeaseRepo {
  /**
   * Grants `owner` the session's lease until `now + ttlMs`: when it is free (never leased or
   * released), expired, or already `owner`'s. The fence stays the same only when `owner` still
   * held it unexpired (the lease and that owner's running rows of the session are extended);
   * any other grant has fence = previous + 1 (the first is 1) and, in the same step, requeues
   * the session's `running` rows whose lease expired (an earlier holder's interrupted run).
   * Undefined while another owner holds it. `ttlMs` must be a positive whole number.
   */
  acquireSession(
    sessionKey: string,
    owner: string,
    now: number,
    ttlMs: number,
  ): Promise<AcquiredSession | undefined>;
  /**
   * Gives the lease up if `owner` holds it under `fence` (expired or not, as long as nobody
   * took it since), keeping the fence; that owner's rows still `running` in the session go back
   * to `queued` in the same step, so the next holder redoes them. Undefined (nothing written)
   * if the fence moved on.
   */
  releaseSession(
    sessionKey: string,
    owner: string,
    fence: number,
    now: number,
  ): Promise<ReleasedSession | undefined>;
  /** The session's lease if someone holds it at `now`. */
  getSession(sessionKey: string, now: number): Promise<SessionLease | undefined>;
  /**
   * Extends, in one step, every lease `owner` holds unexpired at `now` to `now + ttlMs`: its
   * session leases, its `running` inbox rows in those sessions, its `sending` outbox rows; and
   * records `now` as its heartbeat. An
   * expired lease is never revived (a takeover may be under way); the owner learns which
   * sessions it still holds from the result. Call it on a timer well inside the TTL.
   */
  renew(owner: string, now: number, ttlMs: number): Promise<LeaseRenewal>;
  /**
   * Records a gateway process as an owner of work (its instance id and how to recognise the
   * process later), before it takes any lease; replaces an earlier record of the same owner.
   */
  registerOwner(owner: OwnerRecord): Promise<void>;
  /** Every registered owner, oldest first: the live ones and those that died without retiring. */
  listOwners(): Promise<OwnerRecord[]>;
  /**
   * What each owner holds unexpired at `now` (session leases, resource leases, running inbox rows,
   * sending outbox rows), by owner id; owners holding nothing are left out. For status: which
   * node runs what.
   */
  ownerHoldings(now: number): Promise<OwnerHoldings[]>;
  /**
   * Retires an owner in one step: ends, at `now`, every lease it holds (its session leases, its
   * `running` inbox rows, its `sending` outbox rows — all then expired, so they are taken over
   * at once instead of after the TTL) and removes its record. Returns how many session leases
   * it ended. For an owner known to be dead (its process exited, or is a zombie) and for a
   * process's own record as it stops; never for an owner that may be alive: its fenced writes
   * would then be refused mid-turn.
   */
  retireOwner(owner: string, now: number): Promise<number>;
}

/**
 * A gateway process that owns (or owned) work in the store: its instance id and the identity
 * of its process, so a process starting later on the same host can tell whether it still runs.
 */
export interface OwnerRecord {
  /** The process instance id (`gw_…`) its leases and rows carry. */
  owner: string;
  /** `os.hostname()` of its machine. */
  host: string;
  pid: number;
  /** The kernel's boot id; null where unknown. */
  bootId: string | null;
  /** Its pid namespace; null where unknown. */
  pidNamespace: string | null;
  /** Its start time in clock ticks since boot; null where unknown. */
  startTicks: number | null;
  /** Epoch ms when it registered. */
  startedAt: number;
  /**
   * Epoch ms of its last lease renewal (its heartbeat; registering counts as the first). Read
   * back by listOwners; ignored by registerOwner.
   */
  heartbeatAt?: number | null;
}

/** What one owner holds unexpired at a time (LeaseRepo.ownerHoldings). */
export interface OwnerHoldings {
  owner: string;
  /** Session leases (resource leases not counted). */
  sessions: number;
  /** Resource leases, by name without the prefix (`channel:telegram:default`), sorted. */
  resources: string[];
  /** `running` inbox rows. */
  inbox: number;
  /** `sending` outbox rows. */
  outbox: number;
}
