/**
 * What both store engines and their callers share about leases: resource lease keys, the
 * argument check, and the holdings' resources.
 */
import type { OwnerHoldings } from "./repos/lease-repo.js";

/**
 * Lease keys beginning with this name a resource, not a session: a connection or a duty only one
 * process may run at a time (a Telegram bot's long polling, a Discord gateway connection, the
 * heartbeat), e.g. `resource:channel:telegram:default`. They are granted, fenced, renewed,
 * released and retired exactly like session leases (no inbox rows ever carry such a key), and
 * ownerHoldings lists them apart. Session keys begin with `agent:`, so the two never meet.
 */
export const RESOURCE_LEASE_PREFIX = "resource:";

/** The lease key of resource `name` (see RESOURCE_LEASE_PREFIX). */
export function resourceLeaseKey(name: string): string {
  return `${RESOURCE_LEASE_PREFIX}${name}`;
}

/**
 * Throws TypeError unless `owner` is a non-empty string and `ttlMs` a positive whole number of
 * milliseconds: a lease that cannot be held or never ends is a caller's bug, not a state.
 */
export function assertLeaseArgs(owner: string, ttlMs: number): void {
  if (typeof owner !== "string" || owner === "") {
    throw new TypeError(`lease owner must be a non-empty process instance id, got ${JSON.stringify(owner)}`);
  }
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new TypeError(`lease ttlMs must be a whole number of milliseconds > 0, got ${ttlMs}`);
  }
}

/** Attaches each owner's resource leases (by name, prefix removed) to its holdings. */
export function withResources(
  holdings: readonly Omit<OwnerHoldings, "resources">[],
  resources: readonly { owner: string; session_key: string }[],
): OwnerHoldings[] {
  const byOwner = new Map<string, string[]>();
  for (const r of resources) {
    const names = byOwner.get(r.owner) ?? [];
    names.push(r.session_key.slice(RESOURCE_LEASE_PREFIX.length));
    byOwner.set(r.owner, names);
  }
  return holdings.map((h) => ({ ...h, resources: (byOwner.get(h.owner) ?? []).sort() }));
}
