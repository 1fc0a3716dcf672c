/**
 * The heartbeat clock on a ManualClock shared with a real LaneQueue: beats on a fixed cadence,
 * skips while the checklist is empty, runs as background work, and coalesces a beat still waiting.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { HeartbeatScheduler } from "../../src/cron/heartbeat-scheduler.js";
import { GlobalLane } from "../../src/gateway/lanes/global-lane.js";
import { LaneQueue } from "../../src/gateway/lanes/lane-queue.js";
import type { LaneQueueEvent } from "../../src/gateway/lanes/types.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";

let clock: ManualClock;
beforeEach(() => {
  clock = new ManualClock();
});

function setup(options: { idle?: boolean; runMs?: number } = {}) {
  const events: LaneQueueEvent[] = [];
  const lanes = new LaneQueue({
    pool: new GlobalLane({ maxConcurrent: 2, reservedForHuman: 1, clock }),
    onEvent: (e) => events.push(e),
    clock,
  });
  let runs = 0;
  const scheduler = new HeartbeatScheduler({
    everyMs: 60_000,
    sessionKey: "agent:main:heartbeat",
    lanes,
    isIdle: async () => options.idle ?? false,
    run: async (ctx) => {
      runs++;
      const lease = await ctx.acquireModelSlot();
      await clock.sleep(options.runMs ?? 10);
      lease.release();
    },
    logger: silentLogger(),
    clock,
  });
  return { scheduler, events, lanes, runs: () => runs };
}

describe("HeartbeatScheduler", () => {
  it("beats every everyMs as a background heartbeat task, and stops", async () => {
    const { scheduler, events, runs } = setup();
    scheduler.start();
    await clock.advanceAsync(59_999);
    expect(runs()).toBe(0);
    await clock.advanceAsync(1);
    await clock.advanceAsync(100);
    expect(runs()).toBe(1);
    expect(events.find((e) => e.type === "enqueued")).toMatchObject({
      sessionKey: "agent:main:heartbeat",
      priority: "background",
      origin: "heartbeat",
    });
    await clock.advanceAsync(120_000);
    expect(runs()).toBe(3);
    scheduler.stop();
    await clock.advanceAsync(600_000);
    expect(runs()).toBe(3);
  });

  it("skips without running anything while the checklist is empty", async () => {
    const { scheduler, runs } = setup({ idle: true });
    expect(await scheduler.beat()).toBe("skipped_idle");
    scheduler.start();
    await clock.advanceAsync(180_000);
    expect(runs()).toBe(0);
    scheduler.stop();
  });

  it("skips a beat while its session is busy: at most one heartbeat per session, ever", async () => {
    const { scheduler, runs } = setup({ runMs: 200_000 });
    expect(await scheduler.beat()).toBe("enqueued"); // starts at once, runs long
    expect(await scheduler.beat()).toBe("skipped_busy"); // nothing queued behind it
    await clock.advanceAsync(500_000);
    expect(runs()).toBe(1);
    expect(await scheduler.beat()).toBe("enqueued"); // free again
  });

  it("beats only within activeHours (across midnight too)", async () => {
    const { withinHours } = await import("../../src/capabilities/heartbeat/heartbeat.js");
    const at = (hhmm: string) => Date.parse(`2026-11-24T${hhmm}:00Z`);
    const day = { start: "08:00", end: "22:00" };
    expect(
      [at("07:59"), at("08:00"), at("21:59"), at("22:00")].map((t) => withinHours(t, day, "UTC")),
    ).toEqual([false, true, true, false]);
    const night = { start: "22:00", end: "06:00" };
    expect([at("23:00"), at("05:59"), at("12:00")].map((t) => withinHours(t, night, "UTC"))).toEqual([
      true,
      true,
      false,
    ]);
    // 08:30 UTC is 09:30 in Berlin: inside 09:00–17:00 there, not in New York (03:30).
    expect(withinHours(at("08:30"), { start: "09:00", end: "17:00" }, "Europe/Berlin")).toBe(true);
    expect(withinHours(at("08:30"), { start: "09:00", end: "17:00" }, "America/New_York")).toBe(false);
    const lanes = setup().lanes;
    const inactive = new HeartbeatScheduler({
      everyMs: 60_000,
      sessionKey: "agent:main:heartbeat",
      lanes,
      isActive: () => false,
      isIdle: async () => false,
      run: async () => {},
      logger: silentLogger(),
      clock,
    });
    expect(await inactive.beat()).toBe("skipped_inactive");
  });

  it("reports a beat that could not be scheduled as failed, and keeps its cadence", async () => {
    let checks = 0;
    const scheduler = new HeartbeatScheduler({
      ...baseOptions(),
      everyMs: 60_000,
      isIdle: async () => {
        checks++;
        throw new Error("HEARTBEAT.md unreadable");
      },
    });
    expect(await scheduler.beat()).toBe("failed");
    scheduler.start();
    await clock.advanceAsync(120_000);
    expect(checks).toBe(3); // the failed beat above, then one per minute
    scheduler.stop();
  });

  it("refuses a bad interval", () => {
    expect(() => setup().scheduler && new HeartbeatScheduler({ ...baseOptions(), everyMs: 0 })).toThrow(
      /everyMs must be a positive integer, got 0/,
    );
  });

  it("says when the next beat fires and what the last one did (status reads them)", async () => {
    const start = clock.now();
    const { scheduler } = setup({ idle: true });
    expect(scheduler.nextBeatAt).toBeUndefined();
    scheduler.start();
    expect(scheduler.nextBeatAt).toBe(start + 60_000);
    expect(scheduler.lastBeat).toBeUndefined();
    await clock.advanceAsync(60_000);
    expect(scheduler.lastBeat).toEqual({ at: start + 60_000, outcome: "skipped_idle" });
    expect(scheduler.nextBeatAt).toBe(start + 120_000);
    scheduler.stop();
    expect(scheduler.nextBeatAt).toBeUndefined();
  });
});

function baseOptions() {
  return {
    everyMs: 1,
    sessionKey: "k",
    lanes: new LaneQueue({ pool: new GlobalLane({ maxConcurrent: 1, reservedForHuman: 0, clock }), clock }),
    isIdle: async () => false,
    run: async () => {},
    logger: silentLogger(),
    clock,
  };
}
