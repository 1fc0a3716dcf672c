import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import { sessionKeyFor } from "../../src/gateway/session-key.js";

const dm: InboundMessage = {
  channel: "telegram",
  accountId: "bot1",
  chatId: "42",
  senderId: "42",
  senderName: "Ann",
  isDirect: true,
  mentionsBot: true,
  text: "hi",
  attachments: [],
  platformMessageId: "1",
  receivedAt: 0,
};

describe("sessionKeyFor", () => {
  it("keys direct messages per sender by default scope", () => {
    expect(sessionKeyFor(dm, "main", "per-channel-peer")).toBe("agent:main:telegram:dm:42");
    expect(sessionKeyFor(dm, "main", "per-peer")).toBe("agent:main:dm:42");
    expect(sessionKeyFor(dm, "main", "per-account-channel-peer")).toBe("agent:main:telegram:bot1:dm:42");
    expect(sessionKeyFor(dm, "main", "main")).toBe("agent:main:main");
  });

  it("gives groups and threads their own keys per bot account, whatever the DM scope", () => {
    const group = { ...dm, isDirect: false, chatId: "-100123" };
    expect(sessionKeyFor(group, "main", "main")).toBe("agent:main:telegram:bot1:group:-100123");
    expect(sessionKeyFor({ ...group, threadId: "7" }, "main", "main")).toBe(
      "agent:main:telegram:bot1:group:-100123:thread:7",
    );
    // Two bots in one group: two conversations.
    expect(sessionKeyFor({ ...group, accountId: "bot2" }, "main", "per-channel-peer")).toBe(
      "agent:main:telegram:bot2:group:-100123",
    );
  });

  it("keeps DMs of two bot accounts apart only when dmScope says per-account", () => {
    const other = { ...dm, accountId: "bot2" };
    expect(sessionKeyFor(other, "main", "per-channel-peer")).toBe(
      sessionKeyFor(dm, "main", "per-channel-peer"),
    );
    expect(sessionKeyFor(other, "main", "per-account-channel-peer")).not.toBe(
      sessionKeyFor(dm, "main", "per-account-channel-peer"),
    );
  });

  it("keeps separators out of key segments", () => {
    expect(sessionKeyFor({ ...dm, senderId: "a:b c" }, "main", "per-peer")).toBe("agent:main:dm:a_b_c");
    expect(sessionKeyFor({ ...dm, isDirect: false, accountId: "x:y", chatId: "1" }, "main", "main")).toBe(
      "agent:main:telegram:x_y:group:1",
    );
  });
});
