/**
 * The Web API methods of the fake Slack server. Each takes parsed parameters and returns the
 * fields of the `{ok:true, ...}` answer, or throws a SlackApiError carrying Slack's error code.
 * Authentication happens before (in slack-api.ts); scopes are checked here, per method and,
 * for conversation methods, per conversation kind (`channels:` / `groups:` / `im:` / `mpim:`).
 */
import { type Params, SlackApiError, bool, int, isRecord, isTs, requireStr, str } from "./slack-params.js";
import { type ChannelState, type SlackStore, tsKey, wireMessage } from "./slack-store.js";
import type { RecordedStatus, SlackMessage, SlackMetadata } from "./slack-types.js";

/** What the methods read and report to. */
export interface MethodContext {
  readonly store: SlackStore;
  readonly teamId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly appId: string;
  readonly scopes: readonly string[];
  readonly assistantThreads: boolean;
  /** A message the bot posted (the stored object; chat.update changes it in place). */
  onPosted(message: SlackMessage): void;
  /** A successful assistant.threads.setStatus. */
  onStatus(status: RecordedStatus): void;
}

export type SlackMethod = (ctx: MethodContext, params: Params) => Record<string, unknown>;

const MAX_TEXT = 40_000;
const BOT_NAME = "switchyard";

/** `missing_scope` unless one of `anyOf` is granted; `needed`/`provided` as Slack sends them. */
function requireScope(ctx: MethodContext, ...anyOf: string[]): void {
  if (anyOf.some((scope) => ctx.scopes.includes(scope))) return;
  throw new SlackApiError("missing_scope", { needed: anyOf.join(","), provided: ctx.scopes.join(",") });
}

function scopePrefix(channel: ChannelState): string {
  const prefixes = { channel: "channels", private: "groups", im: "im", mpim: "mpim" } as const;
  return prefixes[channel.info.kind];
}

/** Posting and reading need membership, except in DMs. */
function requireMember(channel: ChannelState): void {
  if (channel.info.kind !== "im" && !channel.info.member) throw new SlackApiError("not_in_channel");
}

function parseMetadata(value: unknown): SlackMetadata | undefined {
  if (value === undefined || value === "") return undefined;
  if (!isRecord(value) || typeof value.event_type !== "string" || !isRecord(value.event_payload)) {
    throw new SlackApiError("invalid_metadata_format");
  }
  return { event_type: value.event_type, event_payload: value.event_payload };
}

/** Text, blocks and attachments of a post or update; `no_text` / `msg_too_long` as Slack. */
function messageContent(params: Params): { text: string; blocks?: unknown[]; attachments?: unknown[] } {
  const text = str(params, "text") ?? "";
  const blocks = Array.isArray(params.blocks) ? params.blocks : undefined;
  const attachments = Array.isArray(params.attachments) ? params.attachments : undefined;
  if (params.blocks !== undefined && params.blocks !== "" && !blocks)
    throw new SlackApiError("invalid_blocks");
  if (text === "" && !blocks?.length && !attachments?.length) throw new SlackApiError("no_text");
  if (text.length > MAX_TEXT) throw new SlackApiError("msg_too_long");
  return { text, ...(blocks ? { blocks } : {}), ...(attachments ? { attachments } : {}) };
}

/** The bot's own message at (channel, ts), or the error chat.update / chat.delete give. */
function ownMessage(ctx: MethodContext, channel: ChannelState, ts: string | undefined, refusal: string) {
  const message = ts === undefined ? undefined : ctx.store.find(channel.info.id, ts);
  if (!message) throw new SlackApiError("message_not_found");
  if (message.user !== ctx.botUserId || message.bot_id !== ctx.botId) throw new SlackApiError(refusal);
  return message;
}

function reactionTarget(ctx: MethodContext, params: Params): { message: SlackMessage; name: string } {
  requireScope(ctx, "reactions:write");
  const channel = ctx.store.requireChannel(str(params, "channel"));
  requireMember(channel);
  const ts = str(params, "timestamp");
  const message = ts === undefined ? undefined : ctx.store.find(channel.info.id, ts);
  if (!message) throw new SlackApiError("message_not_found");
  const name = (str(params, "name") ?? "").replace(/^:|:$/g, "");
  if (!/^[a-z0-9_+'-]+$/.test(name)) throw new SlackApiError("invalid_name");
  return { message, name };
}

const CURSOR_PREFIX = "next_ts:";

function encodeCursor(ts: string): string {
  return Buffer.from(`${CURSOR_PREFIX}${ts}`).toString("base64");
}

function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, "base64").toString("utf8");
  if (!text.startsWith(CURSOR_PREFIX) || !isTs(text.slice(CURSOR_PREFIX.length))) {
    throw new SlackApiError("invalid_cursor");
  }
  return tsKey(text.slice(CURSOR_PREFIX.length));
}

