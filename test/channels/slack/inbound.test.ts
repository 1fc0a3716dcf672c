/**
 * Slack event mapping on its own: which events are a person's message, where each belongs (a
 * DM, a channel, a thread; a top-level mention opens its own), when the bot is addressed, and
 * the text as a person reads it.
 */
import { describe, expect, it } from "vitest";
import { mapSlackEvent, type SlackMessageEvent, slackToText } from "../../../src/channels/slack/inbound.js";

const ME = { userId: "UBOT", botId: "B1" };
const rules = (threads: string[] = [], patterns: RegExp[] = []) => ({
  mentionPatterns: patterns,
  inBotThread: (c: string, t: string) => threads.includes(`${c}:${t}`),
});
const msg = (over: Partial<SlackMessageEvent>): SlackMessageEvent => ({
  type: "message",
  channel: "C1",
  channel_type: "channel",
  user: "UANN",
  text: "hello",
  ts: "1700000000.000100",
  ...over,
});

describe("mapSlackEvent", () => {
  it("ignores bots (itself included), edits, deletes, joins and empty messages, saying why", () => {
    const why = (e: Partial<SlackMessageEvent>) => {
      const m = mapSlackEvent(msg(e), ME, rules());
      return m.type === "ignore" ? m.why : "message";
    };
    expect(why({ bot_id: "B1" })).toBe("the bot's own message");
    expect(why({ bot_id: "B9", subtype: undefined })).toBe("message from a bot");
    expect(why({ subtype: "bot_message", bot_id: "B9" })).toBe("bot_message event");
    expect(why({ subtype: "message_changed" })).toBe("message_changed event");
    expect(why({ subtype: "message_deleted" })).toBe("message_deleted event");
    expect(why({ subtype: "channel_join" })).toBe("channel_join event");
    expect(why({ user: "UBOT" })).toBe("the bot's own message");
    expect(why({ text: "  " })).toBe("empty message");
    expect(why({ subtype: "file_share", text: "", files: [{ id: "F1" }] })).toBe("message");
    expect(why({ subtype: "thread_broadcast", thread_ts: "1.0" })).toBe("message");
  });

  it("a DM is direct and addressed, in no thread unless written in one", () => {
    const m = mapSlackEvent(msg({ channel: "D1", channel_type: "im" }), ME, rules());
    expect(m).toMatchObject({
      type: "message",
      isDirect: true,
      mentionsBot: true,
      threadId: undefined,
      startsThread: false,
    });
    const t = mapSlackEvent(msg({ channel: "D1", channel_type: "im", thread_ts: "1.0" }), ME, rules());
    expect(t).toMatchObject({ threadId: "1.0", startsThread: false });
  });

  it("a top-level channel mention opens a thread on itself; an unaddressed one stays top-level", () => {
    const mention = mapSlackEvent(msg({ text: "<@UBOT> summarize" }), ME, rules());
    expect(mention).toMatchObject({
      isDirect: false,
      mentionsBot: true,
      startsThread: true,
      threadId: "1700000000.000100",
      text: "summarize",
    });
    const plain = mapSlackEvent(msg({ text: "lunch?" }), ME, rules());
    expect(plain).toMatchObject({ mentionsBot: false, startsThread: false, threadId: undefined });
    const twin = mapSlackEvent(
      msg({ type: "app_mention", channel_type: undefined, text: "hey <@UBOT>" }),
      ME,
      rules(),
    );
    expect(twin).toMatchObject({ mentionsBot: true, startsThread: true, text: "hey @you" });
  });

  it("in a thread: a reply to the bot's thread or a thread it answered in addresses it", () => {
    const inThread = { thread_ts: "1.0", ts: "2.0" };
    expect(mapSlackEvent(msg({ ...inThread }), ME, rules())).toMatchObject({
      mentionsBot: false,
      threadId: "1.0",
    });
    expect(mapSlackEvent(msg({ ...inThread, parent_user_id: "UBOT" }), ME, rules())).toMatchObject({
      mentionsBot: true,
    });
    expect(mapSlackEvent(msg({ ...inThread }), ME, rules(["C1:1.0"]))).toMatchObject({
      mentionsBot: true,
      startsThread: false,
      threadId: "1.0",
    });
  });

  it("configured patterns address the bot; a multi-person DM is a group", () => {
    expect(mapSlackEvent(msg({ text: "hey jarvis" }), ME, rules([], [/jarvis/i]))).toMatchObject({
      mentionsBot: true,
    });
    expect(mapSlackEvent(msg({ channel: "G1", channel_type: "mpim" }), ME, rules())).toMatchObject({
      isDirect: false,
    });
  });

  it("a command addressed to the bot is a command", () => {
    expect(
      mapSlackEvent(msg({ text: "<@UBOT> /stop", thread_ts: "1.0", ts: "2.0" }), ME, rules()),
    ).toMatchObject({
      text: "/stop",
      mentionsBot: true,
    });
  });

  it("drops deleted and hidden files", () => {
    const m = mapSlackEvent(
      msg({ files: [{ id: "F1", mode: "tombstone" }, { id: "F2", mode: "hidden_by_limit" }, { id: "F3" }] }),
      ME,
      rules(),
    );
    expect(m.type === "message" && m.files.map((f) => f.id)).toEqual(["F3"]);
  });
});

describe("slackToText", () => {
  it("reads Slack's markup as a person does; other people's mentions stay mentionable", () => {
    expect(
      slackToText(
        "see <https://x.test/a?b=1&amp;c=2|the doc> and <https://x.test> in <#C1|general>, <!here> <@UANN> <@UBOT> 1 &lt; 2 &amp;&amp; 3 &gt; 2",
        "UBOT",
      ),
    ).toBe(
      "see the doc (https://x.test/a?b=1&c=2) and https://x.test in #general, @here <@UANN> @you 1 < 2 && 3 > 2",
    );
    expect(slackToText("<!subteam^S1> <!date^1700000000^{date}|Nov 14>", "UBOT")).toBe("@group Nov 14");
  });
});
