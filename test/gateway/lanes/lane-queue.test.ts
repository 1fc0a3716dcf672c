import { describe, expect, it } from "vitest";
import { GlobalLane } from "../../../src/gateway/lanes/global-lane.js";
import { LaneQueue } from "../../../src/gateway/lanes/lane-queue.js";
import type {
  LaneOrigin,
  LanePriority,
  LaneQueueEvent,
  LaneTask,
  LaneTaskContext,
} from "../../../src/gateway/lanes/types.js";
import { LaneAbortedError } from "../../../src/gateway/lanes/errors.js";
import { ManualClock } from "../../../src/util/clock.js";

/** Lets every pending promise callback run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function deferred<T = void>() {
  let resolve: (value: T) => void = () => {};
  let reject: (reason: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const originOf: Record<LanePriority, LaneOrigin> = { human: "user", normal: "subagent", background: "cron" };

/** A task that logs its start and finishes when the test opens its gate. */
function gated(sessionKey: string, priority: LanePriority, name: string, log: string[]) {
  const gate = deferred();
  let ctx: LaneTaskContext | undefined;
  const task: LaneTask<string> = {
    sessionKey,
    priority,
    origin: originOf[priority],
    coalesceKey: name, // distinct, so ordering tests never coalesce
    run: async (c) => {
      ctx = c;
      log.push(name);
      await gate.promise;
      return name;
    },
  };
  return { task, open: () => gate.resolve(), ctx: () => ctx as LaneTaskContext };
}

/** A queue and its pool on one ManualClock (nothing here waits on the wall clock). */
function newQueue(extra: Partial<ConstructorParameters<typeof LaneQueue>[0]> = {}) {
  const clock = new ManualClock();
  const pool = new GlobalLane({ maxConcurrent: 4, reservedForHuman: 1, clock });
  return { pool, clock, queue: new LaneQueue({ pool, clock, ...extra }) };
}

describe("LaneQueue ordering", () => {
  it("runs one task per session at a time, in arrival order", async () => {
    const { queue } = newQueue();
    const log: string[] = [];
    const tasks = ["a", "b", "c", "d"].map((n) => gated("s1", "normal", n, log));
    const handles = tasks.map((t) => queue.enqueue(t.task));
    expect(log).toEqual(["a"]);
    expect(queue.runningCount).toBe(1);
    expect(queue.pendingCount("s1")).toBe(3);
    for (const t of tasks) {
      t.open();
      await flush();
    }
    expect(log).toEqual(["a", "b", "c", "d"]);
    expect(await Promise.all(handles.map((h) => h.done))).toEqual(["a", "b", "c", "d"]);
  });

  it("runs sessions independently", () => {
    const { queue } = newQueue();
    const log: string[] = [];
    queue.enqueue(gated("s1", "background", "a", log).task);
    queue.enqueue(gated("s2", "background", "b", log).task);
    expect(log).toEqual(["a", "b"]);
    expect(queue.runningCount).toBe(2);
    expect(queue.laneCount).toBe(2);
  });

  it("puts waiting human tasks before waiting background/normal tasks of the same session", async () => {
    const { queue } = newQueue();
    const log: string[] = [];
    const tasks = [
      gated("s", "background", "cron-running", log),
      gated("s", "background", "cron2", log),
      gated("s", "normal", "announce", log),
      gated("s", "human", "h1", log),
      gated("s", "human", "h2", log),
      gated("s", "background", "cron3", log),
    ];
    for (const t of tasks) queue.enqueue(t.task);
    expect(queue.stats().pending).toEqual({ human: 2, normal: 1, background: 2 });
    for (const t of [0, 3, 4, 1, 2, 5]) {
      tasks[t]?.open();
      await flush();
    }
    expect(log).toEqual(["cron-running", "h1", "h2", "cron2", "announce", "cron3"]);
  });
});

