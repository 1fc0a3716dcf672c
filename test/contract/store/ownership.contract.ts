/**
 * Store contract, ownership: what lets several gateway processes share one store. Session
 * leases with fences, claims and commits refused to a process that lost its session, renewal,
 * takeover of expired work only, and outbox claims limited to the channels a process hosts.
 * Process A works through `ctx.store`, process B through `ctx.peer()`: a second connection to
 * the same database wherever the implementation has one.
 */
import { describe, expect, it } from "vitest";
import type { ChatTarget } from "../../../src/channels/types.js";
import { resourceLeaseKey } from "../../../src/store/leases.js";
import type { SessionFence } from "../../../src/store/repos/lease-repo.js";
import type { ChannelAccount } from "../../../src/store/repos/outbox-repo.js";
import type { Store } from "../../../src/store/types.js";
import { chat, enqueue, inbound, seedReply, type StoreContext, snapshot, T0, turn } from "./fixtures.js";

/** The lease TTL the cases use. */
const TTL = 30_000;

/** The account every `chat()` target belongs to. */
const TELEGRAM: ChannelAccount = { channel: "telegram", accountId: "default" };

/** The two processes: A on the test's store, B on a second handle onto its database. */
async function processes(ctx: StoreContext): Promise<{ a: Store; b: Store }> {
  return { a: ctx.store, b: await ctx.peer() };
}

/** Acquires `sessionKey` for `owner` at `now`, failing the test if it is not granted. */
async function hold(store: Store, sessionKey: string, owner: string, now = T0, ttlMs = TTL) {
  const lease = await store.leases.acquireSession(sessionKey, owner, now, ttlMs);
  if (!lease) throw new Error(`${owner} could not acquire ${sessionKey}`);
  return { lease, fence: { owner, fence: lease.fence } satisfies SessionFence };
}