/**
 * One page of `messages` (already in answer order) after oldest/latest/inclusive filtering:
 * `{messages, has_more, response_metadata:{next_cursor}}`; cursors are base64 "next_ts:<ts>".
 */
function page(
  messages: SlackMessage[],
  params: Params,
  descending: boolean,
  defaultLimit: number,
): Record<string, unknown> {
  const inclusive = bool(params, "inclusive");
  const oldest = str(params, "oldest");
  const latest = str(params, "latest");
  const oldestKey = oldest === undefined ? undefined : tsKey(oldest);
  const latestKey = latest === undefined ? undefined : tsKey(latest);
  const inRange = messages.filter((m) => {
    const key = tsKey(m.ts);
    if (oldestKey !== undefined && (inclusive ? key < oldestKey : key <= oldestKey)) return false;
    if (latestKey !== undefined && (inclusive ? key > latestKey : key >= latestKey)) return false;
    return true;
  });
  const limit = Math.max(1, Math.min(999, int(params, "limit") ?? defaultLimit));
  const cursor = str(params, "cursor");
  let start = 0;
  if (cursor !== undefined) {
    const from = decodeCursor(cursor);
    start = inRange.findIndex((m) => (descending ? tsKey(m.ts) <= from : tsKey(m.ts) >= from));
    if (start < 0) start = inRange.length;
  }
  const slice = inRange.slice(start, start + limit);
  const next = inRange[start + limit];
  const includeMetadata = bool(params, "include_all_metadata");
  return {
    messages: slice.map((m) => wireMessage(m, includeMetadata)),
    has_more: next !== undefined,
    response_metadata: { next_cursor: next ? encodeCursor(next.ts) : "" },
  };
}