describe("LaneQueue coalescing", () => {
  it("merges a background task into a waiting one with the same key", async () => {
    const events: LaneQueueEvent[] = [];
    const { queue } = newQueue({ onEvent: (e) => events.push(e) });
    const log: string[] = [];
    const busy = gated("s", "human", "turn", log);
    queue.enqueue(busy.task);
    let beats = 0;
    const heartbeat: LaneTask<number> = {
      sessionKey: "s",
      priority: "background",
      origin: "heartbeat",
      run: async () => ++beats,
    };
    const first = queue.enqueue(heartbeat);
    const second = queue.enqueue(heartbeat);
    expect(first.coalesced).toBe(false);
    expect(second).toMatchObject({ id: first.id, coalesced: true });
    expect(second.done).toBe(first.done);
    expect(queue.pendingCount("s")).toBe(1);
    expect(events.filter((e) => e.type === "coalesced")).toEqual([
      {
        type: "coalesced",
        id: first.id,
        sessionKey: "s",
        priority: "background",
        origin: "heartbeat",
        coalesceKey: "s:heartbeat",
      },
    ]);
    busy.open();
    expect(await first.done).toBe(1);
    // Once the heartbeat has started, a new one is queued, not merged.
    const third = queue.enqueue(heartbeat);
    expect(third.coalesced).toBe(false);
    expect(await third.done).toBe(2);
  });

  it("never coalesces human tasks, and raises a merged background task to normal", async () => {
    const { queue, pool } = newQueue();
    const log: string[] = [];
    const busy = gated("s", "human", "turn", log);
    queue.enqueue(busy.task);
    const human = {
      sessionKey: "s",
      priority: "human",
      origin: "user",
      coalesceKey: "k",
      run: async () => {},
    };
    expect(queue.enqueue({ ...human } as LaneTask).coalesced).toBe(false);
    expect(queue.enqueue({ ...human } as LaneTask).coalesced).toBe(false);
    let heldWhileRunning: Record<LanePriority, number> | undefined;
    const bg: LaneTask = {
      sessionKey: "s",
      priority: "background",
      origin: "cron",
      coalesceKey: "job",
      run: async (ctx) => {
        const lease = await ctx.acquireModelSlot();
        heldWhileRunning = pool.held();
        lease.release();
      },
    };
    queue.enqueue(bg);
    const merged = queue.enqueue({ ...bg, priority: "normal", origin: "subagent" });
    expect(merged.coalesced).toBe(true);
    expect(queue.stats().pending).toEqual({ human: 2, normal: 1, background: 0 });
    busy.open();
    await merged.done;
    expect(heldWhileRunning).toEqual({ human: 0, normal: 1, background: 0 });
  });
});

describe("LaneQueue watchdog", () => {
  it("aborts a run that makes no progress for progressTimeoutMs", async () => {
    const { queue, clock } = newQueue({ progressTimeoutMs: 5_000 });
    let signal: AbortSignal | undefined;
    const handle = queue.enqueue({
      sessionKey: "s",
      priority: "human",
      origin: "user",
      run: (ctx) =>
        new Promise<void>((_, reject) => {
          signal = ctx.signal;
          ctx.signal.addEventListener("abort", () => reject(new Error("provider stream aborted")));
        }),
    });
    await clock.advanceAsync(4_999);
    expect(signal?.aborted).toBe(false);
    await clock.advanceAsync(1);
    expect(signal?.aborted).toBe(true);
    const error = await handle.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LaneAbortedError);
    expect((error as LaneAbortedError).reason).toBe("progress_timeout");
    expect(error).toBe(signal?.reason);
  });

  it("never aborts a run that keeps progressing, for 10× the timeout", async () => {
    const { queue, clock } = newQueue({ progressTimeoutMs: 5_000 });
    let aborted = false;
    const handle = queue.enqueue({
      sessionKey: "s",
      priority: "human",
      origin: "user",
      run: async (ctx) => {
        ctx.signal.addEventListener("abort", () => {
          aborted = true;
        });
        for (let t = 0; t < 50_000; t += 1_000) {
          await clock.sleep(1_000);
          for (let token = 0; token < 100; token++) ctx.progress();
        }
        return "answer";
      },
    });
    await clock.advanceAsync(50_000);
    expect(aborted).toBe(false);
    await expect(handle.done).resolves.toBe("answer");
  });

  it("does not count time spent waiting for a model slot as a stall", async () => {
    const clock = new ManualClock();
    const pool = new GlobalLane({ maxConcurrent: 1, reservedForHuman: 0, clock });
    const queue = new LaneQueue({ pool, clock, progressTimeoutMs: 5_000 });
    const other = await pool.acquire("human", new AbortController().signal);
    let granted = false;
    const handle = queue.enqueue({
      sessionKey: "s",
      priority: "background",
      origin: "cron",
      run: async (ctx) => {
        const lease = await ctx.acquireModelSlot();
        granted = true;
        lease.release();
      },
    });
    await clock.advanceAsync(20_000);
    expect(granted).toBe(false);
    other.release();
    await expect(handle.done).resolves.toBeUndefined();
    expect(granted).toBe(true);
  });
});

