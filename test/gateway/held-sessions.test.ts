/**
 * The held-session watch: a turn that finds its session held by another process arms one timer
 * for the moment that lease ends, and the takeover sweep runs then — not a renewal period later.
 */
import { describe, expect, it } from "vitest";
import { HeldSessionWatch } from "../../src/gateway/held-sessions.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { until } from "../helpers/until.js";

describe("HeldSessionWatch", () => {
  it("sweeps once, just after the earliest held lease ends; nothing after stop", async () => {
    const store = openSqliteStore({ path: ":memory:" });
    const clock = new ManualClock();
    const t0 = clock.now();
    let sweeps = 0;
    const watch = new HeldSessionWatch({
      store,
      clock,
      logger: silentLogger(),
      sweep: async () => void sweeps++,
    });
    await store.leases.acquireSession("agent:main:http:dm:ann", "gw_other", t0, 5_000);
    await store.leases.acquireSession("agent:main:http:dm:bob", "gw_other", t0, 3_000);
    watch.held("agent:main:http:dm:ann");
    watch.held("agent:main:http:dm:bob");
    watch.held("agent:main:http:dm:nobody"); // not held: nothing to wait for
    await until(() => clock.pendingTimers === 1, "one timer armed");
    await clock.advanceAsync(3_024);
    expect(sweeps).toBe(0);
    await clock.advanceAsync(1);
    expect(sweeps).toBe(1); // bob's lease ended 25 ms ago
    await clock.advanceAsync(10_000);
    expect(sweeps).toBe(1);
    await store.leases.acquireSession("agent:main:http:dm:cy", "gw_other", clock.now(), 3_000);
    watch.held("agent:main:http:dm:cy");
    await until(() => clock.pendingTimers === 1, "armed again");
    watch.stop();
    await clock.advanceAsync(10_000);
    expect(sweeps).toBe(1);
    await store.close();
  });
});
