import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GlobalLane } from "../../../src/gateway/lanes/global-lane.js";
import { LaneQueue } from "../../../src/gateway/lanes/lane-queue.js";
import type { LaneHandle, LanePriority, SlotLease } from "../../../src/gateway/lanes/types.js";

const RUNS = 200;
const priorityArb = fc.constantFrom<LanePriority>("human", "normal", "background");
const poolArb = fc
  .integer({ min: 1, max: 5 })
  .chain((max) => fc.record({ max: fc.constant(max), reserved: fc.integer({ min: 0, max: max - 1 }) }));

/**
 * Builds a pool whose every grant and release is checked against the admission invariants,
 * through its public API only: `onWait` runs synchronously at the instant of each grant.
 */
function checkedPool(max: number, reserved: number, violations: string[]) {
  const check = (when: string) => {
    const held = pool.held();
    if (pool.inUse > max) violations.push(`${when}: inUse ${pool.inUse} > ${max}`);
    if (held.normal + held.background > max - reserved) {
      violations.push(`${when}: non-human work holds ${held.normal + held.background} > ${max - reserved}`);
    }
  };
  const pool: GlobalLane = new GlobalLane({
    maxConcurrent: max,
    reservedForHuman: reserved,
    onWait: (priority) => {
      check(`grant(${priority})`);
      if (priority !== "human" && pool.waiting().human > 0) {
        violations.push(`grant(${priority}) while ${pool.waiting().human} human(s) waited`);
      }
    },
  });
  return { pool, check };
}