describe("LaneQueue aborts", () => {
  it("abortRunning puts a LaneAbortedError with the reason on the signal, then runs the next task", async () => {
    const { queue } = newQueue();
    let reason: unknown;
    const handle = queue.enqueue({
      sessionKey: "s",
      priority: "human",
      origin: "user",
      run: (ctx) =>
        new Promise<void>((_, reject) => {
          ctx.signal.addEventListener("abort", () => {
            reason = ctx.signal.reason;
            reject(ctx.signal.reason);
          });
        }),
    });
    const log: string[] = [];
    const next = gated("s", "human", "next", log);
    queue.enqueue(next.task);
    expect(queue.isBusy("s")).toBe(true);
    expect(queue.abortRunning("s", "user_stop")).toBe(true);
    expect(queue.abortRunning("s", "user_stop")).toBe(false);
    expect(queue.abortRunning("nobody", "user_stop")).toBe(false);
    expect(reason).toBeInstanceOf(LaneAbortedError);
    expect((reason as LaneAbortedError).reason).toBe("user_stop");
    await expect(handle.done).rejects.toBe(reason);
    expect(log).toEqual(["next"]);
  });

  it("hands a run that first reads its signal after an abort an already-aborted signal", async () => {
    const { queue } = newQueue();
    const t = gated("s", "human", "a", []);
    const handle = queue.enqueue(t.task);
    queue.abortRunning("s", "evicted");
    const signal = t.ctx().signal;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ name: "LaneAbortedError", reason: "evicted" });
    t.open();
    await expect(handle.done).resolves.toBe("a"); // a run that resolves anyway keeps its result
  });

  it("abandons a run that ignores its signal after abortGraceMs and frees its slot", async () => {
    const events: LaneQueueEvent[] = [];
    const { queue, pool, clock } = newQueue({ abortGraceMs: 1_000, onEvent: (e) => events.push(e) });
    const handle = queue.enqueue({
      sessionKey: "s",
      priority: "human",
      origin: "user",
      run: async (ctx) => {
        await ctx.acquireModelSlot(); // never released, signal ignored
        await new Promise(() => {});
      },
    });
    const log: string[] = [];
    queue.enqueue(gated("s", "human", "next", log).task);
    await clock.advanceAsync(0);
    expect(pool.inUse).toBe(1);
    queue.abortRunning("s", "user_stop");
    await clock.advanceAsync(999);
    expect(log).toEqual([]);
    await clock.advanceAsync(1);
    await expect(handle.done).rejects.toMatchObject({ reason: "user_stop" });
    expect(pool.inUse).toBe(0);
    expect(log).toEqual(["next"]);
    expect(events.find((e) => e.type === "finished")).toMatchObject({ id: handle.id, outcome: "abandoned" });
  });

  it("abortAll aborts running tasks and rejects waiting ones", async () => {
    const { queue } = newQueue();
    const log: string[] = [];
    const running = queue.enqueue({
      sessionKey: "s1",
      priority: "human",
      origin: "user",
      run: (ctx) =>
        new Promise<void>((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("x")))),
    });
    const waiting = queue.enqueue(gated("s1", "background", "w", log).task);
    const other = queue.enqueue({
      sessionKey: "s2",
      priority: "normal",
      origin: "subagent",
      run: (ctx) =>
        new Promise<void>((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("y")))),
    });
    expect(queue.abortAll("shutdown")).toBe(3);
    await expect(running.done).rejects.toMatchObject({ reason: "shutdown" });
    await expect(waiting.done).rejects.toMatchObject({ reason: "shutdown" });
    await expect(other.done).rejects.toMatchObject({ reason: "shutdown" });
    expect(log).toEqual([]);
    expect(queue.laneCount).toBe(0);
  });

  it("drain refuses new work and resolves true once running and waiting tasks finish", async () => {
    const { queue } = newQueue();
    const log: string[] = [];
    const a = gated("s", "human", "a", log);
    const b = gated("s", "human", "b", log);
    queue.enqueue(a.task);
    const hb = queue.enqueue(b.task);
    const drained = queue.drain(10_000);
    const late = queue.enqueue(gated("t", "human", "late", log).task);
    await expect(late.done).rejects.toMatchObject({ name: "LaneAbortedError", reason: "shutdown" });
    a.open();
    await flush();
    b.open();
    await expect(hb.done).resolves.toBe("b");
    await expect(drained).resolves.toBe(true);
    expect(log).toEqual(["a", "b"]);
    await expect(queue.drain(0)).resolves.toBe(true);
  });

  it("drain resolves false on timeout without aborting anything", async () => {
    const { queue, clock } = newQueue();
    const t = gated("s", "human", "a", []);
    const handle = queue.enqueue(t.task);
    let settled = false;
    const drained = queue.drain(1_000).finally(() => {
      settled = true;
    });
    await clock.advanceAsync(999);
    expect(settled).toBe(false);
    await clock.advanceAsync(1);
    await expect(drained).resolves.toBe(false);
    expect(t.ctx().signal.aborted).toBe(false);
    t.open();
    await expect(handle.done).resolves.toBe("a");
  });
});

