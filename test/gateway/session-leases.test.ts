/**
 * The lease keeper: a session's lease is reused between turns without a store round trip while
 * it has more than half its TTL left, renewed on the clock, given back once the session was
 * idle for a renewal period, kept (pinned) when a turn could not be saved, and a lost lease
 * aborts its session's turn.
 */
import { describe, expect, it } from "vitest";
import { SessionLeases } from "../../src/gateway/session-leases.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";

const TTL = 3_000;

function setup() {
  const store = openSqliteStore({ path: ":memory:" });
  const clock = new ManualClock();
  const lost: string[] = [];
  let sweeps = 0;
  const leases = new SessionLeases({
    store,
    owner: "gw_me",
    ttlMs: TTL,
    clock,
    logger: silentLogger(),
    onLost: (key) => lost.push(key),
    onSweep: async () => void sweeps++,
  });
  return { store, clock, leases, lost, sweeps: () => sweeps };
}

describe("SessionLeases", () => {
  it("a lease taken while a renewal is on its way is not lost (the store's calls are concurrent on PostgreSQL)", async () => {
    const store = openSqliteStore({ path: ":memory:" });
    const clock = new ManualClock();
    const lost: string[] = [];
    let midRenewal: (() => Promise<unknown>) | undefined;
    // The renewal's statements run first; a grant lands before its answer reaches the keeper.
    const renew = async (...args: Parameters<typeof store.leases.renew>) => {
      const renewal = await store.leases.renew(...args);
      await midRenewal?.();
      return renewal;
    };
    const slowRenew = new Proxy(store.leases, {
      get: (target, key) => {
        if (key === "renew") return renew;
        const value: unknown = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const leases = new SessionLeases({
      store: Object.assign(Object.create(store) as typeof store, { leases: slowRenew }),
      owner: "gw_me",
      ttlMs: TTL,
      clock,
      logger: silentLogger(),
      onLost: (key) => lost.push(key),
      onSweep: async () => {},
    });
    await leases.acquire("s1");
    midRenewal = () => leases.acquire("s2");
    clock.advance(TTL / 3);
    await leases.tick();
    expect(lost).toEqual([]);
    expect(await store.leases.getSession("s2", clock.now())).toMatchObject({ owner: "gw_me", fence: 1 });
    // Still held from then on: the next renewal extends both.
    midRenewal = undefined;
    clock.advance(TTL / 3);
    await leases.tick();
    expect(lost).toEqual([]);
    expect((await store.leases.renew("gw_me", clock.now(), TTL)).sessions).toEqual(["s1", "s2"]);
  });

  it("reuses a held lease between turns, keeps it while renewed, gives it back when idle", async () => {
    const { store, clock, leases } = setup();
    const first = await leases.acquire("s1");
    expect(first).toEqual({ owner: "gw_me", fence: 1 });
    leases.release("s1", first as { owner: string; fence: number });
    expect(await leases.acquire("s1")).toEqual(first); // no new grant: same fence
    leases.release("s1", first as { owner: string; fence: number });

    clock.advance(TTL / 3);
    await leases.tick(); // renews; idle for exactly a third of the TTL: given back
    expect(await store.leases.getSession("s1", clock.now())).toBeUndefined();
    expect(await leases.acquire("s1")).toEqual({ owner: "gw_me", fence: 2 });
  });

  it("keeps a busy session's lease however long the turn runs, renewing it", async () => {
    const { store, clock, leases } = setup();
    await leases.acquire("s1");
    for (let i = 0; i < 5; i++) {
      clock.advance(TTL / 3);
      await leases.tick();
    }
    expect(await store.leases.getSession("s1", clock.now())).toMatchObject({ owner: "gw_me", fence: 1 });
  });

  it("keeps a pinned lease (an unsaved turn) until restart", async () => {
    const { store, clock, leases } = setup();
    const lease = (await leases.acquire("s1")) as { owner: string; fence: number };
    leases.release("s1", lease, { keep: true });
    for (let i = 0; i < 3; i++) {
      clock.advance(TTL / 3);
      await leases.tick(); // renewed, and not given back although idle
    }
    await leases.releaseIdle();
    expect(await store.leases.getSession("s1", clock.now())).toMatchObject({ owner: "gw_me" });
  });

  it("aborts the turn of a session whose lease was lost, and sweeps on every tick", async () => {
    const { store, clock, leases, lost, sweeps } = setup();
    await leases.acquire("s1");
    clock.advance(TTL + 1); // stalled past the TTL: another process takes the session
    expect(await store.leases.acquireSession("s1", "gw_other", clock.now(), TTL)).toMatchObject({ fence: 2 });
    await leases.tick();
    expect(lost).toEqual(["s1"]);
    expect(sweeps()).toBe(1);
  });
});
