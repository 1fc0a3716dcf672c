/**
 * Builds and stores the fake Discord's messages: users' messages a test injects (mentions,
 * replies, attachments served from the fake CDN), the bot's messages from REST bodies (with
 * Discord's allowed_mentions and reply rules), and system messages.
 */
import type { DiscordStore } from "./discord-store.js";
import type {
  AttachmentInput,
  DiscordAttachment,
  DiscordMessage,
  DiscordUser,
  MessageReference,
  UploadedFile,
  UserInput,
  UserMessageInput,
} from "./discord-types.js";
import { iso, mentionedIds } from "./discord-wire.js";

/** What message building needs from the fake. */
export interface MessageContext {
  store: DiscordStore;
  bot: DiscordUser;
  now(): number;
  /** "http://127.0.0.1:PORT". */
  base(): string;
}

/** Message flags a bot may set when posting: SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS, IS_VOICE_MESSAGE. */
const POSTABLE_FLAGS = (1 << 2) | (1 << 12) | (1 << 13);

/** A bare message with this id, channel, author and content; every other field empty. */
export function blankMessage(
  ctx: MessageContext,
  id: string,
  channelId: string,
  author: DiscordUser,
  content: string,
): DiscordMessage {
  return {
    id,
    channel_id: channelId,
    author,
    content,
    timestamp: iso(ctx.now()),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    components: [],
    pinned: false,
    type: 0,
    flags: 0,
  };
}

/** Stores bytes on the fake CDN and returns the attachment object pointing at them. */
export function makeAttachment(
  ctx: MessageContext,
  channelId: string,
  file: AttachmentInput,
): DiscordAttachment {
  const id = ctx.store.ids.next();
  const path = `/attachments/${channelId}/${id}/${encodeURIComponent(file.name)}`;
  ctx.store.putFile(path, file.bytes, file.contentType);
  const expires = Math.floor(ctx.now() / 1000) + 86_400;
  const query = `?ex=${expires.toString(16)}&is=${Math.floor(ctx.now() / 1000).toString(16)}&hm=${id}`;
  return {
    id,
    filename: file.name,
    size: file.bytes.length,
    url: `${ctx.base()}/cdn${path}${query}`,
    proxy_url: `${ctx.base()}/media${path}${query}`,
    content_type: file.contentType,
  };
}

function resolveUser(ctx: MessageContext, user: string | UserInput): DiscordUser {
  if (typeof user !== "string") return ctx.store.learnUser(user);
  return ctx.store.users.get(user) ?? ctx.store.learnUser({ id: user, username: `user${user.slice(-4)}` });
}

function withUser(list: DiscordUser[], user: DiscordUser): DiscordUser[] {
  return list.some((u) => u.id === user.id) ? list : [...list, user];
}

/** A reference to a stored message in the same channel. */
function referenceTo(target: DiscordMessage, guildId: string | undefined): MessageReference {
  return {
    type: 0,
    message_id: target.id,
    channel_id: target.channel_id,
    ...(guildId ? { guild_id: guildId } : {}),
  };
}

/** A copy of a message as `referenced_message` carries it (one level, no nested reply). */
function shallow(message: DiscordMessage): DiscordMessage {
  const { referenced_message: _nested, ...rest } = structuredClone(message);
  return rest;
}

/** A human's message (guild channel, thread or DM), stored; the caller dispatches it. */
export function userMessage(ctx: MessageContext, input: UserMessageInput): DiscordMessage {
  const { store } = ctx;
  const channel = store.channel(input.channelId);
  if (!channel) throw new Error(`FakeDiscord: no channel ${input.channelId}`);
  const author = store.learnUser(input.author);
  const id = input.id ?? store.ids.next();
  const message = blankMessage(ctx, id, channel.id, author, input.content);
  message.mentions = input.mentions
    ? input.mentions.map((u) => resolveUser(ctx, u))
    : mentionedIds(input.content).flatMap((uid) => {
        const user = store.users.get(uid);
        return user ? [user] : [];
      });
  if (input.replyTo !== undefined) {
    const target = store.message(channel.id, input.replyTo);
    if (!target) throw new Error(`FakeDiscord: no message ${input.replyTo} in ${channel.id} to reply to`);
    message.message_reference = referenceTo(target, input.guildId ?? channel.guildId);
    message.referenced_message = shallow(target);
    if (input.replyPing !== false) message.mentions = withUser(message.mentions, target.author);
  }
  message.type = input.type ?? (input.replyTo !== undefined ? 19 : 0);
  message.attachments = (input.attachments ?? []).map((file) => makeAttachment(ctx, channel.id, file));
  message.embeds = input.embeds ?? [];
  store.addMessage(message);
  return message;
}

