/**
 * Discord messages mapped to what the gateway needs, as pure functions over a plain view of a
 * discord.js Message (intake.ts builds the view): which conversation (a DM, a server channel, or
 * a thread — its own session inside its parent channel), whether the bot was addressed (`<@id>`,
 * `<@!id>`, a reply to one of its messages, a configured pattern), and the text the model reads
 * (the bot's mention removed; other mentions shown by name). Bots, the bot itself, webhooks and
 * system messages are ignored, each with the reason for the debug line.
 */

/** Message types a person writes (Default, Reply); everything else is a system message. */
const PERSON_TYPES = new Set([0, 19]);

/** The fields of a discord.js Message the mapping reads. */
export interface DiscordMessageView {
  id: string;
  /** Where it was posted: a DM channel, a server channel, or a thread. */
  channelId: string;
  guildId: string | null;
  isDm: boolean;
  /** Set when `channelId` is a thread: its parent channel. */
  threadParentId?: string | undefined;
  type: number;
  webhookId: string | null;
  author: { id: string; bot: boolean; name: string };
  content: string;
  /** Users the message mentions, by id → display name. */
  mentionedUsers: ReadonlyMap<string, string>;
  /** Roles and channels it mentions, by id → name, to show them by name. */
  mentionedRoles: ReadonlyMap<string, string>;
  mentionedChannels: ReadonlyMap<string, string>;
  /** Author of the message it replies to (discord.js `mentions.repliedUser`). */
  repliedToUserId?: string | undefined;
}

export type MappedDiscordMessage =
  | { type: "ignore"; why: string }
  | {
      type: "message";
      chatId: string;
      threadId?: string;
      serverId?: string;
      isDirect: boolean;
      mentionsBot: boolean;
      text: string;
    };

/** Maps one message for the bot whose user id is `botId`. */
export function mapDiscordMessage(
  m: DiscordMessageView,
  botId: string,
  options: { mentionPatterns: readonly RegExp[] },
): MappedDiscordMessage {
  if (m.author.id === botId) return { type: "ignore", why: "the bot's own message" };
  if (m.webhookId) return { type: "ignore", why: "a webhook's message" };
  if (m.author.bot) return { type: "ignore", why: "another bot's message" };
  if (!PERSON_TYPES.has(m.type)) return { type: "ignore", why: `a system message (type ${m.type})` };
  const text = readableText(m, botId);
  if (m.isDm) return { type: "message", chatId: m.channelId, isDirect: true, mentionsBot: true, text };
  const mentionsBot =
    m.mentionedUsers.has(botId) ||
    mentionPattern(botId).test(m.content) ||
    m.repliedToUserId === botId ||
    options.mentionPatterns.some((p) => p.test(m.content));
  return {
    type: "message",
    chatId: m.threadParentId ?? m.channelId,
    ...(m.threadParentId ? { threadId: m.channelId } : {}),
    ...(m.guildId ? { serverId: m.guildId } : {}),
    isDirect: false,
    mentionsBot,
    text,
  };
}

function mentionPattern(id: string): RegExp {
  return new RegExp(`<@!?${id}>`);
}

/**
 * The text the model reads: the bot's own mention removed, users, roles and channels shown by
 * name (`@Ada`, `@moderators`, `#general`), whitespace trimmed.
 */
export function readableText(m: DiscordMessageView, botId: string): string {
  return m.content
    .replace(new RegExp(`\\s*<@!?${botId}>\\s*`, "g"), " ")
    .replace(/<@!?(\d+)>/g, (raw, id: string) => {
      const name = m.mentionedUsers.get(id);
      return name ? `@${name}` : raw;
    })
    .replace(/<@&(\d+)>/g, (raw, id: string) => {
      const name = m.mentionedRoles.get(id);
      return name ? `@${name}` : raw;
    })
    .replace(/<#(\d+)>/g, (raw, id: string) => {
      const name = m.mentionedChannels.get(id);
      return name ? `#${name}` : raw;
    })
    .trim();
}