export const slackMethods: Record<string, SlackMethod> = {
  "auth.test": (ctx) => ({
    url: "https://fake.slack.test/",
    team: "Fake",
    user: BOT_NAME,
    team_id: ctx.teamId,
    user_id: ctx.botUserId,
    bot_id: ctx.botId,
    is_enterprise_install: false,
  }),

  "chat.postMessage": (ctx, params) => {
    requireScope(ctx, "chat:write");
    const channel = ctx.store.resolveTarget(str(params, "channel"));
    if (channel.info.archived) throw new SlackApiError("is_archived");
    requireMember(channel);
    const content = messageContent(params);
    const metadata = parseMetadata(params.metadata);
    const threadTs = str(params, "thread_ts");
    let thread: { root: string; parentUser: string | undefined } | undefined;
    if (threadTs !== undefined) {
      const parent = isTs(threadTs) ? ctx.store.find(channel.info.id, threadTs) : undefined;
      if (!parent) throw new SlackApiError("invalid_thread_ts");
      // A reply's ts names its thread: Slack files the message under the thread's parent.
      const root = parent.thread_ts ?? parent.ts;
      thread = { root, parentUser: ctx.store.find(channel.info.id, root)?.user };
    }
    const message: SlackMessage = {
      type: "message",
      channel: channel.info.id,
      ts: ctx.store.nextTs(),
      text: content.text,
      user: ctx.botUserId,
      bot_id: ctx.botId,
      app_id: ctx.appId,
      team: ctx.teamId,
      ...(thread && bool(params, "reply_broadcast") ? { subtype: "thread_broadcast" } : {}),
      ...(thread ? { thread_ts: thread.root } : {}),
      ...(thread?.parentUser !== undefined ? { parent_user_id: thread.parentUser } : {}),
      ...(content.blocks ? { blocks: content.blocks } : {}),
      ...(metadata ? { metadata } : {}),
    };
    const stored = ctx.store.add(message);
    ctx.onPosted(stored);
    return { channel: channel.info.id, ts: stored.ts, message: wireMessage(stored, true) };
  },

  "chat.update": (ctx, params) => {
    requireScope(ctx, "chat:write");
    const channel = ctx.store.requireChannel(str(params, "channel"));
    const message = ownMessage(ctx, channel, str(params, "ts"), "cant_update_message");
    const content = messageContent(params);
    const metadata = parseMetadata(params.metadata);
    message.text = content.text;
    if (content.blocks) message.blocks = content.blocks;
    if (metadata) message.metadata = metadata;
    message.edited = { user: ctx.botUserId, ts: ctx.store.nextTs() };
    return {
      channel: channel.info.id,
      ts: message.ts,
      text: message.text,
      message: wireMessage({ ...message, channel: channel.info.id }, true),
    };
  },

  "chat.delete": (ctx, params) => {
    requireScope(ctx, "chat:write");
    const channel = ctx.store.requireChannel(str(params, "channel"));
    const message = ownMessage(ctx, channel, str(params, "ts"), "cant_delete_message");
    channel.messages.splice(channel.messages.indexOf(message), 1);
    return { channel: channel.info.id, ts: message.ts };
  },

  "reactions.add": (ctx, params) => {
    const { message, name } = reactionTarget(ctx, params);
    const reactions = message.reactions ?? [];
    const entry = reactions.find((r) => r.name === name);
    if (entry?.users.includes(ctx.botUserId)) throw new SlackApiError("already_reacted");
    if (entry) {
      entry.users.push(ctx.botUserId);
      entry.count += 1;
    } else {
      reactions.push({ name, users: [ctx.botUserId], count: 1 });
    }
    message.reactions = reactions;
    return {};
  },

  "reactions.remove": (ctx, params) => {
    const { message, name } = reactionTarget(ctx, params);
    const entry = message.reactions?.find((r) => r.name === name);
    if (!entry?.users.includes(ctx.botUserId)) throw new SlackApiError("no_reaction");
    entry.users = entry.users.filter((u) => u !== ctx.botUserId);
    entry.count -= 1;
    if (entry.count === 0) message.reactions = message.reactions?.filter((r) => r !== entry);
    if (message.reactions?.length === 0) message.reactions = undefined;
    return {};
  },

  /**
   * Guessed: an app without the Agents & AI Apps feature is refused with `missing_scope`
   * (`needed: "assistant:write"`), which is what apps report seeing for assistant.threads.* calls
   * outside the assistant surface. With the feature, `assistant:write` or `chat:write` suffices
   * (Slack's current docs accept either). The thread must be an existing message.
   */
  "assistant.threads.setStatus": (ctx, params) => {
    if (!ctx.assistantThreads) {
      throw new SlackApiError("missing_scope", {
        needed: "assistant:write",
        provided: ctx.scopes.filter((s) => s !== "assistant:write").join(","),
      });
    }
    requireScope(ctx, "assistant:write", "chat:write");
    const channel = ctx.store.requireChannel(str(params, "channel_id"));
    const threadTs = str(params, "thread_ts");
    if (threadTs === undefined || !isTs(threadTs) || !ctx.store.find(channel.info.id, threadTs)) {
      throw new SlackApiError("invalid_thread_ts");
    }
    const status = typeof params.status === "string" ? params.status : "";
    ctx.onStatus({ channel_id: channel.info.id, thread_ts: threadTs, status });
    return {};
  },

  "conversations.info": (ctx, params) => {
    const channel = ctx.store.requireChannel(str(params, "channel"));
    requireScope(ctx, `${scopePrefix(channel)}:read`);
    return { channel: ctx.store.conversationInfo(channel) };
  },

  "conversations.open": (ctx, params) => {
    requireScope(ctx, "im:write", "mpim:write", "channels:manage");
    const users = (str(params, "users") ?? "").split(",").filter((u) => u !== "");
    if (users.length !== 1)
      throw new SlackApiError(users.length === 0 ? "users_list_not_supplied" : "not_supported");
    if (!ctx.store.user(users[0] ?? "")) throw new SlackApiError("user_not_found");
    const channel = ctx.store.resolveTarget(users[0]);
    return { channel: { id: channel.info.id } };
  },

  "users.info": (ctx, params) => {
    requireScope(ctx, "users:read");
    return { user: ctx.store.userInfo(str(params, "user")) };
  },

  "conversations.history": (ctx, params) => {
    const channel = ctx.store.requireChannel(str(params, "channel"));
    requireScope(ctx, `${scopePrefix(channel)}:history`);
    requireMember(channel);
    const newestFirst = [...ctx.store.topLevel(channel)].reverse();
    return { ...page(newestFirst, params, true, 100), pin_count: 0 };
  },

  "conversations.replies": (ctx, params) => {
    const channel = ctx.store.requireChannel(str(params, "channel"));
    requireScope(ctx, `${scopePrefix(channel)}:history`);
    requireMember(channel);
    const ts = requireStr(params, "ts", "thread_not_found");
    const thread = ctx.store.thread(channel, ts);
    if (!thread) throw new SlackApiError("thread_not_found");
    return page(thread, params, false, 1000);
  },
};

/** The bot's profile as users.info answers for it (registered as a user by the fake). */
export function botUser(ctx: { botUserId: string }): { id: string; name: string; isBot: true } {
  return { id: ctx.botUserId, name: BOT_NAME, isBot: true };
}
