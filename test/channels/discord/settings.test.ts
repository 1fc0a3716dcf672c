/** `channels.discord`: defaults, bots planned, the guild rule, and bad values named. */
import { describe, expect, it } from "vitest";
import {
  DISCORD_API_URL,
  discordGroupRule,
  discordSettings,
  planDiscordAccounts,
} from "../../../src/channels/discord/settings.js";
import type { InboundMessage } from "../../../src/channels/types.js";
import { ConfigError } from "../../../src/util/config-error.js";

const TOKEN = "MTAw.fake-token-for-tests.abcdef";
const parse = (v: unknown) => discordSettings.parse(v);

const inGuild = (serverId: string | undefined, chatId: string): InboundMessage => ({
  channel: "discord",
  accountId: "default",
  chatId,
  ...(serverId ? { serverId } : {}),
  senderId: "1",
  senderName: "Ada",
  isDirect: false,
  mentionsBot: false,
  text: "hi",
  attachments: [],
  platformMessageId: "9",
  receivedAt: 0,
});

describe("channels.discord", () => {
  it("one bot with the shared access defaults, Discord's limits and the REST root", () => {
    const s = parse({ token: TOKEN });
    expect(s).toMatchObject({
      apiUrl: DISCORD_API_URL,
      dmPolicy: "pairing",
      groupPolicy: "allowlist",
      requireMention: true,
      guilds: {},
      slashCommands: "auto",
      maxMessageChars: 2000,
      maxLinesPerMessage: 17,
      restRequestsPerSecond: 50,
    });
    expect(planDiscordAccounts(s)).toEqual([{ accountId: "default", token: TOKEN, apiUrl: DISCORD_API_URL }]);
  });

  it("several bots; a shared token and a missing token are named", () => {
    const s = parse({
      accounts: { a: { token: TOKEN }, b: { token: TOKEN, apiUrl: "http://127.0.0.1:9/api/" } },
    });
    expect(() => planDiscordAccounts(s)).toThrow(ConfigError);
    expect(
      planDiscordAccounts(
        parse({
          accounts: { a: { token: TOKEN }, b: { token: `${TOKEN}x`, apiUrl: "http://127.0.0.1:9/api/" } },
        }),
      ).map((p) => p.apiUrl),
    ).toEqual([DISCORD_API_URL, "http://127.0.0.1:9/api"]);
    const missing = discordSettings.safeParse({});
    expect(missing.success).toBe(false);
    expect(missing.error?.issues[0]?.message).toMatch(/set channels\.discord\.token/);
  });

  it("refuses a token written with the Bot prefix, and a message limit above Discord's", () => {
    expect(discordSettings.safeParse({ token: `Bot ${TOKEN}` }).error?.issues[0]?.message).toMatch(
      /without the "Bot " prefix/,
    );
    expect(discordSettings.safeParse({ token: TOKEN, maxMessageChars: 4000 }).success).toBe(false);
  });

  it("guilds: a listed server, its channels (a thread counts as its parent), its own mention rule", () => {
    const s = parse({
      token: TOKEN,
      guilds: { "111": { channels: ["222", 333] }, "444": { requireMention: false }, "555": null },
    });
    const rule = discordGroupRule(s.guilds);
    expect(rule(inGuild("111", "222"))).toEqual({ listed: true });
    expect(rule(inGuild("111", "333"))).toEqual({ listed: true });
    expect(rule(inGuild("111", "999"))).toEqual({
      listed: false,
      reason: "channel 999 is not in channels.discord.guilds.111.channels",
    });
    expect(rule(inGuild("444", "any"))).toEqual({ listed: true, requireMention: false });
    expect(rule(inGuild("555", "any"))).toEqual({ listed: true });
    expect(rule(inGuild("666", "1"))).toEqual({
      listed: false,
      reason: "server 666 is not in channels.discord.guilds",
    });
  });

  it("names a channel id that is not a Discord id", () => {
    const r = discordSettings.safeParse({ token: TOKEN, guilds: { "111": { channels: ["general"] } } });
    expect(r.error?.issues[0]?.message).toMatch(/expected a Discord id/);
  });
});