/** Ownership cases: leases, fences, renewal, takeovers, hosted channels. */
export function ownershipContract(ctx: StoreContext): void {
  describe("ownership: session leases", () => {
    it("leases a session to one owner at a time; at expiry another takes it under a higher fence", async () => {
      const { a, b } = await processes(ctx);
      expect(await a.leases.acquireSession("s1", "gw_a", T0, TTL)).toEqual({
        sessionKey: "s1",
        owner: "gw_a",
        fence: 1,
        leaseUntil: T0 + TTL,
        requeued: 0,
      });
      expect(await b.leases.acquireSession("s1", "gw_b", T0 + 1, TTL)).toBeUndefined();
      expect(await b.leases.acquireSession("s1", "gw_b", T0 + TTL - 1, TTL)).toBeUndefined();
      expect(await b.leases.getSession("s1", T0 + TTL - 1)).toEqual({
        sessionKey: "s1",
        owner: "gw_a",
        fence: 1,
        leaseUntil: T0 + TTL,
      });
      // Already its own: the same fence, the lease extended.
      expect(await a.leases.acquireSession("s1", "gw_a", T0 + 10, TTL)).toMatchObject({
        fence: 1,
        leaseUntil: T0 + 10 + TTL,
      });
      expect(await b.leases.acquireSession("s1", "gw_b", T0 + TTL, TTL)).toBeUndefined();
      // Held while now < leaseUntil: at leaseUntil it is B's, and A's fence is history.
      const taken = await b.leases.acquireSession("s1", "gw_b", T0 + 10 + TTL, TTL);
      expect(taken).toEqual({
        sessionKey: "s1",
        owner: "gw_b",
        fence: 2,
        leaseUntil: T0 + 10 + 2 * TTL,
        requeued: 0,
      });
      expect(await a.leases.acquireSession("s1", "gw_a", T0 + 11 + TTL, TTL)).toBeUndefined();
      expect(await a.leases.getSession("s1", T0 + 11 + TTL)).toMatchObject({ owner: "gw_b", fence: 2 });
      expect(await a.leases.getSession("s1", T0 + 10 + 2 * TTL)).toBeUndefined();
      // Sessions are independent.
      expect(await a.leases.acquireSession("s2", "gw_a", T0 + 11 + TTL, TTL)).toMatchObject({ fence: 1 });
      expect(await a.leases.getSession("never", T0)).toBeUndefined();
    });

    it("an owner that retakes its own expired lease gets a higher fence", async () => {
      const { a } = await processes(ctx);
      const first = await hold(a, "s1", "gw_a", T0);
      const again = await a.leases.acquireSession("s1", "gw_a", T0 + TTL, TTL);
      expect(again).toMatchObject({ owner: "gw_a", fence: first.lease.fence + 1, leaseUntil: T0 + 2 * TTL });
    });

    it("release keeps the fence, so every later grant is higher; a stale release does nothing", async () => {
      const { a, b } = await processes(ctx);
      const first = await hold(a, "s1", "gw_a", T0);
      expect(await b.leases.releaseSession("s1", "gw_b", first.lease.fence, T0 + 1)).toBeUndefined();
      expect(await a.leases.releaseSession("s1", "gw_a", first.lease.fence + 1, T0 + 1)).toBeUndefined();
      expect(await a.leases.getSession("s1", T0 + 1)).toMatchObject({ owner: "gw_a" });
      expect(await a.leases.releaseSession("s1", "gw_a", first.lease.fence, T0 + 1)).toEqual({ requeued: 0 });
      expect(await b.leases.getSession("s1", T0 + 1)).toBeUndefined();
      // Free long before its TTL: B takes it at once, under a new fence.
      const second = await hold(b, "s1", "gw_b", T0 + 2);
      expect(second.lease.fence).toBe(first.lease.fence + 1);
      expect(await a.leases.releaseSession("s1", "gw_a", first.lease.fence, T0 + 3)).toBeUndefined();
      expect(await a.leases.getSession("s1", T0 + 3)).toMatchObject({ owner: "gw_b" });
      expect(await b.leases.releaseSession("s1", "gw_b", second.lease.fence, T0 + 4)).toEqual({
        requeued: 0,
      });
      expect((await hold(a, "s1", "gw_a", T0 + 5)).lease.fence).toBe(second.lease.fence + 1);
    });

    it("release puts the holder's unfinished claims back in the queue for the next holder", async () => {
      const { a, b } = await processes(ctx);
      const m1 = await enqueue(a, "s1");
      const m2 = await enqueue(a, "s1");
      const other = await enqueue(a, "s2");
      const { lease, fence } = await hold(a, "s1", "gw_a");
      const { fence: f2 } = await hold(a, "s2", "gw_a");
      await a.inbox.claim("s1", "ses-1", "run-a", { all: true, lease: fence }, T0 + 1);
      await a.inbox.claim("s2", "ses-2", "run-a2", { all: true, lease: f2 }, T0 + 1);
      // Shut down mid-turn: nothing committed, the session given back.
      expect(await a.leases.releaseSession("s1", "gw_a", lease.fence, T0 + 2)).toEqual({ requeued: 2 });
      for (const id of [m1.id, m2.id]) {
        expect(await b.inbox.get(id)).toMatchObject({
          state: "queued",
          owner: null,
          leaseUntil: null,
          attempts: 1,
          updatedAt: T0 + 2,
        });
      }
      expect(await b.inbox.get(other.id)).toMatchObject({ state: "running", owner: "gw_a" });
      const { fence: fb } = await hold(b, "s1", "gw_b", T0 + 3);
      const redone = await b.inbox.claim("s1", "ses-1", "run-b", { all: true, lease: fb }, T0 + 4);
      expect(redone.map((r) => [r.id, r.attempts, r.owner])).toEqual([
        [m1.id, 2, "gw_b"],
        [m2.id, 2, "gw_b"],
      ]);
    });

    it("refuses a lease that cannot be held: no owner, or a TTL that is not a positive whole number", async () => {
      const { a } = await processes(ctx);
      await expect(a.leases.acquireSession("s1", "", T0, TTL)).rejects.toThrow(TypeError);
      for (const ttl of [0, -1, 1.5, Number.POSITIVE_INFINITY, Number.NaN]) {
        await expect(a.leases.acquireSession("s1", "gw_a", T0, ttl)).rejects.toThrow(TypeError);
        await expect(a.leases.renew("gw_a", T0, ttl)).rejects.toThrow(TypeError);
        await expect(a.outbox.claimDue(T0, 1, { owner: "gw_a", ttlMs: ttl, hosted: [] })).rejects.toThrow(
          TypeError,
        );
      }
      expect(await a.leases.getSession("s1", T0)).toBeUndefined();
    });
  });

  describe("ownership: claims and commits under a fence", () => {
    it("claim takes rows only under the session's current, unexpired lease, and stamps them with it", async () => {
      const { a, b } = await processes(ctx);
      const m = await enqueue(a, "s1");
      const claim = (store: Store, lease: SessionFence, now: number) =>
        store.inbox.claim("s1", "ses-1", "run-a", { all: false, lease }, now);
      expect(await claim(a, { owner: "gw_a", fence: 1 }, T0)).toEqual([]); // nobody holds it yet
      const { lease, fence } = await hold(a, "s1", "gw_a", T0);
      expect(await claim(a, { ...fence, fence: fence.fence + 1 }, T0 + 1)).toEqual([]);
      expect(await claim(b, { owner: "gw_b", fence: fence.fence }, T0 + 1)).toEqual([]);
      expect(await claim(a, fence, T0 + TTL)).toEqual([]); // expired
      expect(await a.inbox.get(m.id)).toMatchObject({ state: "queued", attempts: 0, owner: null });
      expect(await a.transcript.tail("s1", "ses-1", 10)).toEqual([]);

      const [claimed] = await claim(a, fence, T0 + 1);
      expect(claimed).toMatchObject({
        id: m.id,
        state: "running",
        runId: "run-a",
        owner: "gw_a",
        leaseUntil: lease.leaseUntil,
        attempts: 1,
      });
      expect(await b.inbox.get(m.id)).toEqual(claimed);
      // Acquiring again while holding it extends the session and its running rows together.
      await a.leases.acquireSession("s1", "gw_a", T0 + 5, TTL);
      expect(await b.inbox.get(m.id)).toMatchObject({ owner: "gw_a", leaseUntil: T0 + 5 + TTL });
      expect(await b.inbox.requeueExpired(T0 + TTL)).toEqual([]);
    });

    it("a process that lost its session can no longer claim, append or commit for it", async () => {
      const { a, b } = await processes(ctx);
      const m1 = await enqueue(a, "s1");
      const { lease: la, fence: fa } = await hold(a, "s1", "gw_a", T0);
      await a.inbox.claim("s1", "ses-1", "run-a", { all: false, lease: fa }, T0 + 1);
      expect(
        await a.transcript.append("s1", "ses-1", "run-a", [{ type: "notice", text: "a works" }], T0 + 2, fa),
      ).toBe(true);

      // A stalls past its lease. B takes the session over, and with it A's interrupted run.
      const lb = await b.leases.acquireSession("s1", "gw_b", T0 + TTL, TTL);
      expect(lb).toMatchObject({ owner: "gw_b", fence: la.fence + 1, requeued: 1 });
      if (!lb) throw new Error("unreachable");
      const fb = { owner: "gw_b", fence: lb.fence };
      expect(await b.inbox.get(m1.id)).toMatchObject({ state: "queued", owner: null, leaseUntil: null });
      const [redo] = await b.inbox.claim("s1", "ses-1", "run-b", { all: false, lease: fb }, T0 + TTL + 1);
      expect(redo).toMatchObject({ id: m1.id, runId: "run-b", owner: "gw_b", attempts: 2 });

      // A wakes up: everything it tries for the session is refused and writes nothing.
      const m2 = await enqueue(a, "s1", T0 + TTL + 2);
      const before = await snapshot(b);
      expect(await a.inbox.claim("s1", "ses-1", "run-a2", { all: true, lease: fa }, T0 + TTL + 3)).toEqual(
        [],
      );
      expect(
        await a.transcript.append(
          "s1",
          "ses-1",
          "run-a",
          [{ type: "notice", text: "stale" }],
          T0 + TTL + 3,
          fa,
        ),
      ).toBe(false);
      expect(await a.commitTurn({ ...turn("run-a", [m1.id]), lease: fa }, T0 + TTL + 3)).toBe(false);
      expect(await snapshot(b)).toEqual(before);
      expect(await a.inbox.get(m2.id)).toMatchObject({ state: "queued" });

      // B's turn goes through.
      expect(
        await b.transcript.append(
          "s1",
          "ses-1",
          "run-b",
          [{ type: "notice", text: "b works" }],
          T0 + TTL + 4,
          fb,
        ),
      ).toBe(true);
      expect(await b.commitTurn({ ...turn("run-b", [m1.id]), lease: fb }, T0 + TTL + 5)).toBe(true);
      expect(await a.inbox.get(m1.id)).toMatchObject({
        state: "answered",
        runId: "run-b",
        owner: null,
        leaseUntil: null,
      });
      const texts = (await a.transcript.tail("s1", "ses-1", 10)).map(
        (e) => (e.payload as { text?: string }).text,
      );
      expect(texts).not.toContain("stale");
      expect(texts.slice(-2)).toEqual(["b works", "hi there"]);
    });

    it("refuses a stale owner's commit once the session changed hands, rows or not", async () => {
      const { a, b } = await processes(ctx);
      const m = await enqueue(a, "s1");
      const { fence: fa } = await hold(a, "s1", "gw_a", T0);
      const [claimed] = await a.inbox.claim("s1", "ses-1", "run-a", { all: false, lease: fa }, T0);
      expect(claimed).toMatchObject({ state: "running", runId: "run-a", owner: "gw_a" });
      // A stalls past its TTL; B takes the session (and A's expired run back to the queue).
      const { fence: fb } = await hold(b, "s1", "gw_b", T0 + TTL);
      const before = await snapshot(a);
      expect(await a.commitTurn({ ...turn("run-a", [m.id]), lease: fa }, T0 + TTL + 2)).toBe(false);
      // A turn without messages (a heartbeat) is fenced the same way.
      expect(await a.commitTurn({ ...turn("run-hb-a", [], { outbox: [] }), lease: fa }, T0 + TTL + 2)).toBe(
        false,
      );
      expect(await snapshot(a)).toEqual(before);
      expect(await b.commitTurn({ ...turn("run-hb-b", [], { outbox: [] }), lease: fb }, T0 + TTL + 3)).toBe(
        true,
      );
      expect(await a.runs.get("run-hb-a")).toBeUndefined();
    });

    it("a lease that lapsed but that nobody took is still its holder's to finish with", async () => {
      const { a, b } = await processes(ctx);
      const m = await enqueue(a, "s1");
      const { fence } = await hold(a, "s1", "gw_a", T0);
      await a.inbox.claim("s1", "ses-1", "run-a", { all: false, lease: fence }, T0 + 1);
      // Nobody acquired the session or took the row over: the fence is unchanged.
      expect(await b.commitTurn({ ...turn("run-a", [m.id]), lease: fence }, T0 + 5 * TTL)).toBe(true);
      expect(await a.inbox.get(m.id)).toMatchObject({ state: "answered", owner: null, leaseUntil: null });
    });
  });

  describe("ownership: renewal", () => {
    it("renew extends only the leases that owner still holds unexpired, in one step", async () => {
      const { a, b } = await processes(ctx);
      const ma = await enqueue(a, "s1");
      const mb = await enqueue(a, "s3");
      const { fence: f1 } = await hold(a, "s1", "gw_a", T0);
      await hold(a, "s2", "gw_a", T0 + 10, 100); // lapses at T0 + 110
      const { lease: l3, fence: f3 } = await hold(b, "s3", "gw_b", T0);
      await a.inbox.claim("s1", "ses-1", "run-a", { all: false, lease: f1 }, T0 + 1);
      await b.inbox.claim("s3", "ses-3", "run-b", { all: false, lease: f3 }, T0 + 1);
      const [ra] = await seedReply(a, chat("c1"), ["to c1"], T0);
      const [rb] = await seedReply(a, chat("c2"), ["to c2"], T0);
      expect(await a.outbox.claimDue(T0, 1, { owner: "gw_a", ttlMs: TTL, hosted: [TELEGRAM] })).toHaveLength(
        1,
      );
      expect(await b.outbox.claimDue(T0, 1, { owner: "gw_b", ttlMs: TTL, hosted: [TELEGRAM] })).toHaveLength(
        1,
      );

      const at = T0 + 1_000;
      expect(await a.leases.renew("gw_a", at, TTL)).toEqual({ sessions: ["s1"], inbox: 1, outbox: 1 });
      expect(await b.leases.getSession("s1", at)).toMatchObject({
        owner: "gw_a",
        fence: f1.fence,
        leaseUntil: at + TTL,
      });
      expect(await b.leases.getSession("s2", at)).toBeUndefined(); // lapsed: never revived
      expect(await b.leases.getSession("s3", at)).toEqual({
        sessionKey: "s3",
        owner: "gw_b",
        fence: l3.fence,
        leaseUntil: T0 + TTL,
      });
      expect(await b.inbox.get(ma.id)).toMatchObject({ owner: "gw_a", leaseUntil: at + TTL });
      expect(await b.inbox.get(mb.id)).toMatchObject({ owner: "gw_b", leaseUntil: T0 + TTL });
      expect(await b.outbox.get(ra!.id)).toMatchObject({
        state: "sending",
        owner: "gw_a",
        leaseUntil: at + TTL,
      });
      expect(await b.outbox.get(rb!.id)).toMatchObject({
        state: "sending",
        owner: "gw_b",
        leaseUntil: T0 + TTL,
      });
      // Renewing keeps the fence: the holder's writes still go through.
      expect(await a.commitTurn({ ...turn("run-a", [ma.id]), lease: f1 }, at + 1)).toBe(true);

      // Once expired, nothing of B's is renewed: a takeover may already be under way.
      expect(await b.leases.renew("gw_b", T0 + TTL, TTL)).toEqual({ sessions: [], inbox: 0, outbox: 0 });
      expect(await a.leases.renew("gw_nobody", at, TTL)).toEqual({ sessions: [], inbox: 0, outbox: 0 });
    });
  });

  describe("ownership: takeovers", () => {
    it("retireOwner ends a dead owner's leases at once, and only that owner's", async () => {
      const { a, b } = await processes(ctx);
      const m1 = await enqueue(a, "s1");
      const m2 = await enqueue(a, "s2");
      const { fence: f1 } = await hold(a, "s1", "gw_dead");
      await hold(b, "s2", "gw_alive");
      await a.inbox.claim("s1", "ses-1", "run-dead", { all: false, lease: f1 }, T0);
      expect(await b.leases.acquireSession("s1", "gw_new", T0 + 1, TTL)).toBeUndefined();

      expect(await b.leases.retireOwner("gw_dead", T0 + 1)).toBe(1);
      expect((await b.inbox.requeueExpired(T0 + 1)).map((r) => r.id)).toEqual([m1.id]);
      expect(await b.leases.acquireSession("s1", "gw_new", T0 + 1, TTL)).toMatchObject({
        fence: f1.fence + 1,
      });
      expect(await a.leases.getSession("s2", T0 + 1)).toMatchObject({ owner: "gw_alive" });
      expect(await a.inbox.get(m2.id)).toMatchObject({ state: "queued" });
      expect(await b.leases.retireOwner("gw_nobody", T0 + 1)).toBe(0);
    });

    it("registers owners with their process identity, and retiring removes the record", async () => {
      const { a, b } = await processes(ctx);
      const dead = {
        owner: "gw_dead",
        host: "h1",
        pid: 41,
        bootId: "boot-1",
        pidNamespace: "pid:[1]",
        startTicks: 9,
        startedAt: T0,
      };
      const alive = {
        owner: "gw_alive",
        host: "h1",
        pid: 42,
        bootId: null,
        pidNamespace: null,
        startTicks: null,
        startedAt: T0 + 1,
      };
      await a.leases.registerOwner(dead);
      await b.leases.registerOwner(alive);
      // Registering is the first heartbeat.
      expect(await b.leases.listOwners()).toEqual([
        { ...dead, heartbeatAt: dead.startedAt },
        { ...alive, heartbeatAt: alive.startedAt },
      ]);
      // Registering again replaces the record (a restart reusing nothing but the id).
      await a.leases.registerOwner({ ...dead, pid: 43 });
      expect((await b.leases.listOwners()).map((o) => [o.owner, o.pid])).toEqual([
        ["gw_dead", 43],
        ["gw_alive", 42],
      ]);
      const m = await enqueue(a, "s1");
      const { fence } = await hold(a, "s1", "gw_dead");
      await a.inbox.claim("s1", "ses-1", "run-dead", { all: false, lease: fence }, T0);
      expect(await b.leases.retireOwner("gw_dead", T0 + 1)).toBe(1);
      expect((await a.leases.listOwners()).map((o) => o.owner)).toEqual(["gw_alive"]);
      expect((await b.inbox.requeueExpired(T0 + 1)).map((r) => r.id)).toEqual([m.id]);
      await expect(a.leases.registerOwner({ ...alive, owner: "" })).rejects.toThrow(TypeError);
    });

    it("renew is each owner's heartbeat; ownerHoldings says what each holds unexpired", async () => {
      const { a, b } = await processes(ctx);
      const record = (owner: string, startedAt: number) => ({
        owner,
        host: "h",
        pid: 1,
        bootId: null,
        pidNamespace: null,
        startTicks: null,
        startedAt,
      });
      await a.leases.registerOwner(record("gw_a", T0));
      await b.leases.registerOwner(record("gw_b", T0));
      const m1 = await enqueue(a, "s1");
      await enqueue(a, "s2");
      const { fence: f1 } = await hold(a, "s1", "gw_a", T0, TTL);
      await hold(a, "s2", "gw_a", T0, TTL);
      await hold(b, "s3", "gw_b", T0, 2 * TTL);
      await a.inbox.claim("s1", "ses-1", "run-a", { all: false, lease: f1 }, T0 + 1);
      await a.leases.renew("gw_a", T0 + 5, TTL);
      const beats = Object.fromEntries((await b.leases.listOwners()).map((o) => [o.owner, o.heartbeatAt]));
      expect(beats).toEqual({ gw_a: T0 + 5, gw_b: T0 });
      expect(await b.leases.ownerHoldings(T0 + 6)).toEqual([
        { owner: "gw_a", sessions: 2, resources: [], inbox: 1, outbox: 0 },
        { owner: "gw_b", sessions: 1, resources: [], inbox: 0, outbox: 0 },
      ]);
      // Past gw_a's renewed leases only gw_b's longer one holds; an owner holding nothing is left out.
      expect(await b.leases.ownerHoldings(T0 + 5 + TTL)).toEqual([
        { owner: "gw_b", sessions: 1, resources: [], inbox: 0, outbox: 0 },
      ]);
      expect(m1.id).toBeGreaterThan(0);
    });

    it("a resource lease (one poller per bot) is held by one owner, renewed, taken over once expired, listed apart", async () => {
      const { a, b } = await processes(ctx);
      const poll = resourceLeaseKey("channel:telegram:default");
      const beat = resourceLeaseKey("heartbeat:main");
      const first = await a.leases.acquireSession(poll, "gw_a", T0, TTL);
      expect(first).toMatchObject({ owner: "gw_a", fence: 1, requeued: 0 });
      expect(await b.leases.acquireSession(poll, "gw_b", T0 + 1, TTL)).toBeUndefined();
      await b.leases.acquireSession(beat, "gw_b", T0 + 1, TTL);
      await hold(b, "s1", "gw_b", T0 + 1, TTL);
      expect(await a.leases.ownerHoldings(T0 + 2)).toEqual([
        { owner: "gw_a", sessions: 0, resources: ["channel:telegram:default"], inbox: 0, outbox: 0 },
        { owner: "gw_b", sessions: 1, resources: ["heartbeat:main"], inbox: 0, outbox: 0 },
      ]);
      // Renewal keeps it; the renewal says it is still held, under the same fence.
      expect((await a.leases.renew("gw_a", T0 + TTL - 1, TTL)).sessions).toEqual([poll]);
      expect(await b.leases.acquireSession(poll, "gw_b", T0 + TTL + 1, TTL)).toBeUndefined();
      // gw_a stops renewing (paused, dead): past its lease gw_b takes the bot, under a new fence,
      // and gw_a's next renewal no longer lists it.
      const taken = await b.leases.acquireSession(poll, "gw_b", T0 + 2 * TTL, TTL);
      expect(taken).toMatchObject({ owner: "gw_b", fence: 2 });
      expect((await a.leases.renew("gw_a", T0 + 2 * TTL + 1, TTL)).sessions).toEqual([]);
      // A clean release lets the other take it at once.
      expect(await b.leases.releaseSession(poll, "gw_b", 2, T0 + 2 * TTL + 2)).toEqual({ requeued: 0 });
      expect(await a.leases.acquireSession(poll, "gw_a", T0 + 2 * TTL + 3, TTL)).toMatchObject({ fence: 3 });
    });

    it("requeueExpired takes over only runs whose lease expired", async () => {
      const { a, b } = await processes(ctx);
      const received = (await a.inbox.receive(inbound(), "s0", T0)).record;
      const m1 = await enqueue(a, "s1");
      const m2 = await enqueue(a, "s2");
      const queued = await enqueue(a, "s9");
      const { fence: f1 } = await hold(a, "s1", "gw_a", T0, TTL);
      const { fence: f2 } = await hold(b, "s2", "gw_b", T0, 2 * TTL);
      await a.inbox.claim("s1", "ses-1", "run-a", { all: false, lease: f1 }, T0);
      await b.inbox.claim("s2", "ses-2", "run-b", { all: false, lease: f2 }, T0);

      expect(await b.inbox.requeueExpired(T0 + TTL - 1)).toEqual([]);
      const moved = await b.inbox.requeueExpired(T0 + TTL);
      expect(moved.map((r) => [r.id, r.state, r.owner, r.leaseUntil, r.attempts, r.updatedAt])).toEqual([
        [m1.id, "queued", null, null, 1, T0 + TTL],
      ]);
      expect(await a.inbox.get(m2.id)).toMatchObject({ state: "running", owner: "gw_b" });
      expect(await a.inbox.get(queued.id)).toMatchObject({ state: "queued", updatedAt: T0 });
      expect(await a.inbox.get(received.id)).toMatchObject({ state: "received", updatedAt: T0 });
      expect(await a.inbox.requeueExpired(T0 + TTL)).toEqual([]);
      expect((await b.inbox.requeueExpired(T0 + 2 * TTL)).map((r) => r.id)).toEqual([m2.id]);
    });

    it("resetExpired takes over only sends whose lease expired, and returns them", async () => {
      const { a, b } = await processes(ctx);
      const [r1] = await seedReply(a, chat("c1"), ["one"], T0);
      const [r2] = await seedReply(a, chat("c2"), ["two"], T0);
      const [r3] = await seedReply(a, chat("c3"), ["three"], T0);
      const claimedA = await a.outbox.claimDue(T0, 1, { owner: "gw_a", ttlMs: TTL, hosted: [TELEGRAM] });
      const claimedB = await b.outbox.claimDue(T0, 1, { owner: "gw_b", ttlMs: 2 * TTL, hosted: [TELEGRAM] });
      const legacy = await a.outbox.claimDue(T0, 1);
      expect(claimedA.map((r) => [r.id, r.owner, r.leaseUntil])).toEqual([[r1!.id, "gw_a", T0 + TTL]]);
      expect(claimedB.map((r) => [r.id, r.owner, r.leaseUntil])).toEqual([[r2!.id, "gw_b", T0 + 2 * TTL]]);
      expect(legacy.map((r) => [r.id, r.owner, r.leaseUntil])).toEqual([[r3!.id, null, 0]]);

      // A claim without an owner has no live lease; the others wait for theirs to run out.
      expect((await b.outbox.resetExpired(T0 + TTL - 1)).map((r) => r.id)).toEqual([r3!.id]);
      const reset = await b.outbox.resetExpired(T0 + TTL);
      expect(reset.map((r) => [r.id, r.state, r.owner, r.leaseUntil, r.updatedAt])).toEqual([
        [r1!.id, "pending", null, null, T0 + TTL],
      ]);
      expect(await a.outbox.get(r2!.id)).toMatchObject({ state: "sending", owner: "gw_b" });
      expect(await a.outbox.resetExpired(T0 + TTL)).toEqual([]);
      const again = await b.outbox.claimDue(T0 + TTL, 10, { owner: "gw_b", ttlMs: TTL, hosted: [TELEGRAM] });
      expect(again.map((r) => r.id)).toEqual([r1!.id, r3!.id]);
    });

    it("after a takeover the old owner's failure cannot release the new send; a success still counts", async () => {
      const { a, b } = await processes(ctx);
      const [row] = await seedReply(a, chat("c1"), ["r"], T0);
      const [other] = await seedReply(a, chat("c2"), ["o"], T0);
      await a.outbox.claimDue(T0, 10, { owner: "gw_a", ttlMs: TTL, hosted: [TELEGRAM] });
      await b.outbox.resetExpired(T0 + TTL);
      await b.outbox.claimDue(T0 + TTL, 1, { owner: "gw_b", ttlMs: TTL, hosted: [TELEGRAM] });
      expect(await b.outbox.get(row!.id)).toMatchObject({ state: "sending", owner: "gw_b" });

      await a.outbox.markRetry(row!.id, "timeout", T0 + TTL + 5_000, T0 + TTL + 1, "gw_a");
      await a.outbox.markDead(row!.id, "gone", T0 + TTL + 1, "gw_a");
      expect(await b.outbox.get(row!.id)).toMatchObject({ state: "sending", owner: "gw_b", attempts: 0 });
      // The send A started did reach the chat: recorded, it stops a third one.
      await a.outbox.markSent(row!.id, "p-a", T0 + TTL + 2);
      await b.outbox.markSent(row!.id, "p-b", T0 + TTL + 3);
      expect(await b.outbox.get(row!.id)).toMatchObject({
        state: "sent",
        platformMessageId: "p-a",
        owner: null,
        leaseUntil: null,
      });
      // An owner's own outcome applies as always.
      await b.outbox.claimDue(T0 + TTL, 1, { owner: "gw_b", ttlMs: TTL, hosted: [TELEGRAM] });
      expect(await b.outbox.get(other!.id)).toMatchObject({ state: "sending", owner: "gw_b" });
      await b.outbox.markRetry(other!.id, "429", T0 + TTL + 9, T0 + TTL + 4, "gw_b");
      expect(await a.outbox.get(other!.id)).toMatchObject({
        state: "pending",
        attempts: 1,
        owner: null,
        leaseUntil: null,
      });
      await b.outbox.claimDue(T0 + TTL + 9, 1, { owner: "gw_b", ttlMs: TTL, hosted: [TELEGRAM] });
      await b.outbox.markDead(other!.id, "chat gone", T0 + TTL + 10, "gw_b");
      expect(await a.outbox.get(other!.id)).toMatchObject({ state: "dead", attempts: 2, owner: null });
    });
  });

  describe("ownership: hosted channels", () => {
    it("claimDue and nextDueAt see only the channel accounts a process hosts", async () => {
      const { a, b } = await processes(ctx);
      const second: ChatTarget = { channel: "telegram", accountId: "second", chatId: "c2" };
      const slack: ChatTarget = { channel: "slack", accountId: "default", chatId: "c3" };
      const [tg] = await seedReply(a, chat("c1"), ["telegram default"], T0);
      const [tg2] = await seedReply(a, second, ["telegram second"], T0 + 1);
      const [sl] = await seedReply(a, slack, ["slack"], T0 + 2);
      const hostedByB: ChannelAccount[] = [
        { channel: "telegram", accountId: "second" },
        { channel: "slack", accountId: "default" },
      ];
      expect(await a.outbox.nextDueAt({ hosted: [TELEGRAM] })).toBe(T0);
      expect(await b.outbox.nextDueAt({ hosted: hostedByB })).toBe(T0 + 1);
      expect(
        await b.outbox.nextDueAt({ hosted: [{ channel: "discord", accountId: "default" }] }),
      ).toBeUndefined();
      expect(await b.outbox.nextDueAt({ hosted: [] })).toBeUndefined();
      expect(await a.outbox.claimDue(T0 + 5, 10, { owner: "gw_a", ttlMs: TTL, hosted: [] })).toEqual([]);

      const byA = await a.outbox.claimDue(T0 + 5, 10, { owner: "gw_a", ttlMs: TTL, hosted: [TELEGRAM] });
      expect(byA.map((r) => r.id)).toEqual([tg!.id]);
      expect(await a.outbox.get(tg2!.id)).toMatchObject({ state: "pending", owner: null });
      const byB = await b.outbox.claimDue(T0 + 5, 10, { owner: "gw_b", ttlMs: TTL, hosted: hostedByB });
      expect(byB.map((r) => [r.id, r.owner])).toEqual([
        [tg2!.id, "gw_b"],
        [sl!.id, "gw_b"],
      ]);
      expect(await a.outbox.nextDueAt({ hosted: [TELEGRAM] })).toBeUndefined();
    });

    it("expireOlderThan with hosted expires only the rows of those channel accounts", async () => {
      const { a, b } = await processes(ctx);
      const [tg] = await seedReply(a, chat("c1"), ["telegram"], T0);
      const [sl] = await seedReply(
        a,
        { channel: "slack", accountId: "default", chatId: "c2" },
        ["slack"],
        T0,
      );
      const cutoff = T0 + 1;
      expect(await a.outbox.expireOlderThan(cutoff, T0 + 10, { hosted: [] })).toEqual([]);
      const byA = await a.outbox.expireOlderThan(cutoff, T0 + 10, { hosted: [TELEGRAM] });
      expect(byA.map((r) => [r.id, r.state])).toEqual([[tg!.id, "expired"]]);
      expect(await b.outbox.get(sl!.id)).toMatchObject({ state: "pending" });
      const byB = await b.outbox.expireOlderThan(cutoff, T0 + 10, {
        hosted: [{ channel: "slack", accountId: "default" }],
      });
      expect(byB.map((r) => r.id)).toEqual([sl!.id]);
    });

    it("a chat's later row waits for its earlier one, whichever process claimed that", async () => {
      const { a, b } = await processes(ctx);
      const [r0, r1] = await seedReply(a, chat("c1"), ["r0", "r1"], T0);
      const claim = { ttlMs: TTL, hosted: [TELEGRAM] };
      expect((await a.outbox.claimDue(T0, 10, { ...claim, owner: "gw_a" })).map((r) => r.id)).toEqual([
        r0!.id,
      ]);
      expect(await b.outbox.claimDue(T0, 10, { ...claim, owner: "gw_b" })).toEqual([]);
      expect(await b.outbox.nextDueAt({ hosted: [TELEGRAM] })).toBeUndefined();
      await a.outbox.markRetry(r0!.id, "429", T0 + 100, T0 + 1, "gw_a");
      expect(await b.outbox.claimDue(T0 + 99, 10, { ...claim, owner: "gw_b" })).toEqual([]);
      expect(await b.outbox.nextDueAt({ hosted: [TELEGRAM] })).toBe(T0 + 100);
      expect((await b.outbox.claimDue(T0 + 100, 10, { ...claim, owner: "gw_b" })).map((r) => r.id)).toEqual([
        r0!.id,
      ]);
      await b.outbox.markSent(r0!.id, "p0", T0 + 101);
      expect((await a.outbox.claimDue(T0 + 101, 10, { ...claim, owner: "gw_a" })).map((r) => r.id)).toEqual([
        r1!.id,
      ]);
    });
  });

  describe("ownership: which sessions a process may run", () => {
    it("sessionsWithQueued leaves out sessions another owner holds", async () => {
      const { a, b } = await processes(ctx);
      await enqueue(a, "mine");
      await enqueue(a, "theirs");
      await enqueue(a, "free");
      await enqueue(a, "lapsed");
      await hold(a, "mine", "gw_a", T0);
      await hold(b, "theirs", "gw_b", T0);
      await hold(b, "lapsed", "gw_b", T0, 10);
      const released = await hold(b, "free", "gw_b", T0);
      await b.leases.releaseSession("free", "gw_b", released.lease.fence, T0);
      expect(await a.inbox.sessionsWithQueued({ owner: "gw_a", now: T0 + 10 })).toEqual([
        "mine",
        "free",
        "lapsed",
      ]);
      expect(await b.inbox.sessionsWithQueued({ owner: "gw_b", now: T0 + 10 })).toEqual([
        "theirs",
        "free",
        "lapsed",
      ]);
      expect(await a.inbox.sessionsWithQueued()).toEqual(["mine", "theirs", "free", "lapsed"]);
    });
  });
}
