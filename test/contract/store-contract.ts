/**
 * The Store contract suite: every repository method and the documented semantics, driven
 * only through the `Store` interface, so every store implementation (SQLite today, a server
 * database later) runs the same suite: `runStoreContract("sqlite", () => openSqliteStore(...))`.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatTarget, InboundMessage } from "../../src/channels/types.js";
import type {
  CommitTurn,
  InboxRecord,
  OutboxInsert,
  OutboxRecord,
  RunRecord,
  Store,
  TranscriptPayload,
} from "../../src/store/types.js";
import { COMMAND_REASON_PREFIX, NOT_MENTIONED } from "../../src/store/types.js";

const T0 = Date.UTC(2024, 0, 15, 12, 0, 0);

let messageSeq = 0;

/** An inbound message with a fresh platform id unless one is given. */
function inbound(over: Partial<InboundMessage> = {}): InboundMessage {
  messageSeq++;
  return {
    channel: "telegram",
    accountId: "default",
    chatId: "chat-1",
    senderId: "user-1",
    senderName: "Ada",
    isDirect: true,
    mentionsBot: true,
    text: `hello ${messageSeq}`,
    attachments: [],
    platformMessageId: `pm-${messageSeq}`,
    receivedAt: T0,
    ...over,
  };
}

function chat(chatId = "chat-1", threadId?: string): ChatTarget {
  return { channel: "telegram", accountId: "default", chatId, ...(threadId ? { threadId } : {}) };
}

function runRecord(runId: string, over: Partial<RunRecord> = {}): RunRecord {
  return {
    runId,
    sessionKey: "s1",
    trigger: "user",
    channel: "telegram",
    provider: "openai",
    model: "gpt-test",
    startedAt: T0,
    durationMs: 1200,
    outcome: "answered",
    usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 1 },
    toolCalls: 2,
    modelCalls: 3,
    errorKind: null,
    error: null,
    ...over,
  };
}

function reply(text: string, seq = 0, over: Partial<OutboxInsert> = {}): OutboxInsert {
  return { target: chat(), text, seq, kind: "reply", ...over };
}

/** receive + markQueued: a message that passed access control. */
async function enqueue(store: Store, sessionKey: string, now = T0, over: Partial<InboundMessage> = {}) {
  const { record } = await store.inbox.receive(inbound(over), sessionKey, now);
  await store.inbox.markQueued(record.id, now);
  return record;
}

function turn(runId: string, inboxIds: number[], over: Partial<CommitTurn> = {}): CommitTurn {
  return {
    sessionKey: "s1",
    sessionId: "ses-1",
    runId,
    inboxIds,
    inboxState: "answered",
    events: [{ type: "assistant", text: "hi there", toolCalls: [] }],
    outbox: [reply("hi there")],
    run: runRecord(runId),
    ...over,
  };
}

let runSeq = 0;

/** A whole turn for one message: enqueue, claim, commit `texts` as chunks to `target`. Returns the outbox rows. */
async function seedReply(
  store: Store,
  target: ChatTarget,
  texts: string[],
  now: number,
  recipientId = "user-1",
): Promise<OutboxRecord[]> {
  runSeq++;
  const sessionKey = `s:${target.chatId}:${target.threadId ?? ""}`;
  const runId = `run-seed-${runSeq}`;
  await enqueue(store, sessionKey, now, { chatId: target.chatId, threadId: target.threadId });
  const [claimed] = await store.inbox.claim(sessionKey, "ses", runId, { all: false }, now);
  if (!claimed) throw new Error("seedReply: nothing claimed");
  const outbox = texts.map((text, seq) => ({ target, text, seq, kind: "reply" as const, recipientId }));
  const ok = await store.commitTurn(
    turn(runId, [claimed.id], { sessionKey, outbox, run: runRecord(runId, { sessionKey }) }),
    now,
  );
  if (!ok) throw new Error("seedReply: commit refused");
  return store.outbox.listForInbox(claimed.id);
}

/** Everything a refused commit must leave untouched. */
async function snapshot(store: Store, sessionKey = "s1", sessionId = "ses-1") {
  return {
    inbox: await store.inbox.countByState(),
    outbox: await store.outbox.countByState(),
    transcript: await store.transcript.tail(sessionKey, sessionId, 1000),
    runs: await store.runs.recent(1000),
    usage: await store.usage.byDay(1000),
  };
}

/**
 * Registers the Store contract suite. `makeStore` is called before every test (and every
 * property-test run) and must return a fresh, empty store; the suite closes it.
 */
