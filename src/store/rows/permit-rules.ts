/**
 * The permit decision both engines share: the arguments' checks, the priority ranks stored in
 * the permit tables, and which answer a try gets from the live counts it read.
 */
import type { PermitAnswer, PermitPriority, PermitRequest } from "../repos/permit-repo.js";

/** The stored rank of a priority: higher goes first. */
export const PERMIT_RANK: Readonly<Record<PermitPriority, number>> = { human: 2, normal: 1, background: 0 };

/** A rank read back from the tables. */
export function permitPriority(rank: number): PermitPriority {
  return rank >= 2 ? "human" : rank === 1 ? "normal" : "background";
}

/**
 * Throws TypeError or RangeError naming the field unless the request is well formed: a wrong
 * limit is a caller's bug, not a state of the table.
 */
export function assertPermitRequest(r: PermitRequest): void {
  assertCall(r.owner, r.callId);
  if (!(r.priority in PERMIT_RANK)) throw new TypeError(`permit priority: got ${JSON.stringify(r.priority)}`);
  if (!Number.isSafeInteger(r.ttlMs) || r.ttlMs <= 0)
    throw new RangeError(`permit ttlMs must be a whole number of milliseconds > 0, got ${r.ttlMs}`);
  if (!Number.isSafeInteger(r.limit) || r.limit < 1)
    throw new RangeError(`permit limit must be an integer ≥ 1, got ${r.limit}`);
  if (!Number.isSafeInteger(r.reservedForHuman) || r.reservedForHuman < 0 || r.reservedForHuman >= r.limit)
    throw new RangeError(
      `permit reservedForHuman must be an integer from 0 to ${r.limit - 1} (limit - 1), got ${r.reservedForHuman}`,
    );
}

/** Throws TypeError unless owner and callId are non-empty strings. */
export function assertCall(owner: string, callId: string): void {
  if (typeof owner !== "string" || owner === "")
    throw new TypeError(`permit owner must be a non-empty process instance id, got ${JSON.stringify(owner)}`);
  if (typeof callId !== "string" || callId === "")
    throw new TypeError(`permit callId must be a non-empty string, got ${JSON.stringify(callId)}`);
}

/**
 * The answer for a try that does not hold a permit yet, from what its transaction counted:
 * `live` permits, and `outranking` live demands of other calls with a higher rank.
 */
export function decidePermit(r: PermitRequest, live: number, outranking: number): PermitAnswer {
  if (live >= r.limit) return { granted: false, reason: "full" };
  if (r.priority !== "human" && live >= r.limit - r.reservedForHuman)
    return { granted: false, reason: "reserved" };
  if (outranking > 0) return { granted: false, reason: "outranked" };
  return { granted: true, leaseUntil: r.now + r.ttlMs };
}
