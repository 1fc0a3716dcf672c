/**
 * Slack event → what the gateway makes of it: which events carry a person's message, where it
 * belongs (a DM, a channel, a thread — a top-level mention opens a thread of its own), whether
 * the bot was addressed, and its text as a person reads it. Pure; no I/O.
 */

/** A file as Slack attaches it to a message event. */
export interface SlackFile {
  id: string;
  name?: string;
  title?: string;
  mimetype?: string;
  size?: number;
  url_private_download?: string;
  url_private?: string;
  /** "tombstone" (deleted), "hidden_by_limit" (over the free plan's limit), "external", … */
  mode?: string;
}

/** The fields of a `message` or `app_mention` event the mapping reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  /** Author of the thread's parent, on replies. */
  parent_user_id?: string;
  files?: SlackFile[];
}

/** Who the bot is in its workspace (from auth.test). */
export interface SlackIdentity {
  userId: string;
  botId: string;
}

/** How a channel message can address the bot besides `<@bot>`. */
export interface SlackAddressing {
  /** Extra patterns (case-insensitive regular expressions) that address the bot. */
  mentionPatterns: readonly RegExp[];
  /** Whether the bot answered in this thread before (it then counts as addressed there). */
  inBotThread(channel: string, threadTs: string): boolean;
}

/** The mapping's verdict. */
export type MappedSlackEvent =
  | { type: "ignore"; why: string }
  | {
      type: "message";
      chatId: string;
      /** The thread it belongs to (its own ts when a top-level mention opens one). */
      threadId: string | undefined;
      startsThread: boolean;
      isDirect: boolean;
      mentionsBot: boolean;
      text: string;
      senderId: string;
      ts: string;
      files: SlackFile[];
    };

/** Message subtypes that are a person writing; every other subtype is ignored. */
const PERSON_SUBTYPES = new Set(["file_share", "thread_broadcast", "me_message"]);

/** Decides what a `message` or `app_mention` event is. */
export function mapSlackEvent(
  event: SlackMessageEvent,
  me: SlackIdentity,
  rules: SlackAddressing,
): MappedSlackEvent {
  if (event.subtype && !PERSON_SUBTYPES.has(event.subtype))
    return { type: "ignore", why: `${event.subtype} event` };
  if (event.bot_id)
    return {
      type: "ignore",
      why: event.bot_id === me.botId ? "the bot's own message" : "message from a bot",
    };
  if (!event.user) return { type: "ignore", why: "message without a user" };
  if (event.user === me.userId) return { type: "ignore", why: "the bot's own message" };
  if (!event.channel || !event.ts) return { type: "ignore", why: "message without a channel or ts" };
  const files = (event.files ?? []).filter((f) => f.mode !== "tombstone" && f.mode !== "hidden_by_limit");
  const raw = event.text ?? "";
  if (raw.trim() === "" && files.length === 0) return { type: "ignore", why: "empty message" };
  // DMs with the app arrive as `im`; a multi-person DM (`mpim`) is a group like a channel.
  const isDirect = event.channel_type === "im" || isDmChannel(event.channel);
  const inThread = event.thread_ts !== undefined && event.thread_ts !== event.ts;
  const text = slackToText(stripLeadingMention(raw, me.userId), me.userId);
  const mentioned =
    event.type === "app_mention" ||
    raw.includes(`<@${me.userId}>`) ||
    rules.mentionPatterns.some((p) => p.test(text)) ||
    (inThread &&
      (event.parent_user_id === me.userId || rules.inBotThread(event.channel, event.thread_ts as string)));
  const startsThread = !isDirect && !inThread && mentioned;
  return {
    type: "message",
    chatId: event.channel,
    threadId: inThread ? event.thread_ts : startsThread ? event.ts : undefined,
    startsThread,
    isDirect,
    mentionsBot: isDirect || mentioned,
    text,
    senderId: event.user,
    ts: event.ts,
    files,
  };
}

/** Slack's DM conversation ids start with D (channels C, private channels and group DMs G). */
export function isDmChannel(channelId: string): boolean {
  return channelId.startsWith("D");
}

/** `<@BOT> /stop` → `/stop`: a command addressed to the bot in a channel or thread is a command. */
function stripLeadingMention(text: string, botUserId: string): string {
  const mention = `<@${botUserId}>`;
  const trimmed = text.trimStart();
  return trimmed.startsWith(mention) ? trimmed.slice(mention.length).trimStart() : text;
}

/**
 * Slack's message text as a person reads it: `<url|label>` → `label (url)`, `<url>` → url,
 * `<#C1|general>` → `#general`, `<!here>` → `@here`, the bot's own `<@U…>` → `@you`; other user
 * mentions stay `<@U…>` so the model can mention the person back; `&lt; &gt; &amp;` decoded.
 */
export function slackToText(text: string, botUserId: string): string {
  return text
    .replace(/<([^<>]*)>/g, (whole, inner: string) => {
      if (inner.startsWith("@")) return inner.slice(1).split("|")[0] === botUserId ? "@you" : whole;
      if (inner.startsWith("#")) {
        const [id, name] = inner.slice(1).split("|");
        return name ? `#${name}` : `#${id}`;
      }
      if (inner.startsWith("!")) {
        const [special, label] = inner.slice(1).split("|");
        if (label) return label;
        return special?.startsWith("subteam^") ? "@group" : `@${special?.split("^")[0] ?? ""}`;
      }
      const [url, label] = inner.split("|");
      return label && label !== url ? `${label} (${url})` : (url ?? "");
    })
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}
