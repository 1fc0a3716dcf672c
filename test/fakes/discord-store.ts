/**
 * The fake Discord's state: snowflake ids, users, guilds, channels (guild text channels, DMs,
 * threads), messages per channel, attachment bytes served from the fake CDN, application
 * commands per scope, and the nonces `enforce_nonce` deduplicates against.
 */
import type {
  ChannelRecord,
  DiscordCommand,
  DiscordMessage,
  DiscordUser,
  GuildInput,
  GuildRecord,
  UserInput,
} from "./discord-types.js";

/** The default guild and its text channel. */
export const DEFAULT_GUILD_ID = "200000000000000001";
export const DEFAULT_CHANNEL_ID = "300000000000000001";

/** The guilds a fake has when its options name none. */
export const DEFAULT_GUILDS: GuildInput[] = [
  { id: DEFAULT_GUILD_ID, name: "Switchyard Test", channels: [{ id: DEFAULT_CHANNEL_ID, name: "general" }] },
];

/** Discord's epoch (2015-01-01T00:00:00Z) in ms. */
const DISCORD_EPOCH = 1_420_070_400_000;

/** @everyone's permissions when a guild gives none: view, send, history, embed, attach, react, slash. */
export const DEFAULT_EVERYONE_PERMISSIONS = "2248473465835073";

/** Issues increasing snowflakes from the fake's clock. */
export class Snowflakes {
  readonly #now: () => number;
  #last = 0n;

  constructor(now: () => number) {
    this.#now = now;
  }

