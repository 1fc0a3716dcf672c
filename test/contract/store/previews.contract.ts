/**
 * Store contract, streaming previews: one record per key, written when a preview was posted;
 * a reply chunk marked sent for the same key removes it; a starting channel learns which
 * records nothing will take any more (settled).
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { PreviewKey } from "../../../src/store/repos/preview-repo.js";
import type { Store } from "../../../src/store/types.js";
import {
  type StoreContext,
  T0,
  chat,
  claimLeased,
  commitLeased,
  enqueue,
  inbound,
  reply,
  turn,
} from "./fixtures.js";

/** Preview cases: every PreviewRepo method, and markSent's part. */
export function previewsContract(ctx: StoreContext): void {
  describe("previews", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    const key = (replyTo: string, over: Partial<PreviewKey> = {}): PreviewKey => ({
      channel: "telegram",
      accountId: "default",
      chatId: "chat-1",
      threadId: "",
      replyTo,
      ...over,
    });

    it("records one message per key, lists one channel account's, forgets", async () => {
      await store.previews.record({ ...key("pm-a"), messageId: "100", createdAt: T0 });
      await store.previews.record({ ...key("pm-a"), messageId: "101", createdAt: T0 + 1 }); // replaces
      await store.previews.record({ ...key("pm-a", { threadId: "7" }), messageId: "102", createdAt: T0 + 2 });
      await store.previews.record({
        ...key("pm-a", { accountId: "other" }),
        messageId: "103",
        createdAt: T0,
      });
      await store.previews.record({ ...key("pm-a", { channel: "slack" }), messageId: "104", createdAt: T0 });
      const listed = await store.previews.list("telegram", "default");
      expect(listed.map((p) => [p.threadId, p.messageId, p.createdAt])).toEqual([
        ["", "101", T0 + 1],
        ["7", "102", T0 + 2],
      ]);
      await store.previews.forget(key("pm-a"));
      await store.previews.forget(key("pm-none"));
      expect((await store.previews.list("telegram", "default")).map((p) => p.messageId)).toEqual(["102"]);
      expect((await store.previews.list("slack", "default")).map((p) => p.messageId)).toEqual(["104"]);
    });

    it("is settled once its message is finished and no reply to its key waits to be sent", async () => {
      const m = await enqueue(store, "s1", T0, { platformMessageId: "pm-wait" });
      await store.previews.record({ ...key("pm-wait"), messageId: "1", createdAt: T0 });
      await store.previews.record({ ...key("pm-unknown"), messageId: "2", createdAt: T0 });
      const settled = async () =>
        Object.fromEntries(
          (await store.previews.list("telegram", "default")).map((p) => [p.replyTo, p.settled]),
        );
      expect(await settled()).toEqual({ "pm-wait": false, "pm-unknown": true });
      await claimLeased(store, "s1", "ses-1", "run-1", { all: false }, T0);
      expect(await settled()).toEqual({ "pm-wait": false, "pm-unknown": true });
      // Answered, its reply not sent yet: a restarted channel must keep it for that reply.
      const answer = [reply("part 1", 0, { replyTo: "pm-wait" }), reply("part 2", 1, { replyTo: "pm-wait" })];
      expect(await commitLeased(store, turn("run-1", [m.id], { outbox: answer }), T0 + 1)).toBe(true);
      expect(await settled()).toEqual({ "pm-wait": false, "pm-unknown": true });
      const [first] = await store.outbox.claimDue(T0 + 2, 1);
      expect(await settled()).toEqual({ "pm-wait": false, "pm-unknown": true });
      // The reply's first chunk sent: it took the preview, whose record goes in the same step.
      await store.outbox.markSent(first!.id, "1", T0 + 3);
      expect(await settled()).toEqual({ "pm-unknown": true });
    });

    it("a reply in a thread finishes the preview of its thread only; a rejected message's is settled", async () => {
      await store.previews.record({ ...key("pm-t", { threadId: "7" }), messageId: "1", createdAt: T0 });
      await store.previews.record({ ...key("pm-t", { threadId: "8" }), messageId: "2", createdAt: T0 });
      const { record } = await store.inbox.receive(inbound({ platformMessageId: "pm-t" }), "s1", T0);
      await store.inbox.reject(record.id, "a command", T0);
      await store.outbox.insert(
        [reply("in 7", 0, { target: chat("chat-1", "7"), replyTo: "pm-t" })],
        "s1",
        T0,
      );
      const listed = async () =>
        (await store.previews.list("telegram", "default")).map((p) => [p.threadId, p.settled]);
      expect(await listed()).toEqual([
        ["7", false],
        ["8", true],
      ]);
      const [row] = await store.outbox.claimDue(T0, 1);
      await store.outbox.markSent(row!.id, "9", T0 + 1);
      expect(await listed()).toEqual([["8", true]]);
    });
  });
}
