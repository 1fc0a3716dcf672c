/**
 * Clock: the ManualClock drives its timers in due order, and both clocks share the sleep
 * contract (resolves after ms, rejects with the signal's reason on abort).
 */
import { describe, expect, it } from "vitest";
import { ManualClock, MAX_TIMER_MS, systemClock } from "../../src/util/clock.js";

describe("ManualClock", () => {
  it("fires due timers in due order, ties in scheduling order, with now() at each due time", () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 20);
    clock.setTimeout(() => fired.push("late"), 31);
    clock.advance(30);
    expect(fired).toEqual(["a@10", "b@20", "c@20"]);
    expect(clock.now()).toBe(30);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextDueMs()).toBe(31);
  });

  it("fires in the same advance a timer a callback schedules before the target", () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    const tick = () => {
      fired.push(clock.now());
      clock.setTimeout(tick, 10);
    };
    clock.setTimeout(tick, 10);
    clock.advance(35);
    expect(fired).toEqual([10, 20, 30]);
    expect(clock.nextDueMs()).toBe(40);
  });

  it("cancels with clearTimeout and ignores unknown handles", () => {
    const clock = new ManualClock(0);
    let fired = false;
    const handle = clock.setTimeout(() => {
      fired = true;
    }, 5);
    clock.clearTimeout(handle);
    clock.clearTimeout(handle);
    clock.clearTimeout(undefined);
    clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("clamps delays like Node: negative and NaN to 0, beyond 2^31-1 to the cap", () => {
    const clock = new ManualClock(0);
    clock.setTimeout(() => {}, -5);
    expect(clock.nextDueMs()).toBe(0);
    clock.advance(0);
    clock.setTimeout(() => {}, Number.NaN);
    expect(clock.nextDueMs()).toBe(0);
    clock.advance(0);
    clock.setTimeout(() => {}, Number.MAX_SAFE_INTEGER);
    expect(clock.nextDueMs()).toBe(MAX_TIMER_MS);
  });

  it("rethrows the first callback error after firing the rest", () => {
    const clock = new ManualClock(0);
    let after = false;
    clock.setTimeout(() => {
      throw new Error("boom");
    }, 1);
    clock.setTimeout(() => {
      after = true;
    }, 2);
    expect(() => clock.advance(5)).toThrow("boom");
    expect(after).toBe(true);
    expect(clock.now()).toBe(5);
  });

  it("advanceAsync lets promise continuations schedule the next wait before it moves on", async () => {
    const manual = new ManualClock(0);
    const woke: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await manual.sleep(100);
        woke.push(manual.now());
      }
    })();
    await manual.advanceAsync(300);
    await loop;
    expect(woke).toEqual([100, 200, 300]);
  });

  it("advance alone fires only the timers scheduled before it", async () => {
    const manual = new ManualClock(0);
    const woke: number[] = [];
    void (async () => {
      await manual.sleep(100);
      woke.push(manual.now());
      await manual.sleep(100);
      woke.push(manual.now());
    })();
    manual.advance(300);
    await Promise.resolve();
    expect(woke).toEqual([300]);
    expect(manual.nextDueMs()).toBe(400);
  });

  it("set steps the wall clock: nothing fires, pending timers keep the delay they had left", () => {
    const clock = new ManualClock(100);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 50);
    clock.set(10_000);
    expect(fired).toEqual([]);
    expect(clock.nextDueMs()).toBe(10_050);
    clock.set(0);
    expect(clock.nextDueMs()).toBe(50);
    clock.advance(50);
    expect(fired).toEqual([50]);
  });

  it("refuses a negative advance", () => {
    expect(() => new ManualClock(0).advance(-1)).toThrow(RangeError);
  });
});

describe.each([
  ["ManualClock", () => new ManualClock(0)],
  ["systemClock", () => systemClock],
] as const)("%s.sleep", (_name, make) => {
  it("rejects at once with the reason of an aborted signal and leaves no timer", async () => {
    const clock = make();
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(clock.sleep(1_000, controller.signal)).rejects.toThrow("stop");
    if (clock instanceof ManualClock) expect(clock.pendingTimers).toBe(0);
  });

  it("rejects when the signal aborts while waiting, and clears its timer", async () => {
    const clock = make();
    const controller = new AbortController();
    const slept = clock.sleep(60_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(slept).rejects.toThrow("stop");
    if (clock instanceof ManualClock) expect(clock.pendingTimers).toBe(0);
  });
});

describe("ManualClock.sleep", () => {
  it("resolves when time reaches it, not before", async () => {
    const manual = new ManualClock(0);
    let done = false;
    void manual.sleep(100).then(() => {
      done = true;
    });
    await manual.advanceAsync(99);
    expect(done).toBe(false);
    await manual.advanceAsync(1);
    expect(done).toBe(true);
  });
});

describe("systemClock", () => {
  it("runs a timer on Node's timers", async () => {
    const fired = await new Promise<boolean>((resolve) => {
      systemClock.setTimeout(() => resolve(true), 1, { unref: true });
    });
    expect(fired).toBe(true);
  });
});