  next(): string {
    const ms = BigInt(Math.max(0, Math.floor(this.#now()) - DISCORD_EPOCH));
    let id = (ms << 22n) | (1n << 17n);
    if (id <= this.#last) id = this.#last + 1n;
    this.#last = id;
    return id.toString();
  }
}

/** Compares two snowflakes numerically. */
export function compareIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A user object on the wire from a test's description. */
export function userWire(input: UserInput): DiscordUser {
  return {
    id: input.id,
    username: input.username,
    discriminator: "0",
    global_name: input.global_name ?? null,
    avatar: null,
    ...(input.bot ? { bot: true } : {}),
    public_flags: 0,
  };
}

interface NonceEntry {
  channelId: string;
  authorId: string;
  nonce: string;
  messageId: string;
  at: number;
}

/** History query of `GET /channels/:id/messages`. */
export interface HistoryQuery {
  after?: string;
  before?: string;
  around?: string;
  limit: number;
}

/** Everything the fake Discord remembers. */
export class DiscordStore {
  readonly ids: Snowflakes;
  readonly users = new Map<string, DiscordUser>();
  readonly guilds = new Map<string, GuildRecord>();
  readonly channels = new Map<string, ChannelRecord>();
  readonly #messages = new Map<string, DiscordMessage[]>();
  readonly #files = new Map<string, { bytes: Buffer; contentType: string }>();
  readonly #commands = new Map<string, DiscordCommand[]>();
  readonly #dms = new Map<string, string>();
  #nonces: NonceEntry[] = [];
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
    this.ids = new Snowflakes(now);
  }

  // ─── directory ───────────────────────────────────────────────────────────────────────────

  /** Adds or refreshes a user; returns its wire object. */
  learnUser(input: UserInput): DiscordUser {
    const known = this.users.get(input.id);
    const user = userWire({ ...input, global_name: input.global_name ?? known?.global_name ?? null });
    this.users.set(user.id, user);
    return user;
  }

  addGuild(input: GuildInput, botId: string): void {
    this.guilds.set(input.id, {
      id: input.id,
      name: input.name,
      ownerId: input.ownerId ?? botId,
      everyonePermissions: input.everyonePermissions ?? DEFAULT_EVERYONE_PERMISSIONS,
      joinedAt: this.#now(),
    });
    input.channels.forEach((channel, position) => {
      this.channels.set(channel.id, {
        id: channel.id,
        type: channel.type ?? 0,
        name: channel.name,
        guildId: input.id,
        topic: channel.topic ?? null,
        position,
        lastMessageId: null,
        ...(channel.parentId ? { parentId: channel.parentId } : {}),
      });
    });
  }

  channel(id: string): ChannelRecord | undefined {
    return this.channels.get(id);
  }

  /** Channels of a guild (threads included), in insertion order. */
  channelsOf(guildId: string): ChannelRecord[] {
    return [...this.channels.values()].filter((c) => c.guildId === guildId);
  }

  /** The DM channel with this user, created on first use. */
  dmChannel(userId: string): ChannelRecord {
    const existing = this.#dms.get(userId);
    if (existing) return this.channels.get(existing)!;
    const channel: ChannelRecord = {
      id: this.ids.next(),
      type: 1,
      position: 0,
      recipientId: userId,
      lastMessageId: null,
    };
    this.channels.set(channel.id, channel);
    this.#dms.set(userId, channel.id);
    return channel;
  }

  /** The DM channel with this user, if one exists. */
  dmChannelId(userId: string): string | undefined {
    return this.#dms.get(userId);
  }

  addThread(input: {
    id: string;
    parentId: string;
    name: string;
    ownerId: string;
    type: number;
  }): ChannelRecord {
    const parent = this.channels.get(input.parentId);
    if (!parent?.guildId) throw new Error(`FakeDiscord: no guild channel ${input.parentId}`);
    const thread: ChannelRecord = {
      id: input.id,
      type: input.type,
      name: input.name,
      guildId: parent.guildId,
      parentId: parent.id,
      ownerId: input.ownerId,
      position: 0,
      createdAt: this.#now(),
      lastMessageId: null,
    };
    this.channels.set(thread.id, thread);
    return thread;
  }

  // ─── messages ────────────────────────────────────────────────────────────────────────────

  addMessage(message: DiscordMessage): void {
    const list = this.#messages.get(message.channel_id) ?? [];
    list.push(message);
    this.#messages.set(message.channel_id, list);
    const channel = this.channels.get(message.channel_id);
    if (channel) channel.lastMessageId = message.id;
  }

  message(channelId: string, id: string): DiscordMessage | undefined {
    return this.#messages.get(channelId)?.find((m) => m.id === id);
  }

  removeMessage(channelId: string, id: string): boolean {
    const list = this.#messages.get(channelId) ?? [];
    const at = list.findIndex((m) => m.id === id);
    if (at < 0) return false;
    list.splice(at, 1);
    return true;
  }

  /** A channel's messages, oldest first (by id). */
  messages(channelId: string): DiscordMessage[] {
    return [...(this.#messages.get(channelId) ?? [])].sort((a, b) => compareIds(a.id, b.id));
  }

  /** Every stored message, oldest first. */
  allMessages(): DiscordMessage[] {
    return [...this.#messages.values()].flat().sort((a, b) => compareIds(a.id, b.id));
  }

  /** `GET /channels/:id/messages` semantics: at most `limit` messages, newest first. */
  history(channelId: string, query: HistoryQuery): DiscordMessage[] {
    const all = this.messages(channelId);
    let picked: DiscordMessage[];
    if (query.after !== undefined) {
      const after = query.after;
      picked = all.filter((m) => compareIds(m.id, after) > 0).slice(0, query.limit);
    } else if (query.before !== undefined) {
      const before = query.before;
      picked = all.filter((m) => compareIds(m.id, before) < 0).slice(-query.limit);
    } else if (query.around !== undefined) {
      const around = query.around;
      const older = all.filter((m) => compareIds(m.id, around) <= 0).slice(-Math.ceil(query.limit / 2));
      const newer = all.filter((m) => compareIds(m.id, around) > 0).slice(0, Math.floor(query.limit / 2));
      picked = [...older, ...newer];
    } else {
      picked = all.slice(-query.limit);
    }
    return picked.reverse();
  }

  /** The message an earlier `enforce_nonce` post with this nonce created, within the window. */
  nonceHit(channelId: string, authorId: string, nonce: string, windowMs: number): DiscordMessage | undefined {
    const now = this.#now();
    this.#nonces = this.#nonces.filter((n) => now - n.at <= windowMs);
    const hit = this.#nonces.find(
      (n) => n.channelId === channelId && n.authorId === authorId && n.nonce === nonce,
    );
    return hit ? this.message(channelId, hit.messageId) : undefined;
  }

  rememberNonce(channelId: string, authorId: string, nonce: string, messageId: string): void {
    this.#nonces.push({ channelId, authorId, nonce, messageId, at: this.#now() });
  }

  // ─── files ───────────────────────────────────────────────────────────────────────────────

  /** Stores bytes at a CDN path (`/attachments/<channel>/<id>/<name>`). */
  putFile(path: string, bytes: Buffer, contentType: string): void {
    this.#files.set(path, { bytes, contentType });
  }

  file(path: string): { bytes: Buffer; contentType: string } | undefined {
    return this.#files.get(path);
  }

  // ─── commands ────────────────────────────────────────────────────────────────────────────

  /** Bulk overwrite: commands keep their id when a command of the same name and type existed. */
  setCommands(guildId: string | undefined, appId: string, bodies: Array<Record<string, unknown>>) {
    const previous = this.#commands.get(guildId ?? "") ?? [];
    const next = bodies.map((body): DiscordCommand => {
      const type = typeof body.type === "number" ? body.type : 1;
      const kept = previous.find((c) => c.name === body.name && c.type === type);
      return {
        ...body,
        id: kept?.id ?? this.ids.next(),
        application_id: appId,
        version: this.ids.next(),
        type,
        name: String(body.name),
        description: typeof body.description === "string" ? body.description : "",
        default_member_permissions:
          typeof body.default_member_permissions === "string" ? body.default_member_permissions : null,
        nsfw: body.nsfw === true,
        ...(guildId ? { guild_id: guildId } : {}),
      };
    });
    this.#commands.set(guildId ?? "", next);
    return next;
  }

  commands(guildId?: string): DiscordCommand[] {
    return this.#commands.get(guildId ?? "") ?? [];
  }

  /** The registered command of this name: the guild's first, then the global one. */
  commandNamed(name: string, guildId?: string): DiscordCommand | undefined {
    const guild = guildId ? this.commands(guildId).find((c) => c.name === name) : undefined;
    return guild ?? this.commands().find((c) => c.name === name);
  }
}
