/**
 * Store contract, model-call permits (`lanes.clusterMaxConcurrent`): the cap across processes,
 * person-first admission across them, the human reservation, leases that free a dead process's
 * rows, release and withdrawal. Process A works through `ctx.store`, B through `ctx.peer()`.
 */
import { describe, expect, it } from "vitest";
import type { PermitPriority, PermitRequest } from "../../../src/store/repos/permit-repo.js";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, T0 } from "./fixtures.js";

const TTL = 30_000;

function ask(
  store: Store,
  owner: string,
  callId: string,
  priority: PermitPriority,
  now: number,
  over: Partial<PermitRequest> = {},
) {
  return store.permits.tryAcquire({
    owner,
    callId,
    priority,
    now,
    ttlMs: TTL,
    limit: 2,
    reservedForHuman: 0,
    ...over,
  });
}

/** PermitRepo cases. */
export function permitsContract(ctx: StoreContext): void {
  describe("model-call permits", () => {
    it("grants up to the limit across two processes, refuses the next as full, frees one on release", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      expect(await ask(a, "gw_a", "1", "background", T0)).toEqual({ granted: true, leaseUntil: T0 + TTL });
      expect((await ask(b, "gw_b", "1", "background", T0 + 1)).granted).toBe(true);
      expect(await ask(a, "gw_a", "2", "human", T0 + 2)).toEqual({ granted: false, reason: "full" });
      expect(await b.permits.census(T0 + 3)).toEqual({
        permits: { gw_a: 1, gw_b: 1 },
        demands: { human: 1, normal: 0, background: 0 },
      });
      expect(await b.permits.release("gw_b", "1")).toBe(true);
      expect(await b.permits.release("gw_b", "1")).toBe(false);
      // The human's try now takes the freed permit, and its demand is gone with the grant.
      expect((await ask(a, "gw_a", "2", "human", T0 + 4)).granted).toBe(true);
      expect(await a.permits.census(T0 + 5)).toEqual({
        permits: { gw_a: 2 },
        demands: { human: 0, normal: 0, background: 0 },
      });
    });

    it("a second try of a call holding its permit extends it instead of taking another", async () => {
      const a = ctx.store;
      await ask(a, "gw_a", "1", "human", T0);
      expect(await ask(a, "gw_a", "1", "human", T0 + 10_000)).toEqual({
        granted: true,
        leaseUntil: T0 + 10_000 + TTL,
      });
      expect((await a.permits.census(T0 + TTL + 1)).permits).toEqual({ gw_a: 1 });
    });

    it("background and normal work on one process wait while a person's call on another waits", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      await ask(a, "gw_a", "1", "background", T0);
      await ask(a, "gw_a", "2", "background", T0);
      // B's person finds the cluster full: its demand is recorded.
      expect(await ask(b, "gw_b", "h", "human", T0 + 1)).toEqual({ granted: false, reason: "full" });
      await a.permits.release("gw_a", "1");
      // A permit is free, but A's background and normal calls are outranked by B's person.
      expect(await ask(a, "gw_a", "3", "background", T0 + 2)).toEqual({
        granted: false,
        reason: "outranked",
      });
      expect(await ask(a, "gw_a", "4", "normal", T0 + 2)).toEqual({ granted: false, reason: "outranked" });
      // A waiting normal call outranks background work too, but not a person.
      expect((await ask(b, "gw_b", "h", "human", T0 + 3)).granted).toBe(true);
      await a.permits.release("gw_a", "2");
      expect(await ask(a, "gw_a", "3", "background", T0 + 4)).toEqual({
        granted: false,
        reason: "outranked",
      });
      expect((await ask(a, "gw_a", "4", "normal", T0 + 5)).granted).toBe(true);
    });

    it("keeps reservedForHuman permits for people across processes", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      const over = { limit: 3, reservedForHuman: 1 };
      expect((await ask(a, "gw_a", "1", "background", T0, over)).granted).toBe(true);
      expect((await ask(b, "gw_b", "1", "normal", T0, over)).granted).toBe(true);
      expect(await ask(a, "gw_a", "2", "background", T0 + 1, over)).toEqual({
        granted: false,
        reason: "reserved",
      });
      expect((await ask(b, "gw_b", "2", "human", T0 + 2, over)).granted).toBe(true);
      expect(await ask(b, "gw_b", "3", "human", T0 + 3, over)).toEqual({ granted: false, reason: "full" });
    });

    it("a dead process's permit and demand are free once their lease has passed", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      const one = { limit: 1 };
      expect((await ask(a, "gw_dead", "1", "human", T0, one)).granted).toBe(true);
      expect((await ask(a, "gw_dead", "2", "human", T0 + 1, one)).granted).toBe(false);
      expect(await ask(b, "gw_b", "1", "background", T0 + TTL - 1, one)).toEqual({
        granted: false,
        reason: "full",
      });
      // At T0 + TTL the permit has expired; the dead demand lives until T0 + 1 + TTL.
      expect(await ask(b, "gw_b", "1", "background", T0 + TTL, one)).toEqual({
        granted: false,
        reason: "outranked",
      });
      expect(await ask(b, "gw_b", "1", "background", T0 + TTL + 1, one)).toEqual({
        granted: true,
        leaseUntil: T0 + 2 * TTL + 1,
      });
      expect(await a.permits.census(T0 + TTL + 2)).toEqual({
        permits: { gw_b: 1 },
        demands: { human: 0, normal: 0, background: 0 },
      });
    });

    it("renew extends only the listed live rows; an expired one is not revived", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      const one = { limit: 1 };
      await ask(a, "gw_a", "1", "normal", T0, one);
      await ask(b, "gw_b", "h", "human", T0, one); // refused: its demand is recorded
      expect(await a.permits.renew("gw_a", ["1", "other"], T0 + 20_000, TTL)).toBe(1);
      expect(await b.permits.renew("gw_b", ["h"], T0 + 20_000, TTL)).toBe(0);
      // Both were extended to T0 + 50_000: the permit holds, the demand outranks.
      expect(await ask(b, "gw_b", "x", "normal", T0 + 40_000, { limit: 2 })).toEqual({
        granted: false,
        reason: "outranked",
      });
      expect(await a.permits.renew("gw_a", ["1"], T0 + 60_000, TTL)).toBe(0);
      expect((await a.permits.census(T0 + 60_001)).permits).toEqual({});
    });

    it("withdraw removes a waiting call's demand; releaseOwner removes all of a process's rows", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      const one = { limit: 1 };
      await ask(a, "gw_a", "1", "background", T0, one);
      await ask(b, "gw_b", "h", "human", T0, one);
      expect(await b.permits.withdraw("gw_b", "h")).toBe(true);
      expect(await b.permits.withdraw("gw_b", "h")).toBe(false);
      expect((await a.permits.census(T0 + 1)).demands.human).toBe(0);
      await ask(b, "gw_b", "n", "normal", T0 + 2, one);
      expect(await a.permits.releaseOwner("gw_a")).toBe(1);
      expect(await a.permits.census(T0 + 3)).toEqual({
        permits: {},
        demands: { human: 0, normal: 1, background: 0 },
      });
      expect((await ask(b, "gw_b", "n", "normal", T0 + 4, one)).granted).toBe(true);
    });

    it("two processes trying at once for the last permit: exactly one is granted", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      const tries = await Promise.all([
        ask(a, "gw_a", "1", "human", T0, { limit: 1 }),
        ask(b, "gw_b", "1", "human", T0, { limit: 1 }),
      ]);
      expect(tries.filter((t) => t.granted)).toHaveLength(1);
    });

    it("refuses a malformed request, naming the field", async () => {
      await expect(ask(ctx.store, "gw_a", "1", "human", T0, { limit: 0 })).rejects.toThrow(/limit/);
      await expect(ask(ctx.store, "gw_a", "1", "human", T0, { reservedForHuman: 2 })).rejects.toThrow(
        /reservedForHuman/,
      );
      await expect(ask(ctx.store, "", "1", "human", T0)).rejects.toThrow(/owner/);
    });
  });
}
