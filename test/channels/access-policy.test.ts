/**
 * ChannelAccessPolicy against the real SQLite pairing repository (in memory) and a manual clock:
 * every DM and group policy, pairing codes (shape, reuse, expiry, the pending cap), approvals.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import {
  type ChannelAccessOptions,
  ChannelAccessPolicy,
  allowAll,
  newPairingCode,
} from "../../src/channels/access-policy.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { NOT_MENTIONED } from "../../src/store/reasons.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";

const HOUR = 3_600_000;

const dm = (senderId: string, extra: Partial<InboundMessage> = {}): InboundMessage => ({
  channel: "telegram",
  accountId: "default",
  chatId: senderId,
  senderId,
  senderName: `User ${senderId}`,
  isDirect: true,
  mentionsBot: true,
  text: "hi",
  attachments: [],
  platformMessageId: `${senderId}:1`,
  receivedAt: 0,
  ...extra,
});

const groupMessage = (chatId: string, mentionsBot: boolean): InboundMessage =>
  dm("7", { chatId, isDirect: false, mentionsBot });

let store: Store;
let clock: ManualClock;

beforeEach(() => {
  store = openSqliteStore({ path: ":memory:" });
  clock = new ManualClock();
});

afterEach(() => store.close());

function policy(options: Partial<ChannelAccessOptions> = {}): ChannelAccessPolicy {
  return new ChannelAccessPolicy({
    channel: "telegram",
    dmPolicy: "pairing",
    allowFrom: ["1"],
    groupPolicy: "allowlist",
    groups: ["-100"],
    requireMention: true,
    groupHistoryLimit: 50,
    pairing: store.pairing,
    clock,
    logger: silentLogger(),
    ...options,
  });
}

describe("direct messages", () => {
  it("allowlist: lets allowFrom in and turns everyone else away without a reply", async () => {
    const p = policy({ dmPolicy: "allowlist" });
    expect(await p.check(dm("1"))).toEqual({ allowed: true });
    expect(await p.check(dm("2"))).toEqual({
      allowed: false,
      reason: "sender is not in allowFrom (dmPolicy: allowlist)",
    });
    expect(await store.pairing.listPending(clock.now())).toEqual([]);
  });

  it("open: lets anyone in", async () => {
    expect(await policy({ dmPolicy: "open" }).check(dm("999"))).toEqual({ allowed: true });
  });

  it("disabled: turns everyone away, allowFrom included", async () => {
    const verdict = await policy({ dmPolicy: "disabled" }).check(dm("1"));
    expect(verdict).toEqual({ allowed: false, reason: "direct messages are disabled (dmPolicy: disabled)" });
  });

  it("pairing: gives an unknown sender one code (reused while pending), the approval command, and no access", async () => {
    const p = policy();
    const first = await p.check(dm("2"));
    expect(first.allowed).toBe(false);
    const reply = first.allowed ? "" : (first.reply ?? "");
    const code = /pairing code is ([A-Z2-9]{8})/.exec(reply)?.[1];
    expect(code).toBeDefined();
    expect(reply).toContain(`switchyard pairing approve telegram ${code}`);
    // Asking again while the code is pending: no new code, no reply (nothing else answered).
    expect(await p.check(dm("2"))).toEqual({ allowed: false, reason: "pairing: awaiting approval" });
    expect(await store.pairing.listPending(clock.now())).toHaveLength(1);
  });

  it("pairing: approval lets the sender in for good; it is per channel", async () => {
    const p = policy();
    const verdict = await p.check(dm("2"));
    const code = /([A-Z2-9]{8})/.exec(verdict.allowed ? "" : (verdict.reply ?? ""))?.[1] ?? "";
    expect(await store.pairing.approve("telegram", code, clock.now())).toMatchObject({ senderId: "2" });
    expect(await p.check(dm("2"))).toEqual({ allowed: true });
    clock.advance(30 * 24 * HOUR);
    expect(await p.check(dm("2"))).toEqual({ allowed: true });
    expect(await policy({ channel: "slack" }).check(dm("2", { channel: "slack" }))).toMatchObject({
      allowed: false,
    });
  });

  it("pairing: at most three codes pending; the fourth sender gets nothing until one expires", async () => {
    const p = policy();
    for (const id of ["2", "3", "4"]) expect((await p.check(dm(id))).allowed).toBe(false);
    expect(await p.check(dm("5"))).toEqual({ allowed: false, reason: "pairing: too many pending requests" });
    expect(await store.pairing.listPending(clock.now())).toHaveLength(3);
    clock.advance(HOUR + 1); // codes last one hour
    const later = await p.check(dm("5"));
    expect(later.allowed === false && later.reply).toMatch(/pairing code is [A-Z2-9]{8}/);
  });

  it("pairing: an expired code cannot be approved, and the sender gets a fresh one", async () => {
    const p = policy({ pairingTtlMs: 1_000 });
    const first = await p.check(dm("2"));
    const oldCode = /([A-Z2-9]{8})/.exec(first.allowed ? "" : (first.reply ?? ""))?.[1] ?? "";
    clock.advance(1_001);
    expect(await store.pairing.approve("telegram", oldCode, clock.now())).toBeUndefined();
    const second = await p.check(dm("2"));
    expect(second.allowed === false && second.reply).toMatch(/pairing code is [A-Z2-9]{8}/);
  });

  it("makes codes of 8 unambiguous characters", () => {
    for (let i = 0; i < 200; i++) expect(newPairingCode()).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
  });
});

describe("groups", () => {
  it("allowlist: only listed groups, and only when the bot is addressed", async () => {
    const p = policy();
    expect(await p.check(groupMessage("-100", true))).toEqual({ allowed: true });
    expect(await p.check(groupMessage("-100", false))).toEqual({ allowed: false, reason: NOT_MENTIONED });
    expect(await p.check(groupMessage("-200", true))).toEqual({
      allowed: false,
      reason: "group -200 is not in groups (groupPolicy: allowlist)",
    });
  });

  it("open: any group, still only when addressed", async () => {
    const p = policy({ groupPolicy: "open" });
    expect(await p.check(groupMessage("-200", true))).toEqual({ allowed: true });
    expect(await p.check(groupMessage("-200", false))).toEqual({ allowed: false, reason: NOT_MENTIONED });
  });

  it("disabled: no group at all", async () => {
    expect(await policy({ groupPolicy: "disabled" }).check(groupMessage("-100", true))).toEqual({
      allowed: false,
      reason: "groups are disabled (groupPolicy: disabled)",
    });
  });

  it("requireMention false: every message of an allowed group", async () => {
    expect(await policy({ requireMention: false }).check(groupMessage("-100", false))).toEqual({
      allowed: true,
    });
  });

  it("never grants a group through a DM approval", async () => {
    const p = policy({ groups: [] });
    expect(await p.check(dm("1"))).toEqual({ allowed: true }); // allowFrom in DMs
    expect((await p.check(groupMessage("-100", true))).allowed).toBe(false);
  });

  it("a platform's group rule replaces the flat list and may set requireMention per group", async () => {
    const p = policy({
      groupRule: (m) =>
        m.chatId === "quiet"
          ? { listed: true, requireMention: false }
          : m.chatId === "loud"
            ? { listed: true }
            : { listed: false, reason: `channel ${m.chatId} is not in guilds` },
    });
    expect(await p.check(groupMessage("quiet", false))).toEqual({ allowed: true });
    expect(await p.check(groupMessage("loud", false))).toEqual({ allowed: false, reason: NOT_MENTIONED });
    expect(await p.check(groupMessage("-100", true))).toEqual({
      allowed: false,
      reason: "channel -100 is not in guilds (groupPolicy: allowlist)",
    });
    // Open groups ignore the listing but keep the default mention gate for unlisted chats.
    const open = policy({ groupPolicy: "open", groupRule: () => ({ listed: false, reason: "unlisted" }) });
    expect(await open.check(groupMessage("x", false))).toEqual({ allowed: false, reason: NOT_MENTIONED });
    expect(await open.check(groupMessage("x", true))).toEqual({ allowed: true });
  });

  it("reports its group history limit; local channels allow everyone and keep no history", async () => {
    expect(policy({ groupHistoryLimit: 7 }).groupHistoryLimit).toBe(7);
    expect(await allowAll.check(dm("anyone"))).toEqual({ allowed: true });
    expect(allowAll.groupHistoryLimit).toBe(0);
  });
});

describe("admits (no side effects)", () => {
  it("agrees with check for every policy, and issues no pairing code", async () => {
    const cases: Array<[Partial<ChannelAccessOptions>, InboundMessage]> = [
      [{}, dm("1")],
      [{}, dm("2")],
      [{ dmPolicy: "open" }, dm("2")],
      [{ dmPolicy: "allowlist" }, dm("1")],
      [{ dmPolicy: "allowlist" }, dm("2")],
      [{ dmPolicy: "disabled" }, dm("1")],
      [{}, groupMessage("-100", true)],
      [{}, groupMessage("-100", false)],
      [{}, groupMessage("-200", true)],
      [{ groupPolicy: "open" }, groupMessage("-200", true)],
      [{ requireMention: false }, groupMessage("-100", false)],
    ];
    for (const [options, message] of cases) {
      const admitted = await policy(options).admits(message);
      expect(await store.pairing.listPending(clock.now())).toEqual([]);
      expect({ options, message: message.senderId, admitted }).toEqual({
        options,
        message: message.senderId,
        admitted: (await policy(options).check(message)).allowed,
      });
      // check may have issued a code; start clean for the next case.
      for (const pending of await store.pairing.listPending(clock.now()))
        await store.pairing.approve(pending.channel, pending.code, clock.now());
      for (const approved of await store.pairing.listApproved())
        await store.pairing.revoke(approved.channel, approved.senderId);
    }
  });

  it("admits a sender once their pairing code is approved", async () => {
    const p = policy();
    expect(await p.admits(dm("5"))).toBe(false);
    await p.check(dm("5"));
    const [pending] = await store.pairing.listPending(clock.now());
    await store.pairing.approve("telegram", pending?.code ?? "", clock.now());
    expect(await p.admits(dm("5"))).toBe(true);
  });
});