describe("GlobalLane properties", () => {
  type Op =
    | { kind: "acquire"; priority: LanePriority }
    | { kind: "release"; pick: number }
    | { kind: "abort"; pick: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant("acquire" as const), priority: priorityArb }),
    fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant("abort" as const), pick: fc.nat() }),
  );

  it("grants exactly as a reference model of priority + reservation + FIFO admission", async () => {
    await fc.assert(
      fc.asyncProperty(poolArb, fc.array(opArb, { maxLength: 40 }), async ({ max, reserved }, ops) => {
        const violations: string[] = [];
        const { pool } = checkedPool(max, reserved, violations);
        interface Req {
          priority: LanePriority;
          controller: AbortController;
          lease: SlotLease | null;
          rejected: boolean;
        }
        const reqs: Req[] = [];
        const released = new Set<Req>();
        // The model: which requests hold a slot, and the wait lists.
        const modelHeld = new Set<Req>();
        const modelWait: Record<LanePriority, Req[]> = { human: [], normal: [], background: [] };
        const limit = (p: LanePriority) => (p === "human" ? max : max - reserved);
        const admit = () => {
          for (;;) {
            const next =
              modelHeld.size < max && modelWait.human.length > 0
                ? modelWait.human.shift()
                : modelHeld.size < max - reserved
                  ? (modelWait.normal.shift() ?? modelWait.background.shift())
                  : undefined;
            if (!next) return;
            modelHeld.add(next);
          }
        };
        for (const op of ops) {
          if (op.kind === "acquire") {
            const req: Req = {
              priority: op.priority,
              controller: new AbortController(),
              lease: null,
              rejected: false,
            };
            reqs.push(req);
            pool.acquire(op.priority, req.controller.signal).then(
              (lease) => {
                req.lease = lease;
              },
              () => {
                req.rejected = true;
              },
            );
            if (modelHeld.size < limit(op.priority)) modelHeld.add(req);
            else modelWait[op.priority].push(req);
          } else if (op.kind === "release") {
            const held = [...modelHeld];
            const req = held[op.pick % Math.max(1, held.length)];
            if (!req) continue;
            req.lease?.release();
            req.lease?.release(); // idempotent
            released.add(req);
            modelHeld.delete(req);
            admit();
          } else {
            const waiting = [...modelWait.human, ...modelWait.normal, ...modelWait.background];
            const req = waiting[op.pick % Math.max(1, waiting.length)];
            if (!req) continue;
            req.controller.abort(new Error("gone"));
            const list = modelWait[req.priority];
            list.splice(list.indexOf(req), 1);
          }
          await new Promise((resolve) => setImmediate(resolve));
          const holding = reqs.filter((r) => r.lease !== null && !released.has(r));
          expect(new Set(holding)).toEqual(modelHeld);
          expect(pool.inUse).toBe(modelHeld.size);
          expect(pool.waiting()).toEqual({
            human: modelWait.human.length,
            normal: modelWait.normal.length,
            background: modelWait.background.length,
          });
          const rejected = reqs.filter((r) => r.rejected);
          expect(rejected.every((r) => r.lease === null && r.controller.signal.aborted)).toBe(true);
        }
        expect(violations).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("LaneQueue properties", () => {
  interface Call {
    holdTicks: number;
    toolTicks: number;
  }
  const taskArb = fc.record({
    session: fc.integer({ min: 0, max: 4 }),
    priority: priorityArb,
    calls: fc.array(
      fc.record({ holdTicks: fc.integer({ min: 0, max: 3 }), toolTicks: fc.integer({ min: 0, max: 3 }) }),
      { maxLength: 3 },
    ),
    coalesce: fc.boolean(),
  });

  it("serialises each session, puts its humans first and in order, and respects the pool's limits", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        poolArb,
        fc.array(taskArb, { minLength: 1, maxLength: 20 }),
        async (s, { max, reserved }, tasks) => {
          const violations: string[] = [];
          const { pool, check } = checkedPool(max, reserved, violations);
          const queue = new LaneQueue({ pool });
          const running = new Map<number, number>();
          const humanEnqueued = new Map<number, number[]>();
          const humanStarted = new Map<number, number[]>();
          const handles: Array<LaneHandle<number>> = [];
          let finished = 0;
          const tick = () => s.schedule(Promise.resolve());

          const arrivals = tasks.map((t, i) =>
            s.schedule(Promise.resolve(i), `arrive ${i}`).then(() => {
              if (t.priority === "human")
                humanEnqueued.set(t.session, [...(humanEnqueued.get(t.session) ?? []), i]);
              const handle = queue.enqueue<number>({
                sessionKey: `s${t.session}`,
                priority: t.priority,
                origin: t.priority === "human" ? "user" : "cron",
                // Either the default key (merges with a waiting cron task) or one of its own.
                ...(t.coalesce ? {} : { coalesceKey: `task-${i}` }),
                run: async (ctx) => {
                  const now = (running.get(t.session) ?? 0) + 1;
                  running.set(t.session, now);
                  if (now > 1) violations.push(`session ${t.session} ran ${now} tasks at once`);
                  const started = humanStarted.get(t.session) ?? [];
                  if (t.priority === "human") humanStarted.set(t.session, [...started, i]);
                  else if ((humanEnqueued.get(t.session)?.length ?? 0) > started.length) {
                    violations.push(
                      `session ${t.session} started ${t.priority} task ${i} while a human waited`,
                    );
                  }
                  for (const call of t.calls as Call[]) {
                    const lease = await ctx.acquireModelSlot();
                    check("after grant");
                    for (let k = 0; k < call.holdTicks; k++) {
                      await tick();
                      ctx.progress();
                    }
                    lease.release();
                    check("after release");
                    for (let k = 0; k < call.toolTicks; k++) await tick();
                  }
                  running.set(t.session, (running.get(t.session) ?? 1) - 1);
                  finished++;
                  return i;
                },
              });
              handles.push(handle);
              return handle.done;
            }),
          );
          await s.waitFor(Promise.all(arrivals));

          expect(violations).toEqual([]);
          const ran = handles.filter((h) => !h.coalesced).length;
          expect(finished).toBe(ran);
          expect(humanStarted).toEqual(humanEnqueued);
          expect(pool.inUse).toBe(0);
          expect(queue.stats()).toEqual({
            pending: { human: 0, normal: 0, background: 0 },
            running: 0,
            lanes: 0,
          });
        },
      ),
      { numRuns: RUNS },
    );
  });
});