export function runStoreContract(name: string, makeStore: () => Promise<Store> | Store): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(() => {
      store.close();
    });

    it("reports a schema version", () => {
      expect(store.schemaVersion()).toBeGreaterThan(0);
    });

    describe("inbox", () => {
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
        const claimed = await store.inbox.claim("A", "ses-a", "run-1", { all: false }, T0 + 7);
        expect(claimed.map((r) => r.id)).toEqual([a1.id]);
        expect(claimed[0]).toMatchObject({
          state: "running",
          runId: "run-1",
          attempts: 1,
          updatedAt: T0 + 7,
        });
        expect(await store.inbox.get(a1.id)).toEqual(claimed[0]);

        const next = await store.inbox.claim("A", "ses-a", "run-2", { all: false }, T0 + 8);
        expect(next.map((r) => r.id)).toEqual([a2.id]);
        expect(await store.inbox.claim("A", "ses-a", "run-3", { all: false }, T0 + 9)).toEqual([]);
        expect((await store.inbox.get(b1.id))?.state).toBe("queued");
      });

      it("claim with all takes every queued row of the session in id order (collect mode)", async () => {
        const ids = [];
        for (let i = 0; i < 4; i++) ids.push((await enqueue(store, "A")).id);
        await enqueue(store, "B");
        const claimed = await store.inbox.claim("A", "ses-a", "run-1", { all: true }, T0);
        expect(claimed.map((r) => r.id)).toEqual(ids);
        expect(claimed.every((r) => r.state === "running" && r.runId === "run-1")).toBe(true);
        expect(await store.inbox.sessionsWithQueued()).toEqual(["B"]);
      });

      it("claim appends the user events in the same step", async () => {
        const a = await enqueue(store, "A", T0, { text: "first", senderName: "Ada" });
        const b = await enqueue(store, "A", T0, { text: "second", senderName: "Bob" });
        await store.inbox.claim("A", "ses-a", "run-1", { all: true }, T0 + 3);
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
        await store.inbox.claim("A", "ses-a", "run-1", { all: false }, T0);
        expect(await store.inbox.requeueInterrupted(T0 + 1)).toBe(1);
        const again = await store.inbox.claim("A", "ses-a", "run-2", { all: false }, T0 + 2);
        expect(again).toHaveLength(1);
        expect(again[0]).toMatchObject({ id: a.id, attempts: 2, runId: "run-2", state: "running" });
        const users = (await store.transcript.tail("A", "ses-a", 10)).filter(
          (e) => e.payload.type === "user",
        );
        expect(users).toHaveLength(1);
        expect(users[0]?.runId).toBe("run-1");
      });

      it("requeueInterrupted moves running rows to queued and leaves received rows to be routed", async () => {
        const received = (await store.inbox.receive(inbound(), "A", T0)).record;
        const running = await enqueue(store, "A");
        await store.inbox.claim("A", "ses-a", "run-1", { all: false }, T0);
        const queued = await enqueue(store, "B");
        const rejected = (await store.inbox.receive(inbound(), "C", T0)).record;
        await store.inbox.reject(rejected.id, "no", T0);
        expect(await store.inbox.requeueInterrupted(T0 + 50)).toBe(1);
        // Not yet past access control: only routing may move it on.
        expect(await store.inbox.get(received.id)).toMatchObject({ state: "received", updatedAt: T0 });
        expect(await store.inbox.get(running.id)).toMatchObject({
          state: "queued",
          attempts: 1,
          updatedAt: T0 + 50,
        });
        expect(await store.inbox.get(queued.id)).toMatchObject({ state: "queued", updatedAt: T0 });
        expect((await store.inbox.get(rejected.id))?.state).toBe("rejected");
        expect(await store.inbox.requeueInterrupted(T0 + 60)).toBe(0);
      });

      it("latestTarget is the direct chat a committed turn recorded last", async () => {
        expect(await store.sessions.latestTarget()).toBeUndefined();
        for (const [key, chatId, at] of [
          ["s:a", "chat-a", T0 + 1],
          ["s:b", "chat-b", T0 + 2],
        ] as const) {
          await store.sessions.ensure(key, `ses-${chatId}`, null, T0);
          const record = await enqueue(store, key);
          await store.inbox.claim(key, `ses-${chatId}`, `run-${chatId}`, { all: false }, T0);
          const committed = await store.commitTurn(
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
        await store.inbox.claim("B", "ses-b", "run-b", { all: false }, T0);
        const queued = await enqueue(store, "C");
        const answered = await enqueue(store, "D");
        await store.inbox.claim("D", "ses-1", "run-d", { all: false }, T0);
        expect(await store.commitTurn(turn("run-d", [answered.id], { sessionKey: "D" }), T0)).toBe(true);
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
        await store.inbox.claim("B", "ses-b", "run-b", { all: false }, T0);
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
        await store.inbox.claim("A", "ses-a", "run-1", { all: false }, T0);
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
        await store.inbox.claim("B", "ses-1", "run-f", { all: false }, T0);
        await store.commitTurn(
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

    describe("commitTurn", () => {
      async function claimOne(sessionKey = "s1", runId = "run-1"): Promise<InboxRecord> {
        await enqueue(store, sessionKey);
        const [claimed] = await store.inbox.claim(sessionKey, "ses-1", runId, { all: false }, T0);
        if (!claimed) throw new Error("nothing claimed");
        return claimed;
      }

      it("writes events, outbox rows, inbox state, run record and usage", async () => {
        const claimed = await claimOne();
        const events: TranscriptPayload[] = [
          {
            type: "assistant",
            text: "",
            toolCalls: [{ id: "t1", name: "read", argumentsJson: '{"p":"a"}' }],
          },
          { type: "tool_result", toolCallId: "t1", name: "read", content: "ok", isError: false },
          { type: "assistant", text: "done", toolCalls: [] },
        ];
        const outbox = [
          reply("part one", 0, { replyTo: "pm-x", recipientId: "user-1" }),
          reply("part two", 1, { target: chat("chat-1", "th-1") }),
        ];
        const ok = await store.commitTurn(turn("run-1", [claimed.id], { events, outbox }), T0 + 100);
        expect(ok).toBe(true);

        expect(await store.inbox.get(claimed.id)).toMatchObject({
          state: "answered",
          error: null,
          updatedAt: T0 + 100,
        });
        const tail = await store.transcript.tail("s1", "ses-1", 10);
        expect(tail.map((e) => e.payload)).toEqual([
          { type: "user", inboxId: claimed.id, text: claimed.message.text, senderName: "Ada" },
          ...events,
        ]);
        expect(tail.slice(1).every((e) => e.runId === "run-1" && e.createdAt === T0 + 100)).toBe(true);

        const rows = await store.outbox.listForInbox(claimed.id);
        expect(rows).toHaveLength(2);
        expect(rows[0]).toMatchObject({
          sessionKey: "s1",
          runId: "run-1",
          inboxId: claimed.id,
          target: chat(),
          replyTo: "pm-x",
          recipientId: "user-1",
          text: "part one",
          seq: 0,
          kind: "reply",
          state: "pending",
          attempts: 0,
          nextAttemptAt: T0 + 100,
          platformMessageId: null,
          lastError: null,
          createdAt: T0 + 100,
        });
        expect(rows[1]).toMatchObject({ text: "part two", seq: 1, target: chat("chat-1", "th-1") });
        expect(rows[1]?.replyTo).toBeUndefined();
        expect(rows[0]?.target.threadId).toBeUndefined();

        expect(await store.runs.get("run-1")).toEqual(runRecord("run-1"));
        expect(await store.usage.byDay(10)).toEqual([
          { day: "2024-01-15", provider: "openai", model: "gpt-test", usage: runRecord("x").usage, runs: 1 },
        ]);
      });

      it("finishes every collected message, linking the outbox to the last one", async () => {
        const ids = [
          (await enqueue(store, "s1")).id,
          (await enqueue(store, "s1")).id,
          (await enqueue(store, "s1")).id,
        ];
        await store.inbox.claim("s1", "ses-1", "run-1", { all: true }, T0);
        expect(await store.commitTurn(turn("run-1", ids), T0 + 1)).toBe(true);
        for (const id of ids) expect((await store.inbox.get(id))?.state).toBe("answered");
        const rows = await store.outbox.listForInbox(ids[2]!);
        expect(rows.map((r) => r.text)).toEqual(["hi there"]);
        expect(await store.inbox.listUnfinished()).toEqual([]);
      });

      it("records a failed turn with its error", async () => {
        const claimed = await claimOne();
        const ok = await store.commitTurn(
          turn("run-1", [claimed.id], {
            inboxState: "failed",
            error: "timeout: no progress",
            events: [{ type: "notice", text: "Sorry" }],
            outbox: [reply("Sorry", 0, { kind: "notice" })],
            run: runRecord("run-1", {
              outcome: "timeout",
              errorKind: "progress_timeout",
              error: "no progress",
            }),
          }),
          T0,
        );
        expect(ok).toBe(true);
        expect(await store.inbox.get(claimed.id)).toMatchObject({
          state: "failed",
          error: "timeout: no progress",
        });
        expect((await store.outbox.listForInbox(claimed.id))[0]?.kind).toBe("notice");
        expect(await store.runs.get("run-1")).toMatchObject({
          outcome: "timeout",
          errorKind: "progress_timeout",
        });
      });

      it("refuses a second commit of the same message and writes nothing", async () => {
        const claimed = await claimOne();
        expect(await store.commitTurn(turn("run-1", [claimed.id]), T0)).toBe(true);
        const before = await snapshot(store);
        const again = turn("run-1", [claimed.id], { outbox: [reply("twice")], run: runRecord("run-1b") });
        expect(await store.commitTurn(again, T0 + 5)).toBe(false);
        expect(await snapshot(store)).toEqual(before);
        expect(await store.runs.get("run-1b")).toBeUndefined();
      });

      it("refuses the old run after a requeue and re-claim by another run", async () => {
        const claimed = await claimOne("s1", "run-old");
        await store.inbox.requeueInterrupted(T0 + 1);
        await store.inbox.claim("s1", "ses-1", "run-new", { all: false }, T0 + 2);
        const before = await snapshot(store);
        expect(await store.commitTurn(turn("run-old", [claimed.id]), T0 + 3)).toBe(false);
        expect(await snapshot(store)).toEqual(before);
        expect(await store.inbox.get(claimed.id)).toMatchObject({ state: "running", runId: "run-new" });

        expect(await store.commitTurn(turn("run-new", [claimed.id]), T0 + 4)).toBe(true);
        expect(await store.inbox.get(claimed.id)).toMatchObject({
          state: "answered",
          runId: "run-new",
          attempts: 2,
        });
      });

      it("is all or nothing when one of its messages is not running under the run", async () => {
        const claimed = await claimOne();
        const stillQueued = await enqueue(store, "s1");
        const before = await snapshot(store);
        expect(await store.commitTurn(turn("run-1", [claimed.id, stillQueued.id]), T0)).toBe(false);
        expect(await store.commitTurn(turn("run-1", [claimed.id, 987_654]), T0)).toBe(false);
        expect(await snapshot(store)).toEqual(before);
        expect((await store.inbox.get(claimed.id))?.state).toBe("running");
        expect(await store.runs.get("run-1")).toBeUndefined();
      });

      it("commits a run at most once", async () => {
        const cron = turn("run-cron", [], { outbox: [reply("heartbeat")] });
        expect(await store.commitTurn(cron, T0)).toBe(true);
        const before = await snapshot(store);
        expect(await store.commitTurn(cron, T0 + 1)).toBe(false);
        expect(await snapshot(store)).toEqual(before);
        expect((await store.outbox.countByState()).pending).toBe(1);
      });
    });

    describe("outbox", () => {
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

      it("resetSending moves sending rows back to pending", async () => {
        await seedReply(store, chat("c1"), ["a"], T0);
        await seedReply(store, chat("c2"), ["b"], T0);
        await seedReply(store, chat("c3"), ["c"], T0);
        const claimed = await store.outbox.claimDue(T0, 2);
        await store.outbox.markSent(claimed[1]!.id, "p", T0);
        expect((await store.outbox.resetSending(T0 + 9)).map((r) => r.state)).toEqual(["pending"]);
        expect(await store.outbox.get(claimed[0]!.id)).toMatchObject({ state: "pending", updatedAt: T0 + 9 });
        expect(await store.outbox.resetSending(T0 + 10)).toEqual([]);
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

      it("listSentFor is the sent mailbox of one recipient on one channel", async () => {
        const target = { channel: "http", accountId: "default", chatId: "u1" } as const;
        const rows: OutboxRecord[] = [];
        for (const [i, who] of ["ann", "bob", "ann", "ann"].entries()) {
          const sessionKey = `http:${who}`;
          await enqueue(store, sessionKey, T0, { channel: "http" });
          const [claimed] = await store.inbox.claim(sessionKey, "ses", `run-${i}`, { all: false }, T0);
          const outbox = [
            { target, text: `to ${who} ${i}`, seq: 0, kind: "reply" as const, recipientId: who },
          ];
          await store.commitTurn(turn(`run-${i}`, [claimed!.id], { sessionKey, outbox }), T0);
          rows.push(...(await store.outbox.listForInbox(claimed!.id)));
        }
        await seedReply(store, { ...target, channel: "slack" }, ["slack for ann"], T0, "ann");
        // One chat: a single row goes out per round, so only the first one is sent yet.
        for (const row of await store.outbox.claimDue(T0, 10)) await store.outbox.markSent(row.id, "p", T0);
        expect((await store.outbox.listSentFor("http", "ann", 0, 10)).map((r) => r.text)).toEqual([
          "to ann 0",
        ]);
        for (let round = 0; round < 3; round++) {
          for (const row of await store.outbox.claimDue(T0, 10)) await store.outbox.markSent(row.id, "p", T0);
        }
        expect(rows).toHaveLength(4);
        const annAll = await store.outbox.listSentFor("http", "ann", 0, 10);
        expect(annAll.map((r) => r.text)).toEqual(["to ann 0", "to ann 2", "to ann 3"]);
        expect(annAll[0]).toMatchObject({ state: "sent", recipientId: "ann", target });
        const after = await store.outbox.listSentFor("http", "ann", annAll[0]!.id, 1);
        expect(after.map((r) => r.text)).toEqual(["to ann 2"]);
        expect((await store.outbox.listSentFor("http", "bob", 0, 10)).map((r) => r.text)).toEqual([
          "to bob 1",
        ]);
        expect(await store.outbox.listSentFor("http", "nobody", 0, 10)).toEqual([]);
      });

      it("claimDue never releases a later row of a chat before the earlier ones are finished", async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(outboxOp, { minLength: 1, maxLength: 40 }), async (ops) => {
            const fresh = await makeStore();
            try {
              await checkClaimOrdering(fresh, ops);
            } finally {
              fresh.close();
            }
          }),
          { numRuns: 40 },
        );
      });
    });

    describe("sessions", () => {
      it("ensure creates once and keeps the session id", async () => {
        expect(await store.sessions.get("k")).toBeUndefined();
        const created = await store.sessions.ensure("k", "ses-1", chat("c1"), T0);
        expect(created).toEqual({
          sessionKey: "k",
          sessionId: "ses-1",
          lastTarget: chat("c1"),
          createdAt: T0,
          updatedAt: T0,
        });
        const again = await store.sessions.ensure("k", "ses-2", null, T0 + 1);
        expect(again).toEqual(created);
        const moved = await store.sessions.ensure("k", "ses-3", chat("c2", "t"), T0 + 2);
        expect(moved).toMatchObject({ sessionId: "ses-1", lastTarget: chat("c2", "t"), createdAt: T0 });
        expect(await store.sessions.get("k")).toEqual(moved);
        expect(await store.sessions.count()).toBe(1);
      });

      it("reset starts a fresh session id under the same key", async () => {
        await store.sessions.ensure("k", "ses-1", chat("c1"), T0);
        const reset = await store.sessions.reset("k", "ses-2", T0 + 5);
        expect(reset).toMatchObject({
          sessionKey: "k",
          sessionId: "ses-2",
          lastTarget: chat("c1"),
          createdAt: T0,
        });
        expect((await store.sessions.get("k"))?.sessionId).toBe("ses-2");
        const fresh = await store.sessions.reset("other", "ses-9", T0 + 6);
        expect(fresh).toMatchObject({ sessionKey: "other", sessionId: "ses-9", lastTarget: null });
        expect(await store.sessions.count()).toBe(2);
      });

      it("list summarises each key: channel, last activity, messages, running; most recent first", async () => {
        expect(await store.sessions.list(10)).toEqual([]);
        // A DM with a direct chat: messages count user and assistant events of the current id only.
        const dm = "agent:main:telegram:dm:42";
        await store.sessions.ensure(dm, "ses-old", chat("c1"), T0);
        await store.transcript.append(dm, "ses-old", null, [{ type: "notice", text: "old" }], T0 + 1);
        await store.sessions.reset(dm, "ses-1", T0 + 2);
        await store.transcript.append(
          dm,
          "ses-1",
          "run-1",
          [
            { type: "user", inboxId: 9_001, text: "hi", senderName: "Ada" },
            { type: "assistant", text: "", toolCalls: [{ id: "c1", name: "exec", argumentsJson: "{}" }] },
            { type: "tool_result", toolCallId: "c1", name: "exec", content: "ok", isError: false },
            { type: "assistant", text: "done", toolCalls: [] },
            { type: "notice", text: "n" },
          ],
          T0 + 30,
        );
        // The heartbeat key: no target, channel from the key.
        const heartbeat = "agent:main:heartbeat";
        await store.sessions.ensure(heartbeat, "ses-h", null, T0);
        await store.transcript.append(
          heartbeat,
          "ses-h",
          "run-h",
          [
            { type: "trigger", origin: "heartbeat", text: "check" },
            { type: "assistant", text: "HEARTBEAT_OK", toolCalls: [] },
          ],
          T0 + 10,
        );
        // A key with a turn in progress: its inbox row is newer than its events.
        const main = "agent:main:main";
        await store.sessions.ensure(main, "ses-m", null, T0);
        await enqueue(store, main, T0 + 40);
        await store.inbox.claim(main, "ses-m", "run-m", { all: false }, T0 + 50);
        // A session with nothing in it yet: its own update time.
        const quiet = "agent:ops:slack:default:group:C1";
        await store.sessions.ensure(quiet, "ses-q", null, T0 + 5);

        const all = await store.sessions.list(10);
        expect(all.map((s) => s.sessionKey)).toEqual([main, dm, heartbeat, quiet]);
        expect(all[0]).toEqual({
          sessionKey: main,
          sessionId: "ses-m",
          channel: "main",
          lastTarget: null,
          lastActivityAt: T0 + 50,
          messages: 1,
          running: true,
        });
        expect(all[1]).toEqual({
          sessionKey: dm,
          sessionId: "ses-1",
          channel: "telegram",
          lastTarget: chat("c1"),
          lastActivityAt: T0 + 30,
          messages: 3,
          running: false,
        });
        expect(all[2]).toMatchObject({ channel: "heartbeat", lastActivityAt: T0 + 10, messages: 1 });
        expect(all[3]).toMatchObject({
          channel: "slack",
          lastActivityAt: T0 + 5,
          messages: 0,
          running: false,
        });

        expect((await store.sessions.list(2)).map((s) => s.sessionKey)).toEqual([main, dm]);
        expect(await store.sessions.list(0)).toEqual([]);
      });

      it("list follows the turn: running until committed, activity from the inbox and the transcript", async () => {
        const key = "agent:main:telegram:dm:7";
        await store.sessions.ensure(key, "ses-1", null, T0);
        await store.sessions.ensure("agent:main:telegram:dm:8", "ses-2", null, T0 + 20);
        const record = await enqueue(store, key, T0 + 10);
        let [summary] = await store.sessions.list(1);
        expect(summary).toMatchObject({ sessionKey: "agent:main:telegram:dm:8", running: false });
        await store.inbox.claim(key, "ses-1", "run-1", { all: false }, T0 + 30);
        [summary] = await store.sessions.list(1);
        expect(summary).toMatchObject({
          sessionKey: key,
          running: true,
          messages: 1,
          lastActivityAt: T0 + 30,
        });
        const committed = await store.commitTurn(
          turn("run-1", [record.id], { sessionKey: key, lastTarget: chat("c7") }),
          T0 + 40,
        );
        expect(committed).toBe(true);
        [summary] = await store.sessions.list(1);
        expect(summary).toMatchObject({
          sessionKey: key,
          channel: "telegram",
          lastTarget: chat("c7"),
          running: false,
          messages: 2,
          lastActivityAt: T0 + 40,
        });
        // Ties are broken by key.
        await store.sessions.ensure("a", "ses-a", null, T0 + 40);
        expect((await store.sessions.list(2)).map((s) => s.sessionKey)).toEqual(["a", key]);
        expect((await store.sessions.list(2))[0]?.channel).toBe("a");
      });
    });

    describe("transcript", () => {
      it("tail returns the last events of one session id, oldest first", async () => {
        const payloads: TranscriptPayload[] = [
          { type: "notice", text: "n0" },
          { type: "assistant", text: "a1", toolCalls: [{ id: "c1", name: "exec", argumentsJson: "{}" }] },
          {
            type: "tool_result",
            toolCallId: "c1",
            name: "exec",
            content: "x",
            isError: true,
            synthetic: true,
          },
          { type: "assistant", text: "a3", toolCalls: [] },
        ];
        await store.transcript.append("k", "ses-1", "run-1", payloads.slice(0, 2), T0);
        await store.transcript.append("k", "ses-2", null, [{ type: "notice", text: "other session" }], T0);
        await store.transcript.append("other", "ses-1", null, [{ type: "notice", text: "other key" }], T0);
        await store.transcript.append("k", "ses-1", null, payloads.slice(2), T0 + 1);

        const all = await store.transcript.tail("k", "ses-1", 100);
        expect(all.map((e) => e.payload)).toEqual(payloads);
        expect(all.map((e) => e.runId)).toEqual(["run-1", "run-1", null, null]);
        expect(all.every((e, i) => i === 0 || e.id > all[i - 1]!.id)).toBe(true);
        expect(all[3]).toMatchObject({ sessionKey: "k", sessionId: "ses-1", createdAt: T0 + 1 });
        expect((await store.transcript.tail("k", "ses-1", 2)).map((e) => e.payload)).toEqual(
          payloads.slice(2),
        );
        expect(await store.transcript.tail("k", "ses-1", 0)).toEqual([]);
        expect(await store.transcript.tail("k", "ses-3", 10)).toEqual([]);
      });

      it("tail read again after appends of every kind sees exactly the committed events", async () => {
        const texts = async (limit: number) =>
          (await store.transcript.tail("k", "ses-1", limit)).map(
            (e) => (e.payload as { text?: string }).text,
          );
        expect(await texts(3)).toEqual([]);
        await store.transcript.append("k", "ses-1", null, [{ type: "notice", text: "a" }], T0);
        expect(await texts(3)).toEqual(["a"]);
        await store.transcript.append("k", "ses-1", null, [{ type: "notice", text: "b" }], T0);
        await store.transcript.append("k", "ses-1", null, [{ type: "notice", text: "c" }], T0);
        await store.transcript.append("k", "ses-1", null, [{ type: "notice", text: "d" }], T0);
        expect(await texts(3)).toEqual(["b", "c", "d"]);
        expect(await texts(2)).toEqual(["c", "d"]);
        expect(await texts(10)).toEqual(["a", "b", "c", "d"]);
        // Claim writes the user event; appending it again is skipped, not doubled.
        const record = await enqueue(store, "k");
        await store.inbox.claim("k", "ses-1", "run-t", { all: false }, T0);
        const user = { type: "user" as const, inboxId: record.id, text: "u", senderName: "Ada" };
        await store.transcript.append("k", "ses-1", "run-t", [user], T0);
        const afterClaim = await store.transcript.tail("k", "ses-1", 10);
        expect(afterClaim.filter((e) => e.payload.type === "user")).toHaveLength(1);
        // A refused commitTurn leaves nothing behind.
        const ghost: CommitTurn = {
          ...turn("run-other", [record.id], { events: [{ type: "notice", text: "ghost" }] }),
          sessionKey: "k",
        };
        expect(await store.commitTurn(ghost, T0)).toBe(false);
        expect(await texts(10)).not.toContain("ghost");
        const real: CommitTurn = {
          ...turn("run-t", [record.id], { events: [{ type: "notice", text: "e" }] }),
          sessionKey: "k",
        };
        expect(await store.commitTurn(real, T0)).toBe(true);
        expect((await texts(2)).at(-1)).toBe("e");
      });
    });

    describe("group context", () => {
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

      it("claim carries the group context and the group flag into the user event", async () => {
        const context = [{ senderName: "Bo", text: "lunch at 1?" }];
        await enqueue(store, "g", T0, {
          isDirect: false,
          chatId: "g1",
          text: "@bot book it",
          groupContext: context,
        });
        await store.inbox.claim("g", "ses", "run-g", { all: false }, T0);
        const [event] = await store.transcript.tail("g", "ses", 10);
        expect(event?.payload).toMatchObject({ type: "user", text: "@bot book it", isGroup: true, context });
      });
    });

    describe("pairing", () => {
      const who = {
        channel: "telegram",
        accountId: "default",
        senderId: "42",
        senderName: "Ann",
        code: "ABCD2345",
      };
      const opts = { ttlMs: 3_600_000, maxPending: 3 };

      it("creates one request per sender, returns it again while it lasts, and caps pending per channel", async () => {
        const first = await store.pairing.request(who, opts, T0);
        expect(first).toMatchObject({
          status: "created",
          request: { code: "ABCD2345", expiresAt: T0 + 3_600_000 },
        });
        expect(await store.pairing.request({ ...who, code: "ZZZZ9999" }, opts, T0 + 10)).toMatchObject({
          status: "existing",
          request: { code: "ABCD2345" },
        });
        await store.pairing.request({ ...who, senderId: "2", code: "CODE0002" }, opts, T0);
        await store.pairing.request({ ...who, senderId: "3", code: "CODE0003" }, opts, T0);
        expect(await store.pairing.request({ ...who, senderId: "4", code: "CODE0004" }, opts, T0)).toEqual({
          status: "full",
        });
        expect(
          await store.pairing.request(
            { ...who, channel: "slack", senderId: "4", code: "CODE0004" },
            opts,
            T0,
          ),
        ).toMatchObject({
          status: "created",
        });
        expect((await store.pairing.listPending(T0)).length).toBe(4);
        // An hour later every request has expired and room is free again.
        expect(await store.pairing.listPending(T0 + 3_600_000)).toEqual([]);
        expect(
          await store.pairing.request({ ...who, senderId: "4", code: "CODE0005" }, opts, T0 + 3_600_000),
        ).toMatchObject({
          status: "created",
        });
      });

      it("approves by code (any case), persists the approval, and refuses expired or unknown codes", async () => {
        await store.pairing.request(who, opts, T0);
        expect(await store.pairing.isApproved("telegram", "42")).toBe(false);
        expect(await store.pairing.approve("telegram", "nope", T0)).toBeUndefined();
        expect(await store.pairing.approve("slack", "ABCD2345", T0)).toBeUndefined();
        const approved = await store.pairing.approve("telegram", "abcd2345", T0 + 5);
        expect(approved).toEqual({
          channel: "telegram",
          senderId: "42",
          senderName: "Ann",
          code: "ABCD2345",
          approvedAt: T0 + 5,
        });
        expect(await store.pairing.isApproved("telegram", "42")).toBe(true);
        expect(await store.pairing.isApproved("slack", "42")).toBe(false);
        expect(await store.pairing.listPending(T0)).toEqual([]);
        expect(await store.pairing.listApproved()).toEqual([approved]);
        await store.pairing.request({ ...who, senderId: "7", code: "LATE0007" }, opts, T0);
        expect(await store.pairing.approve("telegram", "LATE0007", T0 + 3_600_000)).toBeUndefined();
        expect(await store.pairing.revoke("telegram", "42")).toBe(true);
        expect(await store.pairing.isApproved("telegram", "42")).toBe(false);
      });
    });

    describe("runs and usage", () => {
      async function commitRun(run: RunRecord): Promise<void> {
        expect(await store.commitTurn(turn(run.runId, [], { run, outbox: [] }), T0)).toBe(true);
      }

      it("keeps run records, newest first, and counts every outcome", async () => {
        expect(await store.runs.countByOutcome()).toEqual({ answered: 0, failed: 0, aborted: 0, timeout: 0 });
        expect(await store.runs.get("nope")).toBeUndefined();
        await commitRun(runRecord("r1", { startedAt: T0 }));
        await commitRun(
          runRecord("r2", { startedAt: T0 + 2, outcome: "failed", trigger: "cron", channel: null }),
        );
        await commitRun(
          runRecord("r3", { startedAt: T0 + 1, outcome: "failed", errorKind: "rate_limit", error: "429" }),
        );
        expect(await store.runs.get("r2")).toEqual(
          runRecord("r2", { startedAt: T0 + 2, outcome: "failed", trigger: "cron", channel: null }),
        );
        expect((await store.runs.recent(10)).map((r) => r.runId)).toEqual(["r2", "r3", "r1"]);
        expect((await store.runs.recent(1)).map((r) => r.runId)).toEqual(["r2"]);
        expect(await store.runs.countByOutcome()).toEqual({ answered: 1, failed: 2, aborted: 0, timeout: 0 });
      });

      it("adds usage up per UTC day, provider and model, newest day first", async () => {
        const day1Late = Date.UTC(2024, 0, 1, 23, 59, 59);
        const day2Early = Date.UTC(2024, 0, 2, 0, 0, 1);
        const u = (n: number) => ({
          inputTokens: n,
          outputTokens: n * 2,
          cacheReadTokens: n * 3,
          cacheWriteTokens: n * 4,
        });
        await commitRun(runRecord("a", { startedAt: day1Late, usage: u(1) }));
        await commitRun(runRecord("b", { startedAt: Date.UTC(2024, 0, 1, 0, 0, 0), usage: u(10) }));
        await commitRun(runRecord("c", { startedAt: day2Early, usage: u(100) }));
        await commitRun(runRecord("d", { startedAt: day1Late, usage: u(1000), model: "gpt-other" }));
        await commitRun(
          runRecord("e", { startedAt: day1Late, usage: u(7), provider: "anthropic", model: "claude" }),
        );
        expect(await store.usage.byDay(10)).toEqual([
          { day: "2024-01-02", provider: "openai", model: "gpt-test", usage: u(100), runs: 1 },
          { day: "2024-01-01", provider: "anthropic", model: "claude", usage: u(7), runs: 1 },
          { day: "2024-01-01", provider: "openai", model: "gpt-other", usage: u(1000), runs: 1 },
          { day: "2024-01-01", provider: "openai", model: "gpt-test", usage: u(11), runs: 2 },
        ]);
        expect(await store.usage.byDay(1)).toHaveLength(1);
      });
    });
  });
}

// ---------------------------------------------------------------- outbox ordering property

type ModelOutcome = "sent" | "retry" | "dead" | "hold";

type OutboxOp =
  | { type: "reply"; chat: number; thread: boolean; chunks: number }
  | { type: "dispatch"; limit: number; outcomes: ModelOutcome[] }
  | { type: "advance"; ms: number }
  | { type: "restart" };

const outboxOp: fc.Arbitrary<OutboxOp> = fc.oneof(
  fc.record({
    type: fc.constant("reply" as const),
    chat: fc.integer({ min: 0, max: 2 }),
    thread: fc.boolean(),
    chunks: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({
    type: fc.constant("dispatch" as const),
    limit: fc.integer({ min: 1, max: 6 }),
    outcomes: fc.array(fc.constantFrom("sent" as const, "retry" as const, "dead" as const, "hold" as const), {
      maxLength: 6,
    }),
  }),
  fc.record({ type: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 2_000 }) }),
  fc.constant({ type: "restart" as const }),
);

interface ModelRow {
  id: number;
  chat: string;
  state: "pending" | "sending" | "sent" | "dead";
  nextAttemptAt: number;
}

/**
 * Replays random replies, dispatches (with sent / retry / dead / still-sending outcomes),
 * clock moves and restarts against a model, checking every claimDue answer exactly: it is
 * the set of chats' first unfinished rows that are pending and due (up to the limit), and
 * every chat's rows are sent in id order. Ends by draining everything.
 */
async function checkClaimOrdering(store: Store, ops: readonly OutboxOp[]): Promise<void> {
  let now = T0;
  const rows = new Map<number, ModelRow>();
  const sentOrder = new Map<string, number[]>();
  const chatKey = (t: ChatTarget) => `${t.chatId}|${t.threadId ?? ""}`;

  const eligible = (): number[] => {
    const byChat = new Map<string, ModelRow>();
    for (const row of [...rows.values()].sort((a, b) => a.id - b.id)) {
      if (row.state === "sent" || row.state === "dead" || byChat.has(row.chat)) continue;
      byChat.set(row.chat, row);
    }
    return [...byChat.values()]
      .filter((r) => r.state === "pending" && r.nextAttemptAt <= now)
      .map((r) => r.id);
  };

  /** Earliest nextAttemptAt among chats' first unfinished rows that are pending. */
  const nextDue = (): number | undefined => {
    const firsts = new Map<string, ModelRow>();
    for (const row of [...rows.values()].sort((a, b) => a.id - b.id)) {
      if (row.state === "sent" || row.state === "dead" || firsts.has(row.chat)) continue;
      firsts.set(row.chat, row);
    }
    const due = [...firsts.values()].filter((r) => r.state === "pending").map((r) => r.nextAttemptAt);
    return due.length > 0 ? Math.min(...due) : undefined;
  };

  const dispatch = async (limit: number, outcomes: readonly ModelOutcome[]) => {
    expect(await store.outbox.nextDueAt()).toBe(nextDue());
    const expected = eligible();
    const claimed = await store.outbox.claimDue(now, limit);
    const ids = claimed.map((r) => r.id);
    expect(ids.every((id) => expected.includes(id))).toBe(true);
    expect(ids.length).toBe(Math.min(limit, expected.length));
    for (const [i, record] of claimed.entries()) {
      const row = rows.get(record.id)!;
      expect(record.state).toBe("sending");
      expect(chatKey(record.target)).toBe(row.chat);
      row.state = "sending";
      const outcome = outcomes[i] ?? "sent";
      if (outcome === "sent") {
        await store.outbox.markSent(row.id, `p-${row.id}`, now);
        row.state = "sent";
        sentOrder.set(row.chat, [...(sentOrder.get(row.chat) ?? []), row.id]);
      } else if (outcome === "retry") {
        row.nextAttemptAt = now + 500;
        await store.outbox.markRetry(row.id, "transient", row.nextAttemptAt, now);
        row.state = "pending";
      } else if (outcome === "dead") {
        await store.outbox.markDead(row.id, "permanent", now);
        row.state = "dead";
      }
    }
  };

  for (const op of ops) {
    if (op.type === "reply") {
      const target = chat(`c${op.chat}`, op.thread ? "t" : undefined);
      const texts = Array.from({ length: op.chunks }, (_, i) => `chunk ${i}`);
      for (const r of await seedReply(store, target, texts, now)) {
        rows.set(r.id, { id: r.id, chat: chatKey(target), state: "pending", nextAttemptAt: now });
      }
    } else if (op.type === "dispatch") {
      await dispatch(op.limit, op.outcomes);
    } else if (op.type === "advance") {
      now += op.ms;
    } else {
      const reset = await store.outbox.resetSending(now);
      const sending = [...rows.values()].filter((r) => r.state === "sending");
      expect(reset.map((r) => r.id).sort((a, b) => a - b)).toEqual(
        sending.map((r) => r.id).sort((a, b) => a - b),
      );
      for (const r of sending) r.state = "pending";
    }
  }

  // Drain: everything unfinished goes out eventually, still in order.
  await store.outbox.resetSending(now);
  for (const r of rows.values()) if (r.state === "sending") r.state = "pending";
  for (let round = 0; round < 200 && [...rows.values()].some((r) => r.state === "pending"); round++) {
    now += 500;
    await dispatch(100, []);
  }
  expect([...rows.values()].every((r) => r.state === "sent" || r.state === "dead")).toBe(true);
  for (const ids of sentOrder.values()) expect(ids).toEqual([...ids].sort((a, b) => a - b));
  const counts = await store.outbox.countByState();
  expect(counts.sent).toBe([...rows.values()].filter((r) => r.state === "sent").length);
}
