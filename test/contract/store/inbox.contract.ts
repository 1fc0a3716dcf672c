/**
 * Store contract, inbox: receive and dedupe, routing states, claims and their user events, the
 * requeue of interrupted runs, gateway answers (rejectWithReply), counts, and the group context.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../../src/channels/types.js";
import type { Store } from "../../../src/store/types.js";
import { COMMAND_REASON_PREFIX, NOT_MENTIONED } from "../../../src/store/reasons.js";
import {
  chat,
  claimLeased,
  commitLeased,
  enqueue,
  inbound,
  reply,
  runRecord,
  type StoreContext,
  seedLease,
  T0,
  turn,
} from "./fixtures.js";
/** Inbox cases: every InboxRepo method and Store.rejectWithReply. */
export function inboxContract(ctx: StoreContext): void {
  describe("inbox", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("lastPerChat: the newest message of each chat and thread of one channel account, since a time", async () => {
      const take = (over: Partial<InboundMessage>, at: number) =>
        store.inbox.receive(inbound({ channel: "discord", ...over }), "s", at, "received");
      await take({ chatId: "c1", platformMessageId: "100" }, T0);
      await take({ chatId: "c1", platformMessageId: "101" }, T0 + 1);
      await take({ chatId: "c1", threadId: "t1", platformMessageId: "102" }, T0 + 2);
      await take({ chatId: "c2", platformMessageId: "90" }, T0 - 10_000); // before `since`
      await take({ chatId: "c3", accountId: "other", platformMessageId: "103" }, T0 + 3);
      await store.inbox.receive(inbound({ chatId: "c1", platformMessageId: "104" }), "s", T0 + 4, "received"); // telegram
      const last = await store.inbox.lastPerChat("discord", "default", T0 - 1, 1_000);
      expect(last.map((l) => [l.chatId, l.threadId, l.platformMessageId]).sort()).toEqual([
        ["c1", undefined, "101"],
        ["c1", "t1", "102"],
      ]);
      expect(await store.inbox.lastPerChat("discord", "default", T0 - 1, 0)).toEqual([]);
    });

    it("receive commits a message as received", async () => {
      const message = inbound({
        threadId: "th",
        replyToText: "earlier",
        attachments: [{ kind: "image", path: "a.png" }],
      });
      const { record, duplicate } = await store.inbox.receive(message, "s1", T0 + 5);
      expect(duplicate).toBe(false);
      expect(record).toMatchObject({
        dedupeKey: `telegram:default:chat-1:${message.platformMessageId}`,
        sessionKey: "s1",
        state: "received",
        attempts: 0,
        runId: null,
        error: null,
        receivedAt: T0 + 5,
        updatedAt: T0 + 5,
      });
      expect(record.message).toEqual(message);
      expect(await store.inbox.get(record.id)).toEqual(record);
      expect(await store.inbox.get(record.id + 1000)).toBeUndefined();
    });

    it("receive is idempotent by channel, account, chat and platform message id", async () => {
      const message = inbound();
      const first = await store.inbox.receive(message, "s1", T0);
      const again = await store.inbox.receive({ ...message, text: "redelivered" }, "s2", T0 + 10);
      expect(again.duplicate).toBe(true);
      expect(again.record).toEqual(first.record);
      expect((await store.inbox.countByState()).received).toBe(1);

      const otherAccount = await store.inbox.receive({ ...message, accountId: "second" }, "s1", T0);
      const otherChannel = await store.inbox.receive({ ...message, channel: "slack" }, "s1", T0);
      expect(otherAccount.duplicate).toBe(false);
      expect(otherChannel.duplicate).toBe(false);
      expect(new Set([first.record.id, otherAccount.record.id, otherChannel.record.id]).size).toBe(3);
    });

    it("the same platform id from two chats (two HTTP senders both numbering m1) is two messages", async () => {
      const ann = inbound({ channel: "http", chatId: "ann", senderId: "ann", platformMessageId: "m1" });
      const zed = inbound({ channel: "http", chatId: "zed", senderId: "zed", platformMessageId: "m1" });
      const a = await store.inbox.receive(ann, "agent:main:http:dm:ann", T0);
      const z = await store.inbox.receive(zed, "agent:main:http:dm:zed", T0);
      expect(z.duplicate).toBe(false);
      expect(z.record.id).not.toBe(a.record.id);
      expect(z.record.message.senderId).toBe("zed");
      expect((await store.inbox.receive(zed, "agent:main:http:dm:zed", T0)).record.id).toBe(z.record.id);
    });

    it("markQueued and reject move only received rows", async () => {
      const a = (await store.inbox.receive(inbound(), "s1", T0)).record;
      const b = (await store.inbox.receive(inbound(), "s1", T0)).record;
      await store.inbox.markQueued(a.id, T0 + 1);
      await store.inbox.reject(b.id, "not allowed", T0 + 2);
      expect(await store.inbox.get(a.id)).toMatchObject({ state: "queued", updatedAt: T0 + 1 });
      expect(await store.inbox.get(b.id)).toMatchObject({
        state: "rejected",
        error: "not allowed",
        updatedAt: T0 + 2,
      });

      await store.inbox.markQueued(b.id, T0 + 3);
      await store.inbox.reject(a.id, "late", T0 + 3);
      expect((await store.inbox.get(b.id))?.state).toBe("rejected");
      expect(await store.inbox.get(a.id)).toMatchObject({ state: "queued", error: null });
    });

    it("claim takes the oldest queued row of the session", async () => {
      const a1 = await enqueue(store, "A");
      const b1 = await enqueue(store, "B");
      const a2 = await enqueue(store, "A");
      await store.inbox.receive(inbound(), "A", T0); // received, not queued: not claimable
      const claimed = await claimLeased(store, "A", "ses-a", "run-1", { all: false }, T0 + 7);
      expect(claimed.map((r) => r.id)).toEqual([a1.id]);
      expect(claimed[0]).toMatchObject({
        state: "running",
        runId: "run-1",
        attempts: 1,
        updatedAt: T0 + 7,
      });
      expect(await store.inbox.get(a1.id)).toEqual(claimed[0]);

      const next = await claimLeased(store, "A", "ses-a", "run-2", { all: false }, T0 + 8);
      expect(next.map((r) => r.id)).toEqual([a2.id]);
      expect(await claimLeased(store, "A", "ses-a", "run-3", { all: false }, T0 + 9)).toEqual([]);
      expect((await store.inbox.get(b1.id))?.state).toBe("queued");
    });

    it("claim with all takes every queued row of the session in id order (collect mode)", async () => {
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push((await enqueue(store, "A")).id);
      await enqueue(store, "B");
      const claimed = await claimLeased(store, "A", "ses-a", "run-1", { all: true }, T0);
      expect(claimed.map((r) => r.id)).toEqual(ids);
      expect(claimed.every((r) => r.state === "running" && r.runId === "run-1")).toBe(true);
      expect(await store.inbox.sessionsWithQueued()).toEqual(["B"]);
    });

    it("claim appends the user events in the same step", async () => {
      const a = await enqueue(store, "A", T0, { text: "first", senderName: "Ada" });
      const b = await enqueue(store, "A", T0, { text: "second", senderName: "Bob" });
      await claimLeased(store, "A", "ses-a", "run-1", { all: true }, T0 + 3);
      const tail = await store.transcript.tail("A", "ses-a", 10);
      expect(tail.map((e) => e.payload)).toEqual([
        { type: "user", inboxId: a.id, text: "first", senderName: "Ada" },
        { type: "user", inboxId: b.id, text: "second", senderName: "Bob" },
      ]);
      expect(tail.every((e) => e.runId === "run-1" && e.sessionKey === "A" && e.createdAt === T0 + 3)).toBe(
        true,
      );
    });

    it("a re-claim after a crash does not append the user event again", async () => {
      const a = await enqueue(store, "A");
      const crashed = await seedLease(store, "A", T0, { owner: "gw_crashed", ttlMs: 1 });
      await store.inbox.claim("A", "ses-a", "run-1", { all: false, lease: crashed }, T0);
      expect((await store.inbox.requeueExpired(T0 + 1)).map((r) => r.id)).toEqual([a.id]);
      const again = await claimLeased(store, "A", "ses-a", "run-2", { all: false }, T0 + 2);
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ id: a.id, attempts: 2, runId: "run-2", state: "running" });
      const users = (await store.transcript.tail("A", "ses-a", 10)).filter((e) => e.payload.type === "user");
      expect(users).toHaveLength(1);
      expect(users[0]?.runId).toBe("run-1");
    });

    it("requeueExpired moves interrupted runs to queued and leaves received rows to be routed", async () => {
      const received = (await store.inbox.receive(inbound(), "A", T0)).record;
      const running = await enqueue(store, "A");
      const crashed = await seedLease(store, "A", T0, { owner: "gw_crashed", ttlMs: 50 });
      await store.inbox.claim("A", "ses-a", "run-1", { all: false, lease: crashed }, T0);
      const queued = await enqueue(store, "B");
      const rejected = (await store.inbox.receive(inbound(), "C", T0)).record;
      await store.inbox.reject(rejected.id, "no", T0);
      expect(await store.inbox.requeueExpired(T0 + 49)).toEqual([]);
      expect((await store.inbox.requeueExpired(T0 + 50)).map((r) => r.id)).toEqual([running.id]);
      // Not yet past access control: only routing may move it on.
      expect(await store.inbox.get(received.id)).toMatchObject({ state: "received", updatedAt: T0 });
      expect(await store.inbox.get(running.id)).toMatchObject({
        state: "queued",
        attempts: 1,
        updatedAt: T0 + 50,
      });
      expect(await store.inbox.get(queued.id)).toMatchObject({ state: "queued", updatedAt: T0 });
      expect((await store.inbox.get(rejected.id))?.state).toBe("rejected");
      expect(await store.inbox.requeueExpired(T0 + 60)).toEqual([]);
    });

    it("latestTarget is the direct chat a committed turn recorded last", async () => {
      expect(await store.sessions.latestTarget()).toBeUndefined();
      for (const [key, chatId, at] of [
        ["s:a", "chat-a", T0 + 1],
        ["s:b", "chat-b", T0 + 2],
      ] as const) {
        await store.sessions.ensure(key, `ses-${chatId}`, null, T0);
        const record = await enqueue(store, key);
        await claimLeased(store, key, `ses-${chatId}`, `run-${chatId}`, { all: false }, T0);
        const committed = await commitLeased(
          store,
          {
            ...turn(`run-${chatId}`, [record.id]),
            sessionKey: key,
            sessionId: `ses-${chatId}`,
            lastTarget: chat(chatId),
          },
          at,
        );
        expect(committed).toBe(true);
      }
      expect(await store.sessions.latestTarget()).toEqual(chat("chat-b"));
      expect((await store.sessions.get("s:a"))?.lastTarget).toEqual(chat("chat-a"));
    });

    it("rejectWithReply rejects a received row and commits its reply rows, once", async () => {
      const record = (await store.inbox.receive(inbound(), "A", T0)).record;
      const rows = [reply("code part 1"), { ...reply("code part 2"), seq: 1 }];
      expect(await store.rejectWithReply(record.id, "pairing: code issued", rows, T0 + 5)).toBe(true);
      expect(await store.inbox.get(record.id)).toMatchObject({
        state: "rejected",
        error: "pairing: code issued",
      });
      const out = await store.outbox.listForInbox(record.id);
      expect(out.map((r) => [r.text, r.seq, r.state, r.runId, r.sessionKey])).toEqual([
        ["code part 1", 0, "pending", null, "A"],
        ["code part 2", 1, "pending", null, "A"],
      ]);
      // A second call (a redelivery racing the first) writes nothing.
      expect(await store.rejectWithReply(record.id, "again", [reply("twice")], T0 + 6)).toBe(false);
      expect(await store.outbox.listForInbox(record.id)).toHaveLength(2);
      // Nor on a row that was queued, or does not exist.
      const queued = await enqueue(store, "B");
      expect(await store.rejectWithReply(queued.id, "late", [reply("no")], T0)).toBe(false);
      expect((await store.inbox.get(queued.id))?.state).toBe("queued");
      expect(await store.rejectWithReply(999_999, "none", [reply("no")], T0)).toBe(false);
    });

    it("listUnfinished lists received, queued and running rows, oldest first", async () => {
      const received = (await store.inbox.receive(inbound(), "A", T0)).record;
      const running = await enqueue(store, "B");
      await claimLeased(store, "B", "ses-b", "run-b", { all: false }, T0);
      const queued = await enqueue(store, "C");
      const answered = await enqueue(store, "D");
      await claimLeased(store, "D", "ses-1", "run-d", { all: false }, T0);
      expect(await commitLeased(store, turn("run-d", [answered.id], { sessionKey: "D" }), T0)).toBe(true);
      const rejected = (await store.inbox.receive(inbound(), "E", T0)).record;
      await store.inbox.reject(rejected.id, "no", T0);
      const unfinished = await store.inbox.listUnfinished();
      expect(unfinished.map((r) => [r.id, r.state])).toEqual([
        [received.id, "received"],
        [running.id, "running"],
        [queued.id, "queued"],
      ]);
    });

    it("sessionsWithQueued lists sessions by their oldest queued row", async () => {
      await enqueue(store, "B");
      await enqueue(store, "A");
      await enqueue(store, "B");
      await store.inbox.receive(inbound(), "C", T0);
      expect(await store.inbox.sessionsWithQueued()).toEqual(["B", "A"]);
      await claimLeased(store, "B", "ses-b", "run-b", { all: false }, T0);
      expect(await store.inbox.sessionsWithQueued()).toEqual(["A", "B"]);
    });

    it("countByState reports every state, zeros included", async () => {
      expect(await store.inbox.countByState()).toEqual({
        received: 0,
        queued: 0,
        running: 0,
        answered: 0,
        failed: 0,
        rejected: 0,
      });
      await store.inbox.receive(inbound(), "A", T0);
      await enqueue(store, "A");
      await enqueue(store, "A");
      await claimLeased(store, "A", "ses-a", "run-1", { all: false }, T0);
      expect(await store.inbox.countByState()).toEqual({
        received: 1,
        queued: 1,
        running: 1,
        answered: 0,
        failed: 0,
        rejected: 0,
      });
    });

    it("countRejected splits rejected rows into commands, group context and refusals", async () => {
      expect(await store.inbox.countRejected()).toEqual({ commands: 0, groupContext: 0, refused: 0 });
      const rejectAs = async (reason: string, over: Partial<InboundMessage> = {}) => {
        const { record } = await store.inbox.receive(inbound(over), "A", T0);
        await store.inbox.reject(record.id, reason, T0);
      };
      await rejectAs(`${COMMAND_REASON_PREFIX}status`, { text: "/status" });
      await rejectAs(`${COMMAND_REASON_PREFIX}help`, { text: "/help" });
      await rejectAs(NOT_MENTIONED, { isDirect: false, chatId: "g1", mentionsBot: false });
      await rejectAs("not allowed: dmPolicy disabled");
      // A reason that merely mentions a command, or differs in case, is a refusal.
      await rejectAs("COMMAND /status");
      await rejectAs("not a command /status");
      // A command answered with a reply (the gateway's usual path) counts as a command too.
      const { record } = await store.inbox.receive(inbound({ text: "/new" }), "A", T0);
      expect(
        await store.rejectWithReply(record.id, `${COMMAND_REASON_PREFIX}new`, [reply("fresh")], T0),
      ).toBe(true);
      // Rows in other states never count, whatever their error.
      await store.inbox.receive(inbound(), "A", T0);
      const failed = await enqueue(store, "B");
      await claimLeased(store, "B", "ses-1", "run-f", { all: false }, T0);
      await commitLeased(
        store,
        turn("run-f", [failed.id], {
          sessionKey: "B",
          inboxState: "failed",
          error: `${COMMAND_REASON_PREFIX}x`,
          run: runRecord("run-f", { sessionKey: "B", outcome: "failed" }),
        }),
        T0,
      );
      expect((await store.inbox.get(failed.id))?.error).toBe(`${COMMAND_REASON_PREFIX}x`);
      const counts = await store.inbox.countRejected();
      expect(counts).toEqual({ commands: 3, groupContext: 1, refused: 3 });
      expect(counts.commands + counts.groupContext + counts.refused).toBe(
        (await store.inbox.countByState()).rejected,
      );
    });
  });
}

