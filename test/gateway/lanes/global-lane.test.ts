import { describe, expect, it } from "vitest";
import { GlobalLane } from "../../../src/gateway/lanes/global-lane.js";
import type { LanePriority, SlotLease } from "../../../src/gateway/lanes/types.js";
import { ManualClock } from "../../../src/util/clock.js";

/** Lets every pending promise callback run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** An acquire whose outcome the test can read synchronously after a flush. */
function track(pool: GlobalLane, priority: LanePriority, signal = new AbortController().signal) {
  const t: { lease: SlotLease | null; error: unknown; settled: boolean } = {
    lease: null,
    error: undefined,
    settled: false,
  };
  pool.acquire(priority, signal).then(
    (lease) => {
      t.lease = lease;
      t.settled = true;
    },
    (error: unknown) => {
      t.error = error;
      t.settled = true;
    },
  );
  return t;
}

describe("GlobalLane", () => {
  it("admits waiting humans first, then normal, then background, each FIFO", async () => {
    const pool = new GlobalLane({ maxConcurrent: 1, reservedForHuman: 0 });
    const first = await pool.acquire("background", new AbortController().signal);
    const order: string[] = [];
    const names = ["bg1", "n1", "h1", "bg2", "h2", "n2"];
    const leases = new Map<string, SlotLease>();
    for (const name of names) {
      const priority: LanePriority = name.startsWith("h")
        ? "human"
        : name.startsWith("n")
          ? "normal"
          : "background";
      void pool.acquire(priority, new AbortController().signal).then((lease) => {
        order.push(name);
        leases.set(name, lease);
      });
    }
    expect(pool.waiting()).toEqual({ human: 2, normal: 2, background: 2 });
    first.release();
    await flush();
    for (let i = 0; i < names.length; i++) {
      const last = order[order.length - 1] as string;
      leases.get(last)?.release();
      await flush();
    }
    expect(order).toEqual(["h1", "h2", "n1", "n2", "bg1", "bg2"]);
    expect(pool.inUse).toBe(0);
  });

  it("never lets background work into reserved slots, even with 500 background waiters", async () => {
    const pool = new GlobalLane({ maxConcurrent: 4, reservedForHuman: 1 });
    const bg = Array.from({ length: 500 }, () => track(pool, "background"));
    await flush();
    expect(pool.inUse).toBe(3);
    expect(pool.held()).toEqual({ human: 0, normal: 0, background: 3 });
    expect(pool.waiting().background).toBe(497);

    // The reserved slot is free: a human gets it at once.
    const h1 = track(pool, "human");
    await flush();
    expect(h1.lease).not.toBeNull();
    expect(pool.inUse).toBe(4);

    // Everything is in use: the next human is first in line on the next release.
    const h2 = track(pool, "human");
    await flush();
    expect(h2.settled).toBe(false);
    bg[0]?.lease?.release();
    await flush();
    expect(h2.lease).not.toBeNull();
    expect(pool.held()).toEqual({ human: 2, normal: 0, background: 2 });

    // Freeing a human slot leaves 3 in use: background may not take it (3 ≥ 4 - 1).
    h1.lease?.release();
    await flush();
    expect(pool.inUse).toBe(3);
    expect(pool.waiting().background).toBe(497);
    h2.lease?.release();
    await flush();
    expect(pool.held()).toEqual({ human: 0, normal: 0, background: 3 });
    expect(pool.waiting().background).toBe(496);
  });

  it("makes normal work respect the reservation too", async () => {
    const pool = new GlobalLane({ maxConcurrent: 2, reservedForHuman: 1 });
    const n1 = track(pool, "normal");
    const n2 = track(pool, "normal");
    await flush();
    expect(n1.lease).not.toBeNull();
    expect(n2.settled).toBe(false);
    const h = track(pool, "human");
    await flush();
    expect(h.lease).not.toBeNull();
    // One slot held by the human: the other one is the reserved one, still closed to normal work.
    n1.lease?.release();
    await flush();
    expect(n2.settled).toBe(false);
    h.lease?.release();
    await flush();
    expect(n2.lease).not.toBeNull();
  });

  it("rejects with the signal's reason and removes the waiter when aborted while waiting", async () => {
    const pool = new GlobalLane({ maxConcurrent: 1, reservedForHuman: 0 });
    const holder = await pool.acquire("human", new AbortController().signal);
    const controller = new AbortController();
    const waiter = track(pool, "normal", controller.signal);
    const next = track(pool, "background");
    expect(pool.waiting()).toEqual({ human: 0, normal: 1, background: 1 });
    const reason = new Error("stop");
    controller.abort(reason);
    await flush();
    expect(waiter.error).toBe(reason);
    expect(pool.waiting()).toEqual({ human: 0, normal: 0, background: 1 });
    holder.release();
    await flush();
    expect(next.lease).not.toBeNull();
    expect(pool.inUse).toBe(1);
  });

  it("rejects at once when the signal is already aborted", async () => {
    const pool = new GlobalLane();
    const reason = new Error("already");
    await expect(pool.acquire("human", AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(pool.inUse).toBe(0);
  });

  it("ignores a second release", async () => {
    const pool = new GlobalLane({ maxConcurrent: 2, reservedForHuman: 0 });
    const a = await pool.acquire("normal", new AbortController().signal);
    await pool.acquire("normal", new AbortController().signal);
    const w1 = track(pool, "normal");
    const w2 = track(pool, "normal");
    a.release();
    a.release();
    await flush();
    expect(pool.inUse).toBe(2);
    expect(w1.lease).not.toBeNull();
    expect(w2.settled).toBe(false);
  });

  it("reports every grant to onWait with the time waited", async () => {
    const clock = new ManualClock();
    const seen: Array<[LanePriority, number]> = [];
    const pool = new GlobalLane({
      maxConcurrent: 1,
      reservedForHuman: 0,
      clock,
      onWait: (priority, waitedMs) => seen.push([priority, waitedMs]),
    });
    const first = await pool.acquire("normal", new AbortController().signal);
    const waiter = track(pool, "human");
    clock.advance(250);
    first.release();
    await flush();
    expect(waiter.lease).not.toBeNull();
    expect(seen).toEqual([
      ["normal", 0],
      ["human", 250],
    ]);
  });

  it("validates its options, naming the field, the value and what was expected", () => {
    expect(() => new GlobalLane({ maxConcurrent: 0 })).toThrow(/maxConcurrent must be an integer ≥ 1, got 0/);
    expect(() => new GlobalLane({ maxConcurrent: 2.5 })).toThrow(/maxConcurrent .* got 2\.5/);
    expect(() => new GlobalLane({ maxConcurrent: 4, reservedForHuman: 4 })).toThrow(
      /reservedForHuman must be an integer from 0 to 3 .* got 4/,
    );
    expect(() => new GlobalLane({ reservedForHuman: -1 })).toThrow(/reservedForHuman .* got -1/);
    expect(() => new GlobalLane({ maxConcurrent: 1, reservedForHuman: 1 })).toThrow(
      /reservedForHuman .* from 0 to 0 .* got 1/,
    );
    const pool = new GlobalLane();
    expect([pool.maxConcurrent, pool.reservedForHuman]).toEqual([4, 1]);
    expect(new GlobalLane({ maxConcurrent: 1 }).reservedForHuman).toBe(0);
  });
});
