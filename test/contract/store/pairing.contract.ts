/**
 * Store contract, pairing: requests per sender with a cap per channel, approval by code,
 * revocation.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, T0 } from "./fixtures.js";
/** Pairing cases: every PairingRepo method. */
export function pairingContract(ctx: StoreContext): void {
  describe("pairing", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

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
        await store.pairing.request({ ...who, channel: "slack", senderId: "4", code: "CODE0004" }, opts, T0),
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

    it("denies a pending request by code (any case): it is gone, the sender not approved", async () => {
      await store.pairing.request(who, opts, T0);
      expect(await store.pairing.deny("slack", "ABCD2345")).toBe(false);
      expect(await store.pairing.deny("telegram", "abcd2345")).toBe(true);
      expect(await store.pairing.deny("telegram", "ABCD2345")).toBe(false);
      expect(await store.pairing.listPending(T0)).toEqual([]);
      expect(await store.pairing.isApproved("telegram", "42")).toBe(false);
      expect(await store.pairing.approve("telegram", "ABCD2345", T0)).toBeUndefined();
    });
  });
}