/** Group context: unaddressed group messages since the last run, carried into the claim. */
export function groupContextContract(ctx: StoreContext): void {
  describe("group context", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("returns unaddressed group messages since the last run, oldest first, newest `limit`", async () => {
      const group = { isDirect: false, chatId: "g1" };
      const unaddressed = async (text: string) => {
        const { record } = await store.inbox.receive(
          inbound({ ...group, text, mentionsBot: false }),
          "g",
          T0,
        );
        await store.inbox.reject(record.id, NOT_MENTIONED, T0);
      };
      await unaddressed("before the last run");
      const ran = await enqueue(store, "g", T0, group);
      await unaddressed("one");
      await unaddressed("two");
      await unaddressed("three");
      const { record: other } = await store.inbox.receive(inbound({ ...group, text: "/help" }), "g", T0);
      await store.inbox.reject(other.id, "command /help", T0);
      expect((await store.inbox.groupContext("g", 50)).map((r) => r.message.text)).toEqual([
        "one",
        "two",
        "three",
      ]);
      expect((await store.inbox.groupContext("g", 2)).map((r) => r.message.text)).toEqual(["two", "three"]);
      expect(await store.inbox.groupContext("elsewhere", 50)).toEqual([]);
      expect(ran.state).toBe("received");
    });

    it("withThreads: a run in one of the chat's threads is the boundary too", async () => {
      const group = { isDirect: false, chatId: "C1" };
      const unaddressed = async (text: string) => {
        const { record } = await store.inbox.receive(
          inbound({ ...group, text, mentionsBot: false }),
          "g:C1",
          T0,
        );
        await store.inbox.reject(record.id, NOT_MENTIONED, T0);
      };
      await unaddressed("seen by the first thread");
      await enqueue(store, "g:C1:thread:1.1", T0, { ...group, text: "@bot first" });
      await unaddressed("after it");
      await enqueue(store, "g:C10:thread:2.2", T0, { ...group, chatId: "C10", text: "@bot other chat" });
      const texts = async (withThreads: boolean) =>
        (await store.inbox.groupContext("g:C1", 50, { withThreads })).map((r) => r.message.text);
      expect(await texts(true)).toEqual(["after it"]);
      expect(await texts(false)).toEqual(["seen by the first thread", "after it"]);
    });

    it("claim carries the group context and the group flag into the user event", async () => {
      const context = [{ senderName: "Bo", text: "lunch at 1?" }];
      await enqueue(store, "g", T0, {
        isDirect: false,
        chatId: "g1",
        text: "@bot book it",
        groupContext: context,
      });
      await claimLeased(store, "g", "ses", "run-g", { all: false }, T0);
      const [event] = await store.transcript.tail("g", "ses", 10);
      expect(event?.payload).toMatchObject({ type: "user", text: "@bot book it", isGroup: true, context });
    });
  });
}
