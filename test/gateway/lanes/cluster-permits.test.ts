/**
 * ClusterPermits on a real SQLite store, two processes simulated as two instances with their own
 * owner ids on one database, time driven by a ManualClock: the cap, the in-process wake, the
 * poll, person-first across processes, abort, renewal, and a dead process's permit expiring.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClusterPermits } from "../../../src/gateway/lanes/cluster-permits.js";
import { ClusterSlotPool } from "../../../src/gateway/lanes/cluster-slot-pool.js";
import { LaneAbortedError } from "../../../src/gateway/lanes/errors.js";
import { GlobalLane } from "../../../src/gateway/lanes/global-lane.js";
import type { LanePriority, SlotLease } from "../../../src/gateway/lanes/types.js";
import { openSqliteStore } from "../../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../../src/store/types.js";
import { ManualClock } from "../../../src/util/clock.js";

const TTL = 3_000;
const POLL = 100;

/** Lets the store's answers and every continuation run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface Tracked {
  lease: SlotLease | null;
  error: unknown;
}

function track(
  pool: { acquire(p: LanePriority, s: AbortSignal): Promise<SlotLease> },
  priority: LanePriority,
  signal = new AbortController().signal,
): Tracked {
  const t: Tracked = { lease: null, error: undefined };
  pool.acquire(priority, signal).then(
    (lease) => {
      t.lease = lease;
    },
    (error: unknown) => {
      t.error = error;
    },
  );
  return t;
}

describe("ClusterPermits", () => {
  let store: Store;
  let clock: ManualClock;
  const nodes: ClusterPermits[] = [];

  function node(owner: string, limit = 1, reservedForHuman = 0): ClusterPermits {
    const permits = new ClusterPermits({
      permits: store.permits,
      owner,
      limit,
      reservedForHuman,
      ttlMs: TTL,
      pollMs: POLL,
      clock,
    });
    nodes.push(permits);
    return permits;
  }

  beforeEach(() => {
    store = openSqliteStore({ path: ":memory:" });
    clock = new ManualClock();
  });
  afterEach(async () => {
    for (const n of nodes.splice(0)) await n.close();
    await store.close();
  });

  it("caps calls across two processes; a release on another process is seen at the next poll", async () => {
    const a = node("gw_a");
    const b = node("gw_b");
    const held = track(a, "human");
    await flush();
    expect(held.lease).not.toBeNull();
    const waiting = track(b, "background");
    await flush();
    expect(waiting.lease).toBeNull();
    held.lease?.release();
    await flush();
    expect(waiting.lease).toBeNull(); // B is not woken by A's release: it polls
    await clock.advanceAsync(POLL);
    await flush();
    expect(waiting.lease).not.toBeNull();
    expect((await store.permits.census(clock.now())).permits).toEqual({ gw_b: 1 });
  });

  it("a release of this process's own permit wakes its waiting call at once, without a poll", async () => {
    const a = node("gw_a");
    const first = track(a, "normal");
    await flush();
    const second = track(a, "normal");
    await flush();
    expect(second.lease).toBeNull();
    first.lease?.release();
    await flush();
    expect(second.lease).not.toBeNull();
  });

  it("a person waiting on one process goes before background work queued earlier on another", async () => {
    const a = node("gw_a");
    const b = node("gw_b");
    const running = track(a, "background");
    await flush();
    const laterBackground = track(a, "background");
    await flush();
    const person = track(b, "human");
    await flush();
    expect(person.lease).toBeNull();
    // A's release wakes A's own background call first, but B's person's demand outranks it.
    running.lease?.release();
    await flush();
    expect(laterBackground.lease).toBeNull();
    await clock.advanceAsync(POLL);
    await flush();
    expect(person.lease).not.toBeNull();
    expect(laterBackground.lease).toBeNull();
    person.lease?.release();
    await clock.advanceAsync(POLL);
    await flush();
    expect(laterBackground.lease).not.toBeNull();
  });

  it("helper work waiting behind a person on the same process keeps its place before other processes' background work", async () => {
    const a = node("gw_a");
    const b = node("gw_b");
    const c = node("gw_c");
    const running = track(b, "normal");
    await flush();
    const background = track(c, "background");
    await flush();
    // A's person and A's helper call both wait: each rank's first call has its demand stored.
    const person = track(a, "human");
    const helper = track(a, "normal");
    await flush();
    expect((await store.permits.census(clock.now())).demands).toEqual({ human: 1, normal: 1, background: 1 });
    running.lease?.release();
    await clock.advanceAsync(POLL);
    await flush();
    expect(person.lease).not.toBeNull();
    person.lease?.release();
    await flush();
    // A's release wakes A's helper at once; C's background (queued before either) still waits.
    expect(helper.lease).not.toBeNull();
    expect(background.lease).toBeNull();
    helper.lease?.release();
    await clock.advanceAsync(POLL);
    await flush();
    expect(background.lease).not.toBeNull();
  });

  it("keeps reservedForHuman permits for people across processes", async () => {
    const a = node("gw_a", 2, 1);
    const b = node("gw_b", 2, 1);
    const bg = track(a, "background");
    await flush();
    const normal = track(b, "normal");
    await flush();
    expect(bg.lease).not.toBeNull();
    expect(normal.lease).toBeNull();
    const person = track(b, "human");
    await flush();
    expect(person.lease).not.toBeNull();
  });

  it("an abort withdraws the waiting call and its demand", async () => {
    const a = node("gw_a");
    const b = node("gw_b");
    const held = track(a, "background");
    await flush();
    const stop = new AbortController();
    const person = track(b, "human", stop.signal);
    await flush();
    expect((await store.permits.census(clock.now())).demands.human).toBe(1);
    stop.abort(new Error("user stop"));
    await flush();
    expect(person.error).toEqual(new Error("user stop"));
    expect(b.waiting()).toEqual({ human: 0, normal: 0, background: 0 });
    expect((await store.permits.census(clock.now())).demands.human).toBe(0);
    // Nothing demands a permit any more: A's next background call runs after the release.
    held.lease?.release();
    await flush();
    const next = track(a, "background");
    await flush();
    expect(next.lease).not.toBeNull();
  });

  it("renews a permit held longer than its TTL, and the demand of a call waiting that long", async () => {
    const a = node("gw_a");
    const b = node("gw_b");
    const long = track(a, "human");
    await flush();
    const waiting = track(b, "human");
    await clock.advanceAsync(3 * TTL);
    await flush();
    expect(long.lease).not.toBeNull();
    expect(waiting.lease).toBeNull();
    expect(await store.permits.census(clock.now())).toEqual({
      permits: { gw_a: 1 },
      demands: { human: 1, normal: 0, background: 0 },
    });
  });

  it("a process that dies holding a permit leaks it for one TTL only", async () => {
    // The dead process's timers run on a clock that never moves again: it renews nothing.
    const dead = new ClusterPermits({
      permits: store.permits,
      owner: "gw_dead",
      limit: 1,
      ttlMs: TTL,
      clock: new ManualClock(clock.now()),
    });
    const held = track(dead, "human");
    await flush();
    expect(held.lease).not.toBeNull();
    const b = node("gw_b");
    const waiting = track(b, "background");
    await clock.advanceAsync(TTL - POLL);
    await flush();
    expect(waiting.lease).toBeNull();
    await clock.advanceAsync(POLL);
    await flush();
    expect(waiting.lease).not.toBeNull();
  });

  it("close fails the waiting calls and removes every row of this process from the store", async () => {
    const a = node("gw_a");
    const held = track(a, "normal");
    await flush();
    const waiting = track(a, "human");
    await flush();
    expect(held.lease).not.toBeNull();
    expect((await store.permits.census(clock.now())).demands.human).toBe(1);
    await a.close();
    await flush();
    expect(waiting.error).toBeInstanceOf(LaneAbortedError);
    expect(await store.permits.census(clock.now())).toEqual({
      permits: {},
      demands: { human: 0, normal: 0, background: 0 },
    });
    held.lease?.release(); // after close: nothing to give back, nothing thrown
    await expect(a.acquire("human", new AbortController().signal)).rejects.toBeInstanceOf(LaneAbortedError);
  });

  it("as a pool: a local slot, then a permit; an abort while waiting for the permit gives the slot back", async () => {
    const local = new GlobalLane({ maxConcurrent: 2, reservedForHuman: 0 });
    const other = node("gw_other");
    const pool = new ClusterSlotPool(local, node("gw_a"));
    const blocker = track(other, "human");
    await flush();
    expect(blocker.lease).not.toBeNull();
    const stop = new AbortController();
    const call = track(pool, "human", stop.signal);
    await flush();
    expect(local.inUse).toBe(1);
    expect(pool.waiting().human).toBe(1);
    stop.abort(new Error("stop"));
    await flush();
    expect(call.error).toEqual(new Error("stop"));
    expect(local.inUse).toBe(0);
    blocker.lease?.release();
    await flush();
    const granted = await pool.acquire("normal", new AbortController().signal);
    expect(local.inUse).toBe(1);
    granted.release();
    granted.release();
    await flush();
    expect(local.inUse).toBe(0);
    expect((await store.permits.census(clock.now())).permits).toEqual({});
  });
});