describe("LaneQueue slots and memory", () => {
  it("holds no slot while tools run, so another session's call proceeds", async () => {
    const pool = new GlobalLane({ maxConcurrent: 1, reservedForHuman: 0 });
    const queue = new LaneQueue({ pool });
    const log: string[] = [];
    const tool = deferred();
    const bHold = deferred();
    const a = queue.enqueue({
      sessionKey: "a",
      priority: "human",
      origin: "user",
      run: async (ctx) => {
        let lease = await ctx.acquireModelSlot();
        log.push("a:model1");
        lease.release();
        log.push("a:tool");
        await tool.promise;
        lease = await ctx.acquireModelSlot();
        log.push("a:model2");
        lease.release();
      },
    });
    await flush();
    const b = queue.enqueue({
      sessionKey: "b",
      priority: "human",
      origin: "user",
      run: async (ctx) => {
        const lease = await ctx.acquireModelSlot();
        log.push("b:model");
        await bHold.promise;
        lease.release();
      },
    });
    await flush();
    expect(log).toEqual(["a:model1", "a:tool", "b:model"]);
    tool.resolve();
    await flush();
    expect(log).toEqual(["a:model1", "a:tool", "b:model"]); // a waits for the slot b holds
    bHold.resolve();
    await Promise.all([a.done, b.done]);
    expect(log).toEqual(["a:model1", "a:tool", "b:model", "a:model2"]);
    expect(pool.inUse).toBe(0);
  });

  it("releases slots a run forgot when it settles", async () => {
    const { queue, pool } = newQueue();
    await queue.enqueue({
      sessionKey: "s",
      priority: "human",
      origin: "user",
      run: async (ctx) => {
        await ctx.acquireModelSlot();
        await ctx.acquireModelSlot();
      },
    }).done;
    expect(pool.inUse).toBe(0);
  });

  it("drops lanes when idle: laneCount returns to 0 after 10,000 distinct sessions ran", async () => {
    const { queue, pool } = newQueue();
    const handles = [];
    for (let i = 0; i < 10_000; i++) {
      handles.push(
        queue.enqueue({
          sessionKey: `session-${i}`,
          priority: i % 3 === 0 ? "human" : "background",
          origin: i % 3 === 0 ? "user" : "heartbeat",
          run: async (ctx) => {
            const lease = await ctx.acquireModelSlot();
            lease.release();
            return i;
          },
        }),
      );
    }
    expect(queue.laneCount).toBe(10_000);
    const results = await Promise.all(handles.map((h) => h.done));
    expect(results[9_999]).toBe(9_999);
    expect(queue.laneCount).toBe(0);
    expect(queue.stats()).toEqual({ pending: { human: 0, normal: 0, background: 0 }, running: 0, lanes: 0 });
    expect(pool.inUse).toBe(0);
  });

  it("keeps an idle lane for idleEvictMs when asked to", async () => {
    const { queue, clock } = newQueue({ idleEvictMs: 60_000 });
    await queue.enqueue({ sessionKey: "s", priority: "human", origin: "user", run: async () => {} }).done;
    expect(queue.laneCount).toBe(1);
    expect(queue.isBusy("s")).toBe(false);
    await clock.advanceAsync(59_999);
    expect(queue.laneCount).toBe(1);
    await clock.advanceAsync(1);
    expect(queue.laneCount).toBe(0);
  });
});

