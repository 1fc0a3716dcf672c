/**
 * The processes that own work in the store. A gateway registers itself before it takes any
 * lease, and retires every registered owner it can prove dead — a process of this host that
 * exited, is a zombie, or whose pid now names another process — so the work a crashed gateway
 * held (its session leases, kept across turns, included) is taken over at once instead of after
 * `gateway.leaseTtlMs`. Owners it cannot judge (another host or container) and live ones are
 * left to their leases. On a clean stop a gateway retires itself.
 */
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import {
  type Liveness,
  type ProcessIdentity,
  processLiveness,
  selfIdentity,
} from "../util/process-identity.js";

export interface OwnerRegistryOptions {
  store: Store;
  /** This process's instance id. */
  owner: string;
  clock: Clock;
  logger: Logger;
  /** This process (default: the real one). */
  identity?: ProcessIdentity;
  /** Judges another owner's process (default: {@link processLiveness} from `identity`). */
  liveness?: (other: ProcessIdentity) => Liveness;
}

/** What {@link claimOwnership} found. */
export interface OwnershipClaim {
  /** Owners found dead and retired. */
  retired: string[];
  /** Session leases they held, now ended. */
  sessions: number;
}

/**
 * Registers this process as an owner, then retires every other owner whose process is dead
 * (see the file header). Call it once at start-up, before recovery and before any lease.
 */
export async function claimOwnership(options: OwnerRegistryOptions): Promise<OwnershipClaim> {
  const { store, owner, clock, logger } = options;
  const self = options.identity ?? selfIdentity();
  const liveness = options.liveness ?? ((other: ProcessIdentity) => processLiveness(other, self));
  await store.leases.registerOwner({ owner, ...self, startedAt: clock.now() });
  const claim: OwnershipClaim = { retired: [], sessions: 0 };
  for (const other of await store.leases.listOwners()) {
    if (other.owner === owner || liveness(other) !== "dead") continue;
    const sessions = await store.leases.retireOwner(other.owner, clock.now());
    claim.retired.push(other.owner);
    claim.sessions += sessions;
    logger.info(
      {
        owner: other.owner,
        deadPid: other.pid,
        sessions,
        startedAt: new Date(other.startedAt).toISOString(),
      },
      sessions > 0
        ? "a gateway that held sessions here has died; its work is taken over now"
        : "forgot a gateway that died",
    );
  }
  return claim;
}

/** Whether an owner's heartbeat (its last lease renewal) is within `leaseTtlMs` of `now`: a live node. */
export function heartbeatFresh(
  heartbeatAt: number | null | undefined,
  now: number,
  leaseTtlMs: number,
): boolean {
  return heartbeatAt !== null && heartbeatAt !== undefined && now - heartbeatAt < leaseTtlMs;
}

/** Whether any node other than `self` is alive (status and the outbox's look for others' rows). */
export async function otherNodesAlive(
  store: Store,
  self: string,
  now: number,
  leaseTtlMs: number,
): Promise<boolean> {
  return (await store.leases.listOwners()).some(
    (o) => o.owner !== self && heartbeatFresh(o.heartbeatAt, now, leaseTtlMs),
  );
}
