/**
 * Status's view of the cluster: each registered node, alive or stale by its heartbeat, and what
 * it holds — session leases, running messages, sending replies, and the connections and duties
 * only it runs (resource leases) — as `/v1/status` returns it and `switchyard status` prints it.
 */
import { describe, expect, it } from "vitest";
import { nodeLines, nodeStatuses } from "../../src/gateway/status-snapshot.js";
import { resourceLeaseKey } from "../../src/store/leases.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";

const T0 = 1_700_000_000_000;
const TTL = 30_000;
const record = (owner: string, pid: number) => ({
  owner,
  host: "box",
  pid,
  bootId: null,
  pidNamespace: null,
  startTicks: null,
  startedAt: T0,
});

describe("status: the nodes", () => {
  it("lists every node, alive or stale, with its sessions and the duties only it runs", async () => {
    const store = openSqliteStore({ path: ":memory:" });
    try {
      await store.leases.registerOwner(record("gw_a", 11));
      await store.leases.registerOwner(record("gw_b", 22));
      await store.leases.acquireSession(resourceLeaseKey("channel:telegram:default"), "gw_a", T0, TTL);
      await store.leases.acquireSession(resourceLeaseKey("heartbeat:main"), "gw_a", T0, TTL);
      await store.leases.acquireSession("agent:main:http:dm:ann", "gw_a", T0, TTL);
      await store.leases.renew("gw_a", T0 + 40_000, TTL); // expired by then: nothing renewed
      await store.leases.acquireSession(
        resourceLeaseKey("channel:telegram:default"),
        "gw_a",
        T0 + 40_000,
        TTL,
      );
      const now = T0 + 45_000;
      const nodes = await nodeStatuses(store, now, TTL, "gw_a");
      expect(nodes).toEqual([
        expect.objectContaining({
          owner: "gw_a",
          alive: true,
          self: true,
          sessions: 0,
          resources: ["channel:telegram:default"],
        }),
        expect.objectContaining({ owner: "gw_b", alive: false, self: false, sessions: 0, resources: [] }),
      ]);
      expect(nodeLines(nodes, now)).toEqual([
        "nodes     2 registered: 1 alive, 1 stale (no heartbeat within gateway.leaseTtlMs)",
        "  alive gw_a (this one) on box pid 11: heartbeat 5 s ago; holds 0 sessions, 0 running messages, 0 sending replies; runs channel:telegram:default",
        "  stale gw_b on box pid 22: heartbeat 45 s ago; holds 0 sessions, 0 running messages, 0 sending replies",
      ]);
    } finally {
      await store.close();
    }
  });
});
