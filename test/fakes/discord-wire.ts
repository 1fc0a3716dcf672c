/**
 * Builds the fake Discord's wire objects from its store: channels, guild members, the READY and
 * GUILD_CREATE payloads, messages as the gateway dispatches them (guild_id, member,
 * channel_type), mention parsing, and Discord's blanking of message content for apps without
 * the MessageContent intent.
 */
import type { DiscordStore } from "./discord-store.js";
import type { ChannelRecord, DiscordMessage, DiscordUser, GuildRecord } from "./discord-types.js";

/** Gateway intent bits the fake acts on. */
export const Intent = {
  Guilds: 1 << 0,
  GuildMessages: 1 << 9,
  DirectMessages: 1 << 12,
  MessageContent: 1 << 15,
} as const;

/** Application flag GATEWAY_MESSAGE_CONTENT_LIMITED. */
export const MESSAGE_CONTENT_LIMITED_FLAG = 1 << 19;

/** Message flag EPHEMERAL. */
export const EPHEMERAL = 1 << 6;

/** Message flag LOADING (a deferred interaction response). */
export const LOADING = 1 << 7;

/** ISO-8601 timestamp as Discord writes it. */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "+00:00");
}

/** A channel object (GET /channels/:id, GUILD_CREATE, THREAD_CREATE, interaction.channel). */
export function channelWire(channel: ChannelRecord, store: DiscordStore): Record<string, unknown> {
  if (channel.type === 1) {
    const recipient = channel.recipientId ? store.users.get(channel.recipientId) : undefined;
    return {
      id: channel.id,
      type: 1,
      last_message_id: channel.lastMessageId,
      flags: 0,
      recipients: recipient ? [recipient] : [],
    };
  }
  const base = {
    id: channel.id,
    type: channel.type,
    guild_id: channel.guildId,
    name: channel.name,
    last_message_id: channel.lastMessageId,
    rate_limit_per_user: 0,
    flags: 0,
  };
  if (channel.type === 10 || channel.type === 11 || channel.type === 12) {
    const created = iso(channel.createdAt ?? 0);
    return {
      ...base,
      parent_id: channel.parentId ?? null,
      owner_id: channel.ownerId,
      message_count: store.messages(channel.id).length,
      total_message_sent: store.messages(channel.id).length,
      member_count: 1,
      thread_metadata: {
        archived: false,
        auto_archive_duration: 1440,
        archive_timestamp: created,
        locked: false,
        create_timestamp: created,
      },
    };
  }
  return {
    ...base,
    position: channel.position,
    permission_overwrites: [],
    parent_id: channel.parentId ?? null,
    topic: channel.topic ?? null,
    nsfw: false,
  };
}

/** A guild member object; `user` is left out where Discord leaves it out (MESSAGE_CREATE.member). */
export function memberWire(
  joinedAt: number,
  user?: DiscordUser,
  permissions?: string,
): Record<string, unknown> {
  return {
    ...(user ? { user } : {}),
    roles: [],
    nick: null,
    avatar: null,
    joined_at: iso(joinedAt),
    premium_since: null,
    deaf: false,
    mute: false,
    pending: false,
    flags: 0,
    ...(permissions ? { permissions } : {}),
  };
}

/** The @everyone role (its id is the guild's). */
function everyoneRole(guild: GuildRecord): Record<string, unknown> {
  return {
    id: guild.id,
    name: "@everyone",
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position: 0,
    permissions: guild.everyonePermissions,
    managed: false,
    mentionable: false,
    flags: 0,
  };
}

/** GUILD_CREATE.d: the full guild with its channels, active threads and the bot's member. */
export function guildCreate(
  guild: GuildRecord,
  store: DiscordStore,
  bot: DiscordUser,
): Record<string, unknown> {
  const all = store.channelsOf(guild.id);
  const isThread = (c: ChannelRecord) => c.type === 10 || c.type === 11 || c.type === 12;
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: guild.ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: [everyoneRole(guild)],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    application_id: null,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    public_updates_channel_id: null,
    safety_alerts_channel_id: null,
    max_members: 500000,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    premium_progress_bar_enabled: false,
    preferred_locale: "en-US",
    nsfw_level: 0,
    joined_at: iso(guild.joinedAt),
    large: false,
    unavailable: false,
    member_count: 1,
    lazy: true,
    voice_states: [],
    members: [memberWire(guild.joinedAt, bot)],
    channels: all.filter((c) => !isThread(c)).map((c) => channelWire(c, store)),
    threads: all.filter(isThread).map((c) => channelWire(c, store)),
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/** User ids mentioned as `<@id>` or `<@!id>` in content. */
export function mentionedIds(content: string): string[] {
  const ids = new Set<string>();
  for (const match of content.matchAll(/<@!?(\d{1,20})>/g)) if (match[1]) ids.add(match[1]);
  return [...ids];
}

/** The guild a channel (or thread) belongs to, if any. */
export function guildIdOf(store: DiscordStore, channelId: string): string | undefined {
  return store.channel(channelId)?.guildId;
}

/**
 * A stored message as MESSAGE_CREATE / MESSAGE_UPDATE carry it: guild messages gain guild_id and
 * the author's member (webhook messages have none); DMs gain `channel_type: 1`.
 */
export function gatewayMessage(message: DiscordMessage, store: DiscordStore): Record<string, unknown> {
  const channel = store.channel(message.channel_id);
  if (channel?.type === 1) return { ...message, channel_type: 1 };
  if (!channel?.guildId) return { ...message };
  const guild = store.guilds.get(channel.guildId);
  return {
    ...message,
    guild_id: channel.guildId,
    ...(message.webhook_id ? {} : { member: memberWire(guild?.joinedAt ?? 0) }),
  };
}

/**
 * Whether Discord hides this message's content from an app without MessageContent: guild
 * messages by others that do not mention the app (DMs and the app's own messages stay visible).
 */
export function contentHidden(message: DiscordMessage, store: DiscordStore, botId: string): boolean {
  if (store.channel(message.channel_id)?.type === 1) return false;
  if (message.author.id === botId) return false;
  return !message.mentions.some((u) => u.id === botId);
}

/** The message with content, embeds, attachments, components blanked where Discord hides them. */
export function blankIfHidden<T extends DiscordMessage | Record<string, unknown>>(
  message: T,
  store: DiscordStore,
  botId: string,
): T {
  const m = message as unknown as DiscordMessage;
  const referenced = m.referenced_message
    ? { referenced_message: blankIfHidden(m.referenced_message, store, botId) }
    : {};
  if (!contentHidden(m, store, botId)) return { ...message, ...referenced };
  return { ...message, ...referenced, content: "", embeds: [], attachments: [], components: [] };
}
