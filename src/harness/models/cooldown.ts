/**
 * How long an auth profile rests after a failure, by kind: the server's `retry-after` for a
 * rate limit when it gave one, else `baseMs × factor^(consecutive-1)` capped at `maxMs`.
 * Invalid requests, context overflows, aborts and budget stops never cool a profile: they say
 * nothing about the key.
 */
import type { ProviderErrorKind } from "../providers/types.js";

/** One kind's cooldown curve. */
export interface CooldownCurve {
  baseMs: number;
  factor: number;
  maxMs: number;
}

/** The curves of the kinds that cool a profile. */
export type CooldownTable = Record<CoolingKind, CooldownCurve>;

/** Failure kinds that cool the profile that failed (and send the call to the next one). */
export const COOLING_KINDS = [
  "rate_limit",
  "overloaded",
  "auth",
  "billing",
  "timeout",
  "network",
  "unknown",
] as const;
export type CoolingKind = (typeof COOLING_KINDS)[number];

/** True when `kind` cools a profile and the call may go on with another profile or model. */
export function isCoolingKind(kind: ProviderErrorKind): kind is CoolingKind {
  return (COOLING_KINDS as readonly string[]).includes(kind);
}

/** The cooldown after the `consecutive`-th failure in a row (1 = first) of `kind`. */
export function cooldownMs(
  kind: CoolingKind,
  consecutive: number,
  retryAfterMs: number | undefined,
  table: CooldownTable,
): number {
  const curve = table[kind];
  if (kind === "rate_limit" && retryAfterMs !== undefined && retryAfterMs >= 0) {
    // The server said how long: exactly that (capped like the curve).
    return Math.min(retryAfterMs, curve.maxMs);
  }
  const n = Math.max(1, consecutive);
  return Math.min(curve.maxMs, Math.round(curve.baseMs * curve.factor ** (n - 1)));
}

/** The default curves: `providers.cooldowns` defaults to them, and so does a router built without a config. */
export const DEFAULT_COOLDOWNS: CooldownTable = {
  rate_limit: { baseMs: 60_000, factor: 5, maxMs: 3_600_000 },
  overloaded: { baseMs: 30_000, factor: 2, maxMs: 300_000 },
  auth: { baseMs: 300_000, factor: 4, maxMs: 86_400_000 },
  billing: { baseMs: 18_000_000, factor: 2, maxMs: 86_400_000 },
  timeout: { baseMs: 2_000, factor: 2, maxMs: 60_000 },
  network: { baseMs: 2_000, factor: 2, maxMs: 60_000 },
  unknown: { baseMs: 5_000, factor: 2, maxMs: 60_000 },
};
