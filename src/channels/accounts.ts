/**
 * What every multi-account platform section shares: the shape of an account id
 * (`accounts.<id>`), and the check that no two accounts share what must be one account's own
 * (a token, a webhook path).
 */
import { z } from "zod";

/** An account id: the key under `accounts`, part of session keys and routes. */
export const accountId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, { message: "expected lowercase letters, digits, - or _" });

/**
 * One problem line per value two accounts share, e.g. "channels.slack accounts a and b have the
 * same botToken (…)"; accounts without the value (undefined) never clash.
 */
export function clashes<P extends { accountId: string }>(
  section: string,
  plans: readonly P[],
  what: string,
  value: (plan: P) => string | undefined,
): string[] {
  const owner = new Map<string, string>();
  const problems: string[] = [];
  for (const p of plans) {
    const v = value(p);
    if (v === undefined) continue;
    const other = owner.get(v);
    if (other) problems.push(`${section} accounts ${other} and ${p.accountId} have the same ${what}`);
    else owner.set(v, p.accountId);
  }
  return problems;
}
