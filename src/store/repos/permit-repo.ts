/**
 * The cluster's model-call permits (`lanes.clusterMaxConcurrent`): at most `limit` model calls
 * hold a permit at once across every gateway process sharing the store, with person-first
 * admission across processes. A permit and a waiting call's demand are leased rows: a process
 * that dies leaks nothing, its rows are free once their lease has passed.
 */

/** A call's admission rank, as the lanes name it: human > normal > background. */
export type PermitPriority = "human" | "normal" | "background";

/** One try for a permit (PermitRepo.tryAcquire). */
export interface PermitRequest {
  /** The process instance id (`gw_…`) the permit is held by. */
  owner: string;
  /** The call, unique within `owner`; a second try of a call that holds its permit extends it. */
  callId: string;
  priority: PermitPriority;
  /** Epoch ms. */
  now: number;
  /** The permit (or the demand) is live until `now + ttlMs`; a whole number > 0. */
  ttlMs: number;
  /** Permits the cluster allows at once: an integer ≥ 1. */
  limit: number;
  /** Permits only `human` calls may take: an integer from 0 to `limit - 1`. */
  reservedForHuman: number;
}

/**
 * Why a try was refused. `full`: `limit` live permits; `reserved`: a non-human call and only
 * the human reservation is free; `outranked`: a higher-priority call of another caller (any
 * process) waits, its demand live.
 */
export type PermitRefusal = "full" | "reserved" | "outranked";

/** What tryAcquire decided. */
export type PermitAnswer = { granted: true; leaseUntil: number } | { granted: false; reason: PermitRefusal };

/** Live rows at a time (PermitRepo.census): for status and tests. */
export interface PermitCensus {
  /** Live permits, by owner. */
  permits: Record<string, number>;
  /** Live demands, by priority. */
  demands: Record<PermitPriority, number>;
}

/**
 * Cluster-wide model-call permits. A permit is live while `now < leaseUntil`; so is a demand
 * (the record that a call waits, read by other processes' tries). Rows past their lease count
 * for nothing and are deleted by the next try.
 */
export interface PermitRepo {
  /**
   * In one transaction: grants `callId` a permit until `now + ttlMs` when fewer than `limit`
   * permits are live, a non-human call leaves `reservedForHuman` of them free, and no live
   * demand of another call has a higher priority; the call's own demand is then removed.
   * Otherwise records (or extends) the call's demand until `now + ttlMs` — keeping the time it
   * first asked — and says why. A call that holds a live permit has it extended.
   * @throws TypeError or RangeError for an empty owner or callId, a ttlMs that is not a whole
   * number > 0, a limit below 1 or a reservation outside 0..limit-1.
   */
  tryAcquire(request: PermitRequest): Promise<PermitAnswer>;
  /** Gives the call's permit back (and removes any demand of it); false if it held none. */
  release(owner: string, callId: string): Promise<boolean>;
  /** Removes the call's demand (a waiting call that gave up); false if it had none. */
  withdraw(owner: string, callId: string): Promise<boolean>;
  /**
   * Extends to `now + ttlMs` the live permits and demands of `owner` whose call ids are listed;
   * an expired row is never revived. Resolves how many permits were extended.
   */
  renew(owner: string, callIds: readonly string[], now: number, ttlMs: number): Promise<number>;
  /** Removes every permit and demand of `owner` (a process stopping, or known dead). */
  releaseOwner(owner: string): Promise<number>;
  /** The live permits and demands at `now`. */
  census(now: number): Promise<PermitCensus>;
}
