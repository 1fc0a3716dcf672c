/**
 * Store contract, commitTurn: everything a turn writes in one step, and every commit it refuses
 * (writing nothing).
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { InboxRecord } from "../../../src/store/repos/inbox-repo.js";
import type { TranscriptPayload } from "../../../src/store/repos/transcript-repo.js";
import type { Store } from "../../../src/store/types.js";
import {
  chat,
  claimLeased,
  commitLeased,
  enqueue,
  reply,
  runRecord,
  type StoreContext,
  seedLease,
  snapshot,
  T0,
  turn,
} from "./fixtures.js";
/** commitTurn cases: what it writes, and that a refused commit writes nothing. */
export function commitTurnContract(ctx: StoreContext): void {
  describe("commitTurn", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    async function claimOne(sessionKey = "s1", runId = "run-1"): Promise<InboxRecord> {
      await enqueue(store, sessionKey);
      const [claimed] = await claimLeased(store, sessionKey, "ses-1", runId, { all: false }, T0);
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
      const ok = await commitLeased(store, turn("run-1", [claimed.id], { events, outbox }), T0 + 100);
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
      await claimLeased(store, "s1", "ses-1", "run-1", { all: true }, T0);
      expect(await commitLeased(store, turn("run-1", ids), T0 + 1)).toBe(true);
      for (const id of ids) expect((await store.inbox.get(id))?.state).toBe("answered");
      const rows = await store.outbox.listForInbox(ids[2]!);
      expect(rows.map((r) => r.text)).toEqual(["hi there"]);
      expect(await store.inbox.listUnfinished()).toEqual([]);
    });

    it("records a failed turn with its error", async () => {
      const claimed = await claimOne();
      const ok = await commitLeased(
        store,
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
      expect(await commitLeased(store, turn("run-1", [claimed.id]), T0)).toBe(true);
      const before = await snapshot(store);
      const again = turn("run-1", [claimed.id], { outbox: [reply("twice")], run: runRecord("run-1b") });
      expect(await commitLeased(store, again, T0 + 5)).toBe(false);
      expect(await snapshot(store)).toEqual(before);
      expect(await store.runs.get("run-1b")).toBeUndefined();
    });

    it("refuses the old run after a requeue and re-claim by another run", async () => {
      await enqueue(store, "s1");
      const old = await seedLease(store, "s1", T0, { owner: "gw_old", ttlMs: 1 });
      const [claimed] = await store.inbox.claim("s1", "ses-1", "run-old", { all: false, lease: old }, T0);
      if (!claimed) throw new Error("nothing claimed");
      // The old run's lease runs out; the next holder requeues the message and claims it again.
      const [again] = await claimLeased(store, "s1", "ses-1", "run-new", { all: false }, T0 + 2);
      expect(again?.id).toBe(claimed.id);
      const before = await snapshot(store);
      expect(await store.commitTurn({ ...turn("run-old", [claimed.id]), lease: old }, T0 + 3)).toBe(false);
      // Under the session's current lease too: the message runs under another run id now.
      expect(await commitLeased(store, turn("run-old", [claimed.id]), T0 + 3)).toBe(false);
      expect(await snapshot(store)).toEqual(before);
      expect(await store.inbox.get(claimed.id)).toMatchObject({ state: "running", runId: "run-new" });

      expect(await commitLeased(store, turn("run-new", [claimed.id]), T0 + 4)).toBe(true);
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
      expect(await commitLeased(store, turn("run-1", [claimed.id, stillQueued.id]), T0)).toBe(false);
      expect(await commitLeased(store, turn("run-1", [claimed.id, 987_654]), T0)).toBe(false);
      expect(await snapshot(store)).toEqual(before);
      expect((await store.inbox.get(claimed.id))?.state).toBe("running");
      expect(await store.runs.get("run-1")).toBeUndefined();
    });

    it("commits a run at most once", async () => {
      const cron = turn("run-cron", [], { outbox: [reply("heartbeat")] });
      expect(await commitLeased(store, cron, T0)).toBe(true);
      const before = await snapshot(store);
      expect(await commitLeased(store, cron, T0 + 1)).toBe(false);
      expect(await snapshot(store)).toEqual(before);
      expect((await store.outbox.countByState()).pending).toBe(1);
    });
  });
}
