/**
 * The fake Slack workspace: users, conversations and every message in them (human and bot,
 * thread replies included), with monotonic message timestamps and Slack's wire shapes for
 * `users.info`, `conversations.info` and message objects.
 */
import { SlackApiError } from "./slack-params.js";
import type { SlackChannelInput, SlackMessage, SlackUserInput } from "./slack-types.js";

/** A conversation and its messages, oldest first. */
export interface ChannelState {
  readonly info: Required<Omit<SlackChannelInput, "user">> & { user?: string };
  readonly messages: SlackMessage[];
}

/** A ts as an integer number of microseconds, for ordering. */
export function tsKey(ts: string): number {
  const [sec = "0", frac = "0"] = ts.split(".");
  return Number(sec) * 1_000_000 + Number(frac.padEnd(6, "0").slice(0, 6));
}

function formatTs(micros: number): string {
  return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, "0")}`;
}

/** Users, conversations and messages of one workspace. */
export class SlackStore {
  readonly #users = new Map<string, SlackUserInput>();
  readonly #channels = new Map<string, ChannelState>();
  readonly #now: () => number;
  readonly #teamId: string;
  #lastTs = 0;

  constructor(now: () => number, teamId: string) {
    this.#now = now;
    this.#teamId = teamId;
  }

  /** A fresh message ts from the clock, strictly after every earlier one. */
  nextTs(): string {
    const ms = this.#now();
    let micros = Math.floor(ms) * 1000;
    if (micros <= this.#lastTs) micros = this.#lastTs + 1;
    this.#lastTs = micros;
    return formatTs(micros);
  }

  addUser(user: SlackUserInput): void {
    this.#users.set(user.id, { ...user });
  }

  user(id: string): SlackUserInput | undefined {
    return this.#users.get(id);
  }

  addChannel(channel: SlackChannelInput): void {
    const existing = this.#channels.get(channel.id);
    const info = {
      id: channel.id,
      name: channel.name,
      kind: channel.kind,
      archived: channel.archived ?? false,
      member: channel.member ?? true,
      ...(channel.user !== undefined ? { user: channel.user } : {}),
    };
    this.#channels.set(channel.id, { info, messages: existing?.messages ?? [] });
  }

  channel(id: string): ChannelState | undefined {
    return this.#channels.get(id);
  }

  /** The conversation, or `channel_not_found`. */
  requireChannel(id: string | undefined): ChannelState {
    const channel = id === undefined ? undefined : this.#channels.get(id);
    if (!channel) throw new SlackApiError("channel_not_found");
    return channel;
  }

  /**
   * Resolves chat.postMessage's `channel`: an id, a `#name`, or a user id (the bot's DM with
   * that user, opened on first use as Slack does).
   */
  resolveTarget(target: string | undefined): ChannelState {
    if (target === undefined) throw new SlackApiError("channel_not_found");
    if (target.startsWith("#")) {
      const name = target.slice(1);
      for (const channel of this.#channels.values()) {
        if (channel.info.kind !== "im" && channel.info.name === name) return channel;
      }
      throw new SlackApiError("channel_not_found");
    }
    if (/^[UW]/.test(target) && this.#users.has(target)) {
      for (const channel of this.#channels.values()) {
        if (channel.info.kind === "im" && channel.info.user === target) return channel;
      }
      this.addChannel({ id: `D${target.slice(1)}`, name: "", kind: "im", user: target });
      return this.requireChannel(`D${target.slice(1)}`);
    }
    return this.requireChannel(target);
  }

  /** Stores a message in its channel (ts order) and updates its thread parent's reply fields. */
  add(message: SlackMessage): SlackMessage {
    const channel = this.requireChannel(message.channel);
    const stored = structuredClone(message);
    const key = tsKey(stored.ts);
    const at = channel.messages.findIndex((m) => tsKey(m.ts) > key);
    if (at < 0) channel.messages.push(stored);
    else channel.messages.splice(at, 0, stored);
    if (stored.thread_ts !== undefined && stored.thread_ts !== stored.ts) {
      const parent = this.find(stored.channel, stored.thread_ts);
      if (parent) {
        parent.thread_ts = parent.ts;
        parent.reply_count = (parent.reply_count ?? 0) + 1;
        const author = stored.user ?? stored.bot_id ?? "";
        const users = parent.reply_users ?? [];
        if (!users.includes(author)) users.push(author);
        parent.reply_users = users;
        parent.reply_users_count = users.length;
        if (parent.latest_reply === undefined || tsKey(stored.ts) > tsKey(parent.latest_reply)) {
          parent.latest_reply = stored.ts;
        }
      }
    }
    return stored;
  }

  /** The stored message itself (mutable), if any. */
  find(channel: string, ts: string): SlackMessage | undefined {
    return this.#channels.get(channel)?.messages.find((m) => m.ts === ts);
  }

  /** Every message of the channel, oldest first (copies). */
  all(channel: string): SlackMessage[] {
    return (this.#channels.get(channel)?.messages ?? []).map((m) => structuredClone(m));
  }

  /** What conversations.history lists: messages not in a thread, thread parents, broadcasts. */
  topLevel(channel: ChannelState): SlackMessage[] {
    return channel.messages.filter(
      (m) => m.thread_ts === undefined || m.thread_ts === m.ts || m.subtype === "thread_broadcast",
    );
  }

  /** A thread (parent, then replies oldest first) found by the ts of its parent or any reply. */
  thread(channel: ChannelState, ts: string): SlackMessage[] | undefined {
    const message = channel.messages.find((m) => m.ts === ts);
    if (!message) return undefined;
    const root = message.thread_ts ?? message.ts;
    const parent = channel.messages.find((m) => m.ts === root);
    if (!parent) return undefined;
    return [parent, ...channel.messages.filter((m) => m.thread_ts === root && m.ts !== root)];
  }

  /** `users.info`'s `user`. */
  userInfo(id: string | undefined): Record<string, unknown> {
    const user = id === undefined ? undefined : this.#users.get(id);
    if (!user) throw new SlackApiError("user_not_found");
    const realName = user.realName ?? user.name;
    return {
      id: user.id,
      team_id: this.#teamId,
      name: user.name,
      deleted: false,
      real_name: realName,
      is_bot: user.isBot ?? false,
      is_app_user: false,
      profile: { display_name: user.name, real_name: realName, team: this.#teamId },
    };
  }

  /**
   * `conversations.info`'s `channel`. Private channels with a C id are `is_channel` (Slack since
   * 2021); legacy G ids are `is_group`. DMs carry `user` and no name.
   */
  conversationInfo(channel: ChannelState): Record<string, unknown> {
    const { id, name, kind, archived, member, user } = channel.info;
    const legacyGroup = kind === "private" && id.startsWith("G");
    return {
      id,
      ...(kind === "im" ? { user } : { name }),
      is_channel: kind === "channel" || (kind === "private" && !legacyGroup),
      is_group: legacyGroup,
      is_im: kind === "im",
      is_mpim: kind === "mpim",
      is_private: kind !== "channel",
      is_archived: archived,
      is_member: kind === "im" ? true : member,
      is_ext_shared: false,
      context_team_id: this.#teamId,
      created: Math.floor(this.#now() / 1000),
    };
  }
}

/** The event `channel_type` of a conversation kind. */
export function channelType(kind: ChannelState["info"]["kind"]): "channel" | "group" | "im" | "mpim" {
  return kind === "private" ? "group" : kind;
}

/** The message as it goes on the wire: no `channel` field, metadata only when asked for. */
export function wireMessage(message: SlackMessage, includeMetadata: boolean): Record<string, unknown> {
  const { channel: _channel, metadata, ...rest } = structuredClone(message);
  return includeMetadata && metadata ? { ...rest, metadata } : rest;
}
