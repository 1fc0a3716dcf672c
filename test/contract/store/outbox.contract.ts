/**
 * Store contract, outbox: claiming due rows in chat order, outcomes, expiry, the reset of
 * interrupted sends, listings and counts, and a property test of the ordering against a model.
 */
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import type { OutboxRecord } from "../../../src/store/repos/outbox-repo.js";
import type { Store } from "../../../src/store/types.js";
import {
  chat,
  claimLeased,
  commitLeased,
  enqueue,
  seedReply,
  type StoreContext,
  T0,
  turn,
} from "./fixtures.js";
import { checkClaimOrdering, outboxOp } from "./outbox-ordering.js";
/** Outbox cases: every OutboxRepo method (the mailbox cursor has its own part). */
export function outboxContract(ctx: StoreContext): void {
  describe("outbox", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("lists a run's rows; inserts rows that belong to no turn, which are claimed like any", async () => {
      const [seeded] = await seedReply(store, chat("c1"), ["from a run"], T0);
      expect((await store.outbox.listForRun(seeded?.runId ?? "")).map((r) => r.text)).toEqual(["from a run"]);
      expect(await store.outbox.listForRun("no-such-run")).toEqual([]);
      await store.outbox.insert(
        [{ target: chat("c2"), text: "job x is failing", seq: 0, kind: "notice" }],
        "agent:main:cron:1",
        T0,
      );
      const claimed = await store.outbox.claimDue(T0, 10);
      expect(claimed.map((r) => [r.text, r.sessionKey, r.runId, r.kind])).toEqual([
        ["from a run", seeded?.sessionKey, seeded?.runId, "reply"],
        ["job x is failing", "agent:main:cron:1", null, "notice"],
      ]);
    });

    it("claimDue marks due rows sending, once, up to the limit", async () => {
      await seedReply(store, chat("c1"), ["a"], T0);
      await seedReply(store, chat("c2"), ["b"], T0);
      await seedReply(store, chat("c3"), ["c"], T0);
      expect(await store.outbox.claimDue(T0 - 1, 10)).toEqual([]);
      const first = await store.outbox.claimDue(T0, 2);
      expect(first.map((r) => r.text)).toEqual(["a", "b"]);
      expect(first.every((r) => r.state === "sending" && r.updatedAt === T0)).toBe(true);
      expect(await store.outbox.get(first[0]!.id)).toEqual(first[0]);
      const second = await store.outbox.claimDue(T0 + 1, 10);
      expect(second.map((r) => r.text)).toEqual(["c"]);
      expect(await store.outbox.claimDue(T0 + 2, 10)).toEqual([]);
      expect(await store.outbox.claimDue(T0 + 2, 0)).toEqual([]);
    });

    it("sends one chat in order and different chats and threads in parallel", async () => {
      const [a0, a1] = await seedReply(store, chat("c1"), ["a0", "a1"], T0);
      const [b0] = await seedReply(store, chat("c2"), ["b0"], T0);
      const [t0] = await seedReply(store, chat("c1", "thread"), ["t0"], T0);
      const [a2] = await seedReply(store, chat("c1"), ["a2"], T0);
      const first = await store.outbox.claimDue(T0, 10);
      expect(first.map((r) => r.id)).toEqual([a0!.id, b0!.id, t0!.id]);
      expect(first[2]?.target).toEqual(chat("c1", "thread"));
      expect(await store.outbox.claimDue(T0, 10)).toEqual([]); // a1 waits for a0
      await store.outbox.markSent(a0!.id, "p-a0", T0 + 1);
      expect((await store.outbox.claimDue(T0 + 1, 10)).map((r) => r.id)).toEqual([a1!.id]);
      await store.outbox.markSent(a1!.id, "p-a1", T0 + 2);
      expect((await store.outbox.claimDue(T0 + 2, 10)).map((r) => r.id)).toEqual([a2!.id]);
      expect(await store.outbox.get(a0!.id)).toMatchObject({ state: "sent", platformMessageId: "p-a0" });
    });

    it("marks a row in doubt when a send may have arrived, and keeps the mark", async () => {
      const [r0] = await seedReply(store, chat("c1"), ["d0"], T0);
      expect(await store.outbox.get(r0!.id)).toMatchObject({ inDoubt: false });
      await store.outbox.claimDue(T0, 10);
      await store.outbox.markRetry(r0!.id, "429", T0 + 1, T0 + 1);
      expect(await store.outbox.get(r0!.id)).toMatchObject({ inDoubt: false });
      await store.outbox.claimDue(T0 + 1, 10);
      await store.outbox.markRetry(r0!.id, "timeout", T0 + 2, T0 + 2, undefined, { inDoubt: true });
      expect(await store.outbox.get(r0!.id)).toMatchObject({ state: "pending", inDoubt: true });
      await store.outbox.claimDue(T0 + 2, 10);
      await store.outbox.markRetry(r0!.id, "429", T0 + 3, T0 + 3);
      expect(await store.outbox.get(r0!.id)).toMatchObject({ inDoubt: true });
      const [r1] = await seedReply(store, chat("c2"), ["d1"], T0);
      await store.outbox.claimDue(T0 + 3, 10, {
        owner: "gone",
        ttlMs: 10,
        hosted: [{ channel: "telegram", accountId: "default" }],
      });
      const reset = await store.outbox.resetExpired(T0 + 20);
      expect(reset.map((r) => [r.id, r.inDoubt])).toEqual([
        [r0!.id, true],
        [r1!.id, true],
      ]);
    });

    it("a retried row holds back later rows of its chat until it is sent", async () => {
      const [r0, r1] = await seedReply(store, chat("c1"), ["r0", "r1"], T0);
      await store.outbox.claimDue(T0, 10);
      await store.outbox.markRetry(r0!.id, "429 slow down", T0 + 5_000, T0 + 1);
      expect(await store.outbox.get(r0!.id)).toMatchObject({
        state: "pending",
        attempts: 1,
        lastError: "429 slow down",
        nextAttemptAt: T0 + 5_000,
        updatedAt: T0 + 1,
      });
      // r1 (due since T0) waits behind r0: the next claim is at r0's retry, not before.
      expect(await store.outbox.nextDueAt()).toBe(T0 + 5_000);
      expect(await store.outbox.claimDue(T0 + 4_999, 10)).toEqual([]);
      const retried = await store.outbox.claimDue(T0 + 5_000, 10);
      expect(retried.map((r) => r.id)).toEqual([r0!.id]);
      await store.outbox.markSent(r0!.id, "p0", T0 + 5_001);
      expect(await store.outbox.get(r0!.id)).toMatchObject({ state: "sent", attempts: 1 });
      expect((await store.outbox.claimDue(T0 + 5_001, 10)).map((r) => r.id)).toEqual([r1!.id]);
    });

    it("a dead row releases its chat and never changes again", async () => {
      const [d0, d1] = await seedReply(store, chat("c1"), ["d0", "d1"], T0);
      await store.outbox.claimDue(T0, 10);
      await store.outbox.markDead(d0!.id, "permanent: chat not found", T0 + 1);
      expect(await store.outbox.get(d0!.id)).toMatchObject({
        state: "dead",
        lastError: "permanent: chat not found",
        attempts: 1, // the failed send counts
      });
      expect((await store.outbox.claimDue(T0 + 1, 10)).map((r) => r.id)).toEqual([d1!.id]);
      await store.outbox.markSent(d0!.id, "late", T0 + 2);
      await store.outbox.markRetry(d0!.id, "late", T0 + 3, T0 + 2);
      expect(await store.outbox.get(d0!.id)).toMatchObject({ state: "dead", platformMessageId: null });
      await store.outbox.markSent(d1!.id, "p1", T0 + 3);
      await store.outbox.markRetry(d1!.id, "late", T0 + 9, T0 + 4);
      await store.outbox.markDead(d1!.id, "late", T0 + 4);
      expect(await store.outbox.get(d1!.id)).toMatchObject({
        state: "sent",
        platformMessageId: "p1",
        attempts: 0,
      });
    });

    it("markDead counts the failed attempt of a sending row, the last one included", async () => {
      const [row] = await seedReply(store, chat("c1"), ["r"], T0);
      for (let i = 1; i <= 2; i++) {
        await store.outbox.claimDue(T0 + i, 1);
        await store.outbox.markRetry(row!.id, `transient ${i}`, T0 + i, T0 + i);
      }
      await store.outbox.claimDue(T0 + 3, 1);
      await store.outbox.markDead(row!.id, "transient 3", T0 + 3);
      expect(await store.outbox.get(row!.id)).toMatchObject({ state: "dead", attempts: 3 });
      // A pending row was never tried: it dies without an attempt.
      const [unsent] = await seedReply(store, chat("c2"), ["u"], T0 + 4);
      await store.outbox.markDead(unsent!.id, "channel gone", T0 + 4);
      expect(await store.outbox.get(unsent!.id)).toMatchObject({ state: "dead", attempts: 0 });
    });

    it("expireOlderThan expires old pending rows and returns them", async () => {
      const [old0, old1] = await seedReply(store, chat("c1"), ["old0", "old1"], T0);
      const [sending] = await seedReply(store, chat("c2"), ["sending"], T0);
      const [fresh] = await seedReply(store, chat("c3"), ["fresh"], T0 + 10_000);
      expect((await store.outbox.claimDue(T0, 10)).map((r) => r.id)).toEqual([old0!.id, sending!.id]);
      await store.outbox.markRetry(old0!.id, "e", T0 + 1, T0 + 1);
      expect(await store.outbox.expireOlderThan(T0, T0 + 20_000)).toEqual([]); // strictly before the cutoff
      const expired = await store.outbox.expireOlderThan(T0 + 5_000, T0 + 20_000);
      expect(expired.map((r) => [r.id, r.state])).toEqual([
        [old0!.id, "expired"],
        [old1!.id, "expired"],
      ]);
      expect(await store.outbox.get(old1!.id)).toMatchObject({ state: "expired", updatedAt: T0 + 20_000 });
      expect((await store.outbox.get(sending!.id))?.state).toBe("sending");
      expect((await store.outbox.get(fresh!.id))?.state).toBe("pending");
    });

    it("resetExpired moves sending rows whose lease expired back to pending", async () => {
      await seedReply(store, chat("c1"), ["a"], T0);
      await seedReply(store, chat("c2"), ["b"], T0);
      await seedReply(store, chat("c3"), ["c"], T0);
      const hosted = [{ channel: "telegram", accountId: "default" }] as const;
      const claimed = await store.outbox.claimDue(T0, 2, { owner: "gw_crashed", ttlMs: 9, hosted });
      await store.outbox.markSent(claimed[1]!.id, "p", T0);
      expect(await store.outbox.resetExpired(T0 + 8)).toEqual([]);
      expect((await store.outbox.resetExpired(T0 + 9)).map((r) => r.state)).toEqual(["pending"]);
      expect(await store.outbox.get(claimed[0]!.id)).toMatchObject({ state: "pending", updatedAt: T0 + 9 });
      expect(await store.outbox.resetExpired(T0 + 10)).toEqual([]);
      expect((await store.outbox.claimDue(T0 + 10, 10)).map((r) => r.text)).toEqual(["a", "c"]);
    });

    it("lists by inbox, by state, and counts every state", async () => {
      expect(await store.outbox.countByState()).toEqual({
        pending: 0,
        sending: 0,
        sent: 0,
        dead: 0,
        expired: 0,
      });
      expect(await store.outbox.nextDueAt()).toBeUndefined();
      const rows = await seedReply(store, chat("c1"), ["a", "b", "c"], T0);
      await seedReply(store, chat("c2"), ["d"], T0 + 3);
      expect(rows.map((r) => r.text)).toEqual(["a", "b", "c"]);
      expect(await store.outbox.listForInbox(rows[0]!.inboxId! + 1000)).toEqual([]);
      const [a, d] = await store.outbox.claimDue(T0 + 3, 10);
      await store.outbox.markSent(a!.id, "pa", T0 + 4);
      await store.outbox.markDead(d!.id, "gone", T0 + 4);
      expect(await store.outbox.countByState()).toEqual({
        pending: 2,
        sending: 0,
        sent: 1,
        dead: 1,
        expired: 0,
      });
      expect((await store.outbox.listByState("pending", 10)).map((r) => r.text)).toEqual(["b", "c"]);
      expect((await store.outbox.listByState("pending", 1)).map((r) => r.text)).toEqual(["b"]);
      expect((await store.outbox.listByState("sending", 10)).map((r) => r.text)).toEqual([]);
      expect(await store.outbox.nextDueAt()).toBe(T0);
    });

    it("listMailbox is the sent mailbox of one recipient on one channel", async () => {
      const target = { channel: "http", accountId: "default", chatId: "u1" } as const;
      const rows: OutboxRecord[] = [];
      for (const [i, who] of ["ann", "bob", "ann", "ann"].entries()) {
        const sessionKey = `http:${who}`;
        await enqueue(store, sessionKey, T0, { channel: "http" });
        const [claimed] = await claimLeased(store, sessionKey, "ses", `run-${i}`, { all: false }, T0);
        const outbox = [{ target, text: `to ${who} ${i}`, seq: 0, kind: "reply" as const, recipientId: who }];
        await commitLeased(store, turn(`run-${i}`, [claimed!.id], { sessionKey, outbox }), T0);
        rows.push(...(await store.outbox.listForInbox(claimed!.id)));
      }
      await seedReply(store, { ...target, channel: "slack" }, ["slack for ann"], T0, "ann");
      // One chat: a single row goes out per round, so only the first one is sent yet.
      for (const row of await store.outbox.claimDue(T0, 10)) await store.outbox.markSent(row.id, "p", T0);
      expect((await store.outbox.listMailbox("http", "ann", 0, 10)).map((r) => r.text)).toEqual(["to ann 0"]);
      for (let round = 0; round < 3; round++) {
        for (const row of await store.outbox.claimDue(T0, 10)) await store.outbox.markSent(row.id, "p", T0);
      }
      expect(rows).toHaveLength(4);
      const annAll = await store.outbox.listMailbox("http", "ann", 0, 10);
      expect(annAll.map((r) => r.text)).toEqual(["to ann 0", "to ann 2", "to ann 3"]);
      expect(annAll[0]).toMatchObject({ state: "sent", recipientId: "ann", target });
      const after = await store.outbox.listMailbox("http", "ann", annAll[0]!.mailboxCursor, 1);
      expect(after.map((r) => r.text)).toEqual(["to ann 2"]);
      expect((await store.outbox.listMailbox("http", "bob", 0, 10)).map((r) => r.text)).toEqual(["to bob 1"]);
      expect(await store.outbox.listMailbox("http", "nobody", 0, 10)).toEqual([]);
    });

    it("claimDue never releases a later row of a chat before the earlier ones are finished", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(outboxOp, { minLength: 1, maxLength: 40 }), async (ops) => {
          const fresh = await ctx.makeStore();
          try {
            await checkClaimOrdering(fresh, ops);
          } finally {
            fresh.close();
          }
        }),
        { numRuns: 40 },
      );
    });

    it("claimDue keeps that order when two processes claim for one account, a restart taking over", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(outboxOp, { minLength: 1, maxLength: 40 }), async (ops) => {
          const fresh = await ctx.makeStore();
          const peer = await ctx.peerOf(fresh);
          try {
            await checkClaimOrdering(fresh, ops, { peer, ttlMs: 60_000 });
          } finally {
            if (peer !== fresh) await peer.close();
            await fresh.close();
          }
        }),
        { numRuns: 40 },
      );
    });
  });
}
