/** Discord messages mapped: conversations, addressing, readable text, and what is ignored. */
import { describe, expect, it } from "vitest";
import { type DiscordMessageView, mapDiscordMessage } from "../../../src/channels/discord/inbound.js";

const BOT = "100";

const view = (extra: Partial<DiscordMessageView> = {}): DiscordMessageView => ({
  id: "9001",
  channelId: "300",
  guildId: "200",
  isDm: false,
  type: 0,
  webhookId: null,
  author: { id: "7", bot: false, name: "Ada" },
  content: "hello",
  mentionedUsers: new Map(),
  mentionedRoles: new Map(),
  mentionedChannels: new Map(),
  ...extra,
});

const map = (extra: Partial<DiscordMessageView>, patterns: RegExp[] = []) =>
  mapDiscordMessage(view(extra), BOT, { mentionPatterns: patterns });

describe("mapDiscordMessage", () => {
  it("a DM is direct and addressed; a server message is a group message of its channel and server", () => {
    expect(map({ isDm: true, guildId: null, channelId: "55" })).toEqual({
      type: "message",
      chatId: "55",
      isDirect: true,
      mentionsBot: true,
      text: "hello",
    });
    expect(map({})).toEqual({
      type: "message",
      chatId: "300",
      serverId: "200",
      isDirect: false,
      mentionsBot: false,
      text: "hello",
    });
  });

  it("a thread is its own conversation inside its parent channel", () => {
    expect(map({ channelId: "777", threadParentId: "300" })).toMatchObject({
      chatId: "300",
      threadId: "777",
    });
  });

  it("addressed by <@id>, <@!id>, a reply to the bot, or a configured pattern — not by a reply to someone else", () => {
    const withMention = {
      content: `<@${BOT}> what time is it?`,
      mentionedUsers: new Map([[BOT, "switchyard"]]),
    };
    expect(map(withMention)).toMatchObject({ mentionsBot: true, text: "what time is it?" });
    expect(map({ content: `hey <@!${BOT}> there` })).toMatchObject({ mentionsBot: true, text: "hey there" });
    expect(map({ repliedToUserId: BOT })).toMatchObject({ mentionsBot: true });
    expect(map({ repliedToUserId: "8" })).toMatchObject({ mentionsBot: false });
    expect(map({ content: "hey jarvis" }, [/\bjarvis\b/i])).toMatchObject({ mentionsBot: true });
  });

  it("shows other people, roles and channels by name", () => {
    const mapped = map({
      content: `<@${BOT}> ask <@8> and <@&9> in <#10>, not <@11>`,
      mentionedUsers: new Map([
        [BOT, "switchyard"],
        ["8", "Grace"],
      ]),
      mentionedRoles: new Map([["9", "mods"]]),
      mentionedChannels: new Map([["10", "general"]]),
    });
    expect(mapped).toMatchObject({ text: "ask @Grace and @mods in #general, not <@11>" });
  });

  it("ignores the bot itself, other bots, webhooks and system messages, saying which", () => {
    expect(map({ author: { id: BOT, bot: true, name: "me" } })).toEqual({
      type: "ignore",
      why: "the bot's own message",
    });
    expect(map({ author: { id: "5", bot: true, name: "other" } })).toEqual({
      type: "ignore",
      why: "another bot's message",
    });
    expect(map({ webhookId: "66" })).toEqual({ type: "ignore", why: "a webhook's message" });
    expect(map({ type: 7 })).toEqual({ type: "ignore", why: "a system message (type 7)" });
    expect(map({ type: 19 })).toMatchObject({ type: "message" }); // a reply is a person's message
  });
});