/** A system message (e.g. type 7, a member joined) by `author`, stored. */
export function systemMessage(
  ctx: MessageContext,
  channelId: string,
  type: number,
  author: UserInput,
): DiscordMessage {
  if (!ctx.store.channel(channelId)) throw new Error(`FakeDiscord: no channel ${channelId}`);
  const message = blankMessage(ctx, ctx.store.ids.next(), channelId, ctx.store.learnUser(author), "");
  message.type = type;
  ctx.store.addMessage(message);
  return message;
}

/**
 * Who a bot message pings: `<@id>` mentions of known users allowed by `allowed_mentions`
 * (everyone when absent), plus the replied-to author when `replied_user` allows it (default
 * true without allowed_mentions, false with it).
 */
function botMentions(
  ctx: MessageContext,
  content: string,
  allowed: Record<string, unknown> | undefined,
  replied: DiscordMessage | undefined,
): DiscordUser[] {
  const parse = Array.isArray(allowed?.parse) ? (allowed.parse as unknown[]) : [];
  const users = Array.isArray(allowed?.users) ? (allowed.users as unknown[]) : [];
  let mentions = mentionedIds(content)
    .filter((id) => !allowed || parse.includes("users") || users.includes(id))
    .flatMap((id) => {
      const user = ctx.store.users.get(id);
      return user ? [user] : [];
    });
  const pingReplied = allowed ? allowed.replied_user === true : true;
  if (replied && pingReplied) mentions = withUser(mentions, replied.author);
  return mentions;
}

/** The bot's message from a `POST /channels/:id/messages` body (already validated), stored. */
export function botMessage(
  ctx: MessageContext,
  channelId: string,
  body: Record<string, unknown>,
  files: UploadedFile[],
  replied: DiscordMessage | undefined,
): DiscordMessage {
  const { store } = ctx;
  const content = typeof body.content === "string" ? body.content : "";
  const message = blankMessage(ctx, store.ids.next(), channelId, ctx.bot, content);
  message.tts = body.tts === true;
  message.embeds = Array.isArray(body.embeds) ? body.embeds : [];
  message.components = Array.isArray(body.components) ? body.components : [];
  message.flags = typeof body.flags === "number" ? body.flags & POSTABLE_FLAGS : 0;
  const allowed =
    typeof body.allowed_mentions === "object"
      ? (body.allowed_mentions as Record<string, unknown>)
      : undefined;
  message.mentions = botMentions(ctx, content, allowed ?? undefined, replied);
  if (typeof body.nonce === "string" || typeof body.nonce === "number") message.nonce = body.nonce;
  if (replied) {
    message.type = 19;
    message.message_reference = referenceTo(replied, store.channel(channelId)?.guildId);
    message.referenced_message = shallow(replied);
  }
  message.attachments = files.map((file) =>
    makeAttachment(ctx, channelId, { name: file.name, contentType: file.contentType, bytes: file.bytes }),
  );
  store.addMessage(message);
  return message;
}

/** Applies an edit body to a stored message (content, embeds, components, flags); returns it. */
export function applyEdit(
  ctx: MessageContext,
  message: DiscordMessage,
  body: Record<string, unknown>,
): DiscordMessage {
  if (typeof body.content === "string") {
    message.content = body.content;
    const allowed = typeof body.allowed_mentions === "object" ? body.allowed_mentions : undefined;
    message.mentions = botMentions(
      ctx,
      body.content,
      (allowed ?? undefined) as Record<string, unknown> | undefined,
      undefined,
    );
  } else if (body.content === null) message.content = "";
  if (Array.isArray(body.embeds)) message.embeds = body.embeds;
  if (Array.isArray(body.components)) message.components = body.components;
  if (typeof body.flags === "number")
    message.flags = (message.flags & ~POSTABLE_FLAGS) | (body.flags & POSTABLE_FLAGS);
  message.edited_timestamp = iso(ctx.now());
  return message;
}