describe("LaneQueue failures and events", () => {
  it("rejects only `done` when run throws, without unhandled rejections", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const { queue } = newQueue();
      const boom = new Error("boom");
      const sync = queue.enqueue({
        sessionKey: "s",
        priority: "human",
        origin: "user",
        run: () => {
          throw boom;
        },
      });
      queue.enqueue({
        sessionKey: "s",
        priority: "human",
        origin: "user",
        run: async () => Promise.reject(boom),
      });
      const after = queue.enqueue({
        sessionKey: "s",
        priority: "human",
        origin: "user",
        run: async () => "fine",
      });
      await expect(sync.done).rejects.toBe(boom);
      await expect(after.done).resolves.toBe("fine");
      await flush();
      await flush();
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("reports enqueued, started and finished events", async () => {
    const events: LaneQueueEvent[] = [];
    const { queue } = newQueue({ onEvent: (e) => events.push(e) });
    const handle = queue.enqueue({
      sessionKey: "s",
      priority: "normal",
      origin: "subagent",
      run: async () => {},
    });
    await handle.done;
    const subject = { id: handle.id, sessionKey: "s", priority: "normal", origin: "subagent" };
    expect(events).toEqual([
      { type: "enqueued", ...subject, pending: 1 },
      { type: "started", ...subject, waitedMs: expect.any(Number) },
      { type: "finished", ...subject, durationMs: expect.any(Number), outcome: "ok" },
    ]);
  });

  it("validates its options, naming the field, the value and what was expected", () => {
    const pool = new GlobalLane();
    expect(() => new LaneQueue({ pool, progressTimeoutMs: 0 })).toThrow(
      /progressTimeoutMs must be an integer from 1 to 2147483647 \(ms\), got 0/,
    );
    expect(() => new LaneQueue({ pool, idleEvictMs: -5 })).toThrow(/idleEvictMs .* got -5/);
    expect(() => new LaneQueue({ pool, abortGraceMs: Number.NaN })).toThrow(/abortGraceMs .* got NaN/);
    expect(() => new LaneQueue({} as never)).toThrow(/pool must be a ModelSlotPool/);
  });
});
