/**
 * Store contract, the mailbox cursor (HTTP `GET /v1/chat/replies?after=`): a recipient's sent
 * replies numbered in the order they became sent, so a reader that passes the last cursor it
 * saw never misses one, whichever process sent it and whenever its row was created.
 */
import { describe, expect, it } from "vitest";
import type { ChatTarget } from "../../../src/channels/types.js";
import type { MailboxReply } from "../../../src/store/repos/outbox-repo.js";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, seedReply, T0 } from "./fixtures.js";

const HTTP: ChatTarget = { channel: "http", accountId: "default", chatId: "ann" };

/** Reads a whole mailbox one row per call, each call passing the cursor the last one returned. */
async function readOneByOne(store: Store, channel: string, recipientId: string): Promise<MailboxReply[]> {
  const read: MailboxReply[] = [];
  for (let after = 0; read.length < 1_000; ) {
    const [next, ...rest] = await store.outbox.listMailbox(channel, recipientId, after, 1);
    expect(rest).toEqual([]);
    if (!next) return read;
    read.push(next);
    after = next.mailboxCursor;
  }
  throw new Error("the mailbox never ended");
}

/** Mailbox cases: OutboxRepo.listMailbox and the cursors markSent and delivering commits hand out. */
export function mailboxContract(ctx: StoreContext): void {
  describe("mailbox cursor", () => {
    it("a row sent after a later one (a retry) comes after the cursor a reader already holds", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      const [late] = await seedReply(a, HTTP, ["late"], T0, "ann");
      const [first] = await seedReply(b, HTTP, ["first"], T0 + 1, "ann", { delivered: true });
      expect(late!.id).toBeLessThan(first!.id);
      expect(late).toMatchObject({ state: "pending", mailboxCursor: null });
      const seen = await a.outbox.listMailbox("http", "ann", 0, 10);
      expect(seen.map((r) => [r.id, r.text, r.state])).toEqual([[first!.id, "first", "sent"]]);
      const cursor = seen[0]!.mailboxCursor;

      const claim = {
        owner: "gw_a",
        ttlMs: 30_000,
        hosted: [{ channel: "http", accountId: "default" }] as const,
      };
      expect((await a.outbox.claimDue(T0 + 2, 10, claim)).map((r) => r.id)).toEqual([late!.id]);
      await a.outbox.markSent(late!.id, "p-late", T0 + 3);
      const next = await b.outbox.listMailbox("http", "ann", cursor, 10);
      expect(next.map((r) => [r.id, r.text])).toEqual([[late!.id, "late"]]);
      expect(next[0]!.mailboxCursor).toBeGreaterThan(cursor);
      expect(await a.outbox.get(late!.id)).toMatchObject({ mailboxCursor: next[0]!.mailboxCursor });
      expect(await b.outbox.listMailbox("http", "ann", next[0]!.mailboxCursor, 10)).toEqual([]);
    });

    it("numbers one recipient's rows in send order across processes and chunks; each mailbox its own", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      await seedReply(a, HTTP, ["a0", "a1"], T0, "ann", { delivered: true });
      await seedReply(b, HTTP, ["b0"], T0 + 1, "ann", { delivered: true });
      await seedReply(a, { ...HTTP, chatId: "bob" }, ["to bob"], T0 + 2, "bob", { delivered: true });
      await seedReply(b, { ...HTTP, channel: "console" }, ["console ann"], T0 + 3, "ann", {
        delivered: true,
      });
      await seedReply(a, HTTP, ["a2"], T0 + 4, "ann", { delivered: true });

      const all = await b.outbox.listMailbox("http", "ann", 0, 10);
      expect(all.map((r) => r.text)).toEqual(["a0", "a1", "b0", "a2"]);
      expect(all.every((r, i) => i === 0 || r.mailboxCursor > all[i - 1]!.mailboxCursor)).toBe(true);
      expect(
        all.every((r) => r.state === "sent" && r.recipientId === "ann" && r.target.channel === "http"),
      ).toBe(true);
      expect(await readOneByOne(a, "http", "ann")).toEqual(all);
      expect(
        (await a.outbox.listMailbox("http", "ann", all[1]!.mailboxCursor, 1)).map((r) => r.text),
      ).toEqual(["b0"]);
      expect((await a.outbox.listMailbox("http", "bob", 0, 10)).map((r) => r.text)).toEqual(["to bob"]);
      expect((await a.outbox.listMailbox("console", "ann", 0, 10)).map((r) => r.text)).toEqual([
        "console ann",
      ]);
      expect(await a.outbox.listMailbox("http", "nobody", 0, 10)).toEqual([]);
      expect(await a.outbox.listMailbox("http", "ann", 0, 0)).toEqual([]);
    });

    it("a reader polling while two processes deliver never misses a row", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      const read: string[] = [];
      let after = 0;
      const poll = async () => {
        for (const row of await a.outbox.listMailbox("http", "ann", after, 2)) {
          read.push(row.text);
          after = row.mailboxCursor;
        }
      };
      const sent: string[] = [];
      for (let i = 0; i < 12; i++) {
        const writer = i % 3 === 0 ? a : b;
        const texts = i % 4 === 0 ? [`r${i}.0`, `r${i}.1`] : [`r${i}`];
        await seedReply(writer, HTTP, texts, T0 + i, "ann", { delivered: true });
        sent.push(...texts);
        if (i % 2 === 1) await poll();
      }
      while (read.length < sent.length) {
        const before = read.length;
        await poll();
        if (read.length === before) break;
      }
      expect(read).toEqual(sent);
    });

    it("mailboxEnd is the last cursor handed out, per recipient and channel; a reader starting there sees only what comes next", async () => {
      const a = ctx.store;
      const b = await ctx.peer();
      expect(await a.outbox.mailboxEnd("http", "ann")).toBe(0);
      await seedReply(a, HTTP, ["a0", "a1"], T0, "ann", { delivered: true });
      await seedReply(b, { ...HTTP, chatId: "bob" }, ["to bob"], T0 + 1, "bob", { delivered: true });
      const [pending] = await seedReply(a, HTTP, ["pending"], T0 + 2, "ann");
      const all = await a.outbox.listMailbox("http", "ann", 0, 10);
      const end = await b.outbox.mailboxEnd("http", "ann");
      expect(end).toBe(all.at(-1)!.mailboxCursor);
      expect(await a.outbox.mailboxEnd("console", "ann")).toBe(0);
      expect(await a.outbox.mailboxEnd("http", "bob")).toBeGreaterThan(0);
      expect(await a.outbox.listMailbox("http", "ann", end, 10)).toEqual([]);
      await seedReply(b, HTTP, ["next"], T0 + 3, "ann", { delivered: true });
      expect((await a.outbox.listMailbox("http", "ann", end, 10)).map((r) => r.text)).toEqual(["next"]);
      expect(pending).toMatchObject({ state: "pending" });
    });

    it("rows without a recipient, or not sent, are in no mailbox", async () => {
      const a = ctx.store;
      const [pending] = await seedReply(a, HTTP, ["pending"], T0, "ann");
      const [anonymous] = await seedReply(a, HTTP, ["anonymous"], T0, "ann", {
        delivered: true,
        recipientId: undefined,
      });
      expect(pending).toMatchObject({ state: "pending", mailboxCursor: null });
      expect(anonymous).toMatchObject({ state: "sent", mailboxCursor: null });
      await a.outbox.claimDue(T0, 10);
      await a.outbox.markDead(pending!.id, "gone", T0 + 1);
      expect(await a.outbox.listMailbox("http", "ann", 0, 10)).toEqual([]);
    });
  });
}
