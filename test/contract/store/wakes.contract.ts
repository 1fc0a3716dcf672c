/** Store contract, wakes: the per-session limits, listing, cancel, due, and a claim only one wins. */
import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, T0 } from "./fixtures.js";

const limits = { maxPending: 3, minGapMs: 60_000 };
const target = { channel: "telegram" as const, accountId: "default", chatId: "42" };

/** Wake cases: every WakeRepo method. */
export function wakesContract(ctx: StoreContext): void {
  describe("wakes", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("queues wakes within the limits: not within a minute of another, at most maxPending per session", async () => {
      const a = await store.wakes.add(
        { sessionKey: "s1", dueAt: T0 + 600_000, reason: "check the build", target },
        limits,
        T0,
      );
      expect(a).toMatchObject({
        status: "created",
        wake: { state: "pending", target, reason: "check the build" },
      });
      expect(
        await store.wakes.add(
          { sessionKey: "s1", dueAt: T0 + 630_000, reason: "x", target: null },
          limits,
          T0,
        ),
      ).toMatchObject({
        status: "too_close",
        other: { dueAt: T0 + 600_000 },
      });
      await store.wakes.add({ sessionKey: "s1", dueAt: T0 + 700_000, reason: "b", target: null }, limits, T0);
      await store.wakes.add({ sessionKey: "s1", dueAt: T0 + 800_000, reason: "c", target: null }, limits, T0);
      expect(
        await store.wakes.add(
          { sessionKey: "s1", dueAt: T0 + 900_000, reason: "d", target: null },
          limits,
          T0,
        ),
      ).toEqual({
        status: "too_many",
        pending: 3,
      });
      // Another session has its own limits.
      expect(
        (
          await store.wakes.add(
            { sessionKey: "s2", dueAt: T0 + 600_000, reason: "e", target: null },
            limits,
            T0,
          )
        ).status,
      ).toBe("created");
      expect((await store.wakes.list("s1")).map((w) => w.reason)).toEqual(["check the build", "b", "c"]);
    });

    it("cancels only a session's own pending wake; due and nextDue see pending ones; a claim is won once", async () => {
      const a = await store.wakes.add(
        { sessionKey: "s1", dueAt: T0 + 60_000, reason: "a", target: null },
        limits,
        T0,
      );
      const b = await store.wakes.add(
        { sessionKey: "s1", dueAt: T0 + 600_000, reason: "b", target: null },
        limits,
        T0,
      );
      if (a.status !== "created" || b.status !== "created") throw new Error("created expected");
      expect(await store.wakes.cancel(b.wake.id, "s2")).toBe(false);
      expect(await store.wakes.cancel(b.wake.id, "s1")).toBe(true);
      expect(await store.wakes.cancel(b.wake.id, "s1")).toBe(false);
      expect(await store.wakes.nextDue()).toBe(T0 + 60_000);
      expect(await store.wakes.due(T0 + 59_999, 10)).toEqual([]);
      expect((await store.wakes.due(T0 + 60_000, 10)).map((w) => w.id)).toEqual([a.wake.id]);
      expect(await store.wakes.claim(a.wake.id, T0 + 60_000)).toMatchObject({
        state: "fired",
        firedAt: T0 + 60_000,
      });
      expect(await store.wakes.claim(a.wake.id, T0 + 60_001)).toBeUndefined();
      expect(await store.wakes.nextDue()).toBeUndefined();
      expect(await store.wakes.list("s1")).toEqual([]);
    });
  });
}
