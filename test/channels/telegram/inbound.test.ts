import type { Update, UserFromGetMe } from "grammy/types";
import { describe, expect, it } from "vitest";
import { type AddressingRules, mapUpdate } from "../../../src/channels/telegram/inbound.js";

const BOT = { id: 999, is_bot: true, first_name: "Bot", username: "my_bot" } as UserFromGetMe;
const ann = { id: 1, is_bot: false, first_name: "Ann", last_name: "Lee" };
const group = { id: -100, type: "supergroup" as const, title: "G" };
let updateId = 0;
const RULES: AddressingRules = { mentionPatterns: [], commands: new Set(["new", "stop", "status", "help"]) };

function msg(m: Record<string, unknown>): Update {
  updateId++;
  return {
    update_id: updateId,
    message: { message_id: updateId, date: 0, chat: group, from: ann, ...m },
  } as Update;
}

describe("mapUpdate", () => {
  it("maps a direct message: always addressed, sender name, dedupe-ready ids", () => {
    const r = mapUpdate(msg({ chat: { id: 1, type: "private", first_name: "Ann" }, text: "hi" }), BOT, RULES);
    expect(r).toMatchObject({
      type: "message",
      chatId: "1",
      isDirect: true,
      mentionsBot: true,
      senderId: "1",
      senderName: "Ann Lee",
      text: "hi",
    });
  });

  it("decides whether a group message addresses the bot", () => {
    const addressed = (m: Record<string, unknown>, patterns: RegExp[] = []) => {
      const r = mapUpdate(msg(m), BOT, { ...RULES, mentionPatterns: patterns });
      return r.type === "message" && r.mentionsBot;
    };
    expect(addressed({ text: "hello all" })).toBe(false);
    expect(addressed({ text: "hey @my_bot", entities: [{ type: "mention", offset: 4, length: 7 }] })).toBe(
      true,
    );
    expect(addressed({ text: "hey @MY_BOT", entities: [{ type: "mention", offset: 4, length: 7 }] })).toBe(
      true,
    );
    expect(
      addressed({ text: "hey @other_bot", entities: [{ type: "mention", offset: 4, length: 10 }] }),
    ).toBe(false);
    expect(addressed({ text: "/status", entities: [{ type: "bot_command", offset: 0, length: 7 }] })).toBe(
      true,
    );
    expect(
      addressed({ text: "/status@other_bot", entities: [{ type: "bot_command", offset: 0, length: 17 }] }),
    ).toBe(false);
    expect(
      addressed({
        text: "thanks",
        reply_to_message: { message_id: 5, date: 0, chat: group, from: BOT, text: "x" },
      }),
    ).toBe(true);
    expect(addressed({ text: "hey claw, help" }, [/\bclaw\b/i])).toBe(true);
  });

  it("counts only the bot's own commands, or commands addressed to it, as addressing it", () => {
    const addressed = (text: string, extra: Record<string, unknown> = {}) => {
      const length = /^\/\S+/.exec(text)?.[0].length ?? 0;
      const r = mapUpdate(
        msg({ text, entities: [{ type: "bot_command", offset: 0, length }], ...extra }),
        BOT,
        RULES,
      );
      return r.type === "message" && r.mentionsBot;
    };
    expect(addressed("/new")).toBe(true);
    expect(addressed("/STATUS please")).toBe(true);
    expect(addressed("/help@my_bot")).toBe(true);
    expect(addressed("/roll@my_bot 2d6")).toBe(true); // addressed to us, even if not ours
    expect(addressed("/roll 2d6")).toBe(false); // another bot's command
    expect(addressed("/new@other_bot")).toBe(false);
    // A command for another bot never addresses us, whatever else the message holds.
    expect(
      addressed("/roll@other_bot", {
        reply_to_message: { message_id: 5, date: 0, chat: group, from: BOT, text: "x" },
      }),
    ).toBe(false);
    // A command later in the text is not a command to anyone.
    const later = mapUpdate(
      msg({ text: "try /new", entities: [{ type: "bot_command", offset: 4, length: 4 }] }),
      BOT,
      RULES,
    );
    expect(later.type === "message" && later.mentionsBot).toBe(false);
  });

  it("gives forum topics a thread id, and keeps the replied-to text", () => {
    const r = mapUpdate(
      msg({
        text: "q",
        is_topic_message: true,
        message_thread_id: 7,
        reply_to_message: { message_id: 2, date: 0, chat: group, from: ann, text: "earlier" },
      }),
      BOT,
      RULES,
    );
    expect(r).toMatchObject({ threadId: "7", replyToText: "earlier" });
  });

  it("ignores edits, channel posts, bots and service messages, saying why", () => {
    expect(mapUpdate({ update_id: 1, edited_message: {} } as Update, BOT, RULES)).toEqual({
      type: "ignore",
      why: "edited message",
    });
    expect(mapUpdate({ update_id: 1, channel_post: {} } as Update, BOT, RULES)).toEqual({
      type: "ignore",
      why: "channel post",
    });
    expect(
      mapUpdate(msg({ from: { id: 5, is_bot: true, first_name: "B" }, text: "x" }), BOT, RULES),
    ).toMatchObject({ why: "message from a bot" });
    expect(mapUpdate(msg({ new_chat_members: [ann] }), BOT, RULES)).toEqual({
      type: "ignore",
      why: "service message (new_chat_members)",
    });
  });

  it("collects the largest photo and documents with their captions", () => {
    const r = mapUpdate(
      msg({
        caption: "look",
        photo: [
          { file_id: "small", file_unique_id: "a", width: 90, height: 90, file_size: 100 },
          { file_id: "large", file_unique_id: "b", width: 900, height: 900, file_size: 10_000 },
        ],
      }),
      BOT,
      RULES,
    );
    expect(r).toMatchObject({ text: "look", files: [{ fileId: "large", kind: "image", sizeBytes: 10_000 }] });
  });
});
