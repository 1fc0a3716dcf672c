/**
 * claimOwnership: a starting gateway registers itself, retires every owner it can prove dead
 * (its leases end at once) and leaves live owners and owners it cannot judge alone.
 */
import { describe, expect, it } from "vitest";
import { claimOwnership } from "../../src/gateway/owners.js";
import type { OwnerRecord } from "../../src/store/repos/lease-repo.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import type { Liveness, ProcessIdentity } from "../../src/util/process-identity.js";

const TTL = 600_000;
const identity = (pid: number): ProcessIdentity => ({
  pid,
  host: "h1",
  bootId: "b1",
  pidNamespace: "pid:[1]",
  startTicks: pid * 10,
});
const record = (owner: string, pid: number): OwnerRecord => ({ owner, ...identity(pid), startedAt: 0 });

describe("claimOwnership", () => {
  it("retires dead owners at once, and touches neither live ones nor ones it cannot judge", async () => {
    const store = openSqliteStore({ path: ":memory:" });
    const clock = new ManualClock(1_000);
    try {
      for (const [owner, pid] of [
        ["gw_dead", 11],
        ["gw_live", 12],
        ["gw_elsewhere", 13],
      ] as const) {
        await store.leases.registerOwner(record(owner, pid));
        expect(await store.leases.acquireSession(`s-${owner}`, owner, clock.now(), TTL)).toBeDefined();
      }
      const verdicts: Record<number, Liveness> = { 11: "dead", 12: "alive", 13: "unknown" };
      const claim = await claimOwnership({
        store,
        owner: "gw_new",
        clock,
        logger: silentLogger(),
        identity: identity(20),
        liveness: (other) => verdicts[other.pid] ?? "alive",
      });
      expect(claim).toEqual({ retired: ["gw_dead"], sessions: 1 });
      expect((await store.leases.listOwners()).map((o) => o.owner).sort()).toEqual([
        "gw_elsewhere",
        "gw_live",
        "gw_new",
      ]);
      clock.advance(1);
      // The dead one's session is free now, long before its TTL; the others' are not.
      expect(await store.leases.acquireSession("s-gw_dead", "gw_new", clock.now(), TTL)).toMatchObject({
        fence: 2,
      });
      expect(await store.leases.acquireSession("s-gw_live", "gw_new", clock.now(), TTL)).toBeUndefined();
      expect(await store.leases.acquireSession("s-gw_elsewhere", "gw_new", clock.now(), TTL)).toBeUndefined();
      // Its own record is never judged.
      const again = await claimOwnership({
        store,
        owner: "gw_new",
        clock,
        logger: silentLogger(),
        identity: identity(20),
        liveness: () => "dead",
      });
      expect(again.retired.sort()).toEqual(["gw_elsewhere", "gw_live"]);
      expect((await store.leases.listOwners()).map((o) => o.owner)).toEqual(["gw_new"]);
    } finally {
      await store.close();
    }
  });
});
