/**
 * Bodies the fake Slack server sends to an app: the Events API `event_callback` wrapper,
 * message and app_mention events, slash command payloads, and signed HTTP delivery
 * (`v0=HMAC-SHA256(secret, "v0:<ts>:<body>")`, as `@slack/bolt`'s verify-request checks).
 */
import { createHmac, randomUUID } from "node:crypto";
import { type SlackStore, channelType, wireMessage } from "./slack-store.js";
import type { PostEventOptions, SlackFileObject, SlackMessage, UserMessageInput } from "./slack-types.js";

/** Who the app is, for the wrappers. */
export interface AppIdentity {
  teamId: string;
  appId: string;
  botUserId: string;
}

/** Fresh event ids ("Ev0F00000001") and trigger ids. */
export class EventIds {
  #events = 0;
  #triggers = 0;

  eventId(): string {
    this.#events += 1;
    return `Ev0F${String(this.#events).padStart(8, "0")}`;
  }

  triggerId(): string {
    this.#triggers += 1;
    return `${1000 + this.#triggers}.${this.#triggers}.${randomUUID().replace(/-/g, "").slice(0, 21)}`;
  }
}

/** The `event_callback` body around an event, as the Events API and Socket Mode carry it. */
export function eventCallback(
  app: AppIdentity,
  event: Record<string, unknown>,
  eventId: string,
  eventTime: number,
): Record<string, unknown> {
  const context = {
    et: event.type,
    tid: app.teamId,
    aid: app.appId,
    ...(typeof event.channel === "string" ? { cid: event.channel } : {}),
  };
  return {
    token: "fake-verification-token",
    team_id: app.teamId,
    context_team_id: app.teamId,
    context_enterprise_id: null,
    api_app_id: app.appId,
    event,
    type: "event_callback",
    event_id: eventId,
    event_time: eventTime,
    authorizations: [
      {
        enterprise_id: null,
        team_id: app.teamId,
        user_id: app.botUserId,
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    is_ext_shared_channel: false,
    event_context: `4-${Buffer.from(JSON.stringify(context)).toString("base64url")}`,
  };
}

/** What a human (or another bot) message event is built from. */
export interface MessageEventInput {
  channel: string;
  user: string;
  text: string;
  ts: string;
  team: string;
  channelType: "channel" | "group" | "im" | "mpim";
  threadTs?: string;
  parentUserId?: string;
  files?: SlackFileObject[];
  subtype?: string;
  botId?: string;
  clientMsgId: string;
}

/** Slack's rich_text block for plain text, as its clients attach to messages. */
export function richText(text: string): unknown[] {
  return [
    {
      type: "rich_text",
      block_id: "fake0",
      elements: [{ type: "rich_text_section", elements: [{ type: "text", text }] }],
    },
  ];
}

/** A `message` event: `event_ts` = `ts`, rich_text blocks, file_share subtype for files. */
export function messageEvent(input: MessageEventInput): Record<string, unknown> {
  const subtype = input.subtype ?? (input.files?.length ? "file_share" : undefined);
  return {
    type: "message",
    ...(subtype !== undefined ? { subtype } : {}),
    user: input.user,
    ...(input.botId !== undefined ? { bot_id: input.botId } : { client_msg_id: input.clientMsgId }),
    text: input.text,
    ...(input.text !== "" ? { blocks: richText(input.text) } : {}),
    ...(input.files?.length
      ? { files: structuredClone(input.files), upload: false, display_as_bot: false }
      : {}),
    team: input.team,
    ...(input.threadTs !== undefined ? { thread_ts: input.threadTs } : {}),
    ...(input.parentUserId !== undefined ? { parent_user_id: input.parentUserId } : {}),
    ts: input.ts,
    channel: input.channel,
    event_ts: input.ts,
    channel_type: input.channelType,
  };
}

/**
 * Records a user's message in its channel (a thread reply when `threadTs`) and returns its
 * `message` event. Throws for an unknown channel.
 */
export function recordUserMessage(
  store: SlackStore,
  teamId: string,
  input: UserMessageInput,
): { event: Record<string, unknown>; ts: string } {
  const channel = store.channel(input.channel);
  if (!channel) throw new Error(`FakeSlack.userMessage: unknown channel ${input.channel}; addChannel() it`);
  const ts = store.nextTs();
  const parentUserId =
    input.threadTs !== undefined ? store.find(input.channel, input.threadTs)?.user : undefined;
  const event = messageEvent({
    channel: input.channel,
    user: input.user,
    text: input.text,
    ts,
    team: teamId,
    channelType: input.channelType ?? channelType(channel.info.kind),
    ...(input.threadTs !== undefined ? { threadTs: input.threadTs } : {}),
    ...(parentUserId !== undefined ? { parentUserId } : {}),
    ...(input.files ? { files: input.files } : {}),
    ...(input.subtype !== undefined ? { subtype: input.subtype } : {}),
    ...(input.botId !== undefined ? { botId: input.botId } : {}),
    clientMsgId: randomUUID(),
  });
  const { event_ts: _eventTs, channel_type: _channelType, ...stored } = event;
  store.add({ ...stored, channel: input.channel } as unknown as SlackMessage);
  return { event, ts };
}

/** Applies a user's edit to a stored message and returns the `message_changed` event. */
export function recordUserEdit(
  store: SlackStore,
  input: { channel: string; ts: string; text: string },
): Record<string, unknown> {
  const message = store.find(input.channel, input.ts);
  const channel = store.channel(input.channel);
  if (!message || !channel) throw new Error(`FakeSlack.editUserMessage: no message ${input.ts}`);
  const previous = wireMessage(message, false);
  const editTs = store.nextTs();
  message.text = input.text;
  message.blocks = richText(input.text);
  message.edited = { user: message.user ?? "", ts: editTs };
  return {
    type: "message",
    subtype: "message_changed",
    message: wireMessage(message, false),
    previous_message: previous,
    channel: input.channel,
    hidden: true,
    ts: editTs,
    event_ts: editTs,
    channel_type: channelType(channel.info.kind),
  };
}

/** The `message` event Slack sends for a message the bot itself posted. */
export function botMessageEvent(store: SlackStore, message: SlackMessage): Record<string, unknown> {
  const channel = store.channel(message.channel);
  return {
    ...wireMessage(message, false),
    channel: message.channel,
    event_ts: message.ts,
    channel_type: channel ? channelType(channel.info.kind) : "channel",
  };
}

/** The `app_mention` twin of a message event: same user, text, ts, channel, thread and files. */
export function appMentionEvent(message: Record<string, unknown>): Record<string, unknown> {
  const keys = ["user", "client_msg_id", "text", "blocks", "files", "team", "thread_ts", "parent_user_id"];
  const copied = Object.fromEntries(keys.filter((k) => k in message).map((k) => [k, message[k]]));
  return { type: "app_mention", ...copied, ts: message.ts, channel: message.channel, event_ts: message.ts };
}

/** A slash command's payload, as Socket Mode carries it (the HTTP form fields as an object). */
export function slashCommandPayload(input: {
  app: AppIdentity;
  command: string;
  text: string;
  user: string;
  userName: string;
  channel: string;
  channelName: string;
  responseUrl: string;
  triggerId: string;
}): Record<string, string> {
  return {
    token: "fake-verification-token",
    team_id: input.app.teamId,
    team_domain: "fake",
    channel_id: input.channel,
    channel_name: input.channelName,
    user_id: input.user,
    user_name: input.userName,
    command: input.command,
    text: input.text,
    api_app_id: input.app.appId,
    is_enterprise_install: "false",
    response_url: input.responseUrl,
    trigger_id: input.triggerId,
  };
}

/** `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>`. */
export function slackSignature(secret: string, timestampSec: number, body: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestampSec}:${body}`).digest("hex")}`;
}

/** POSTs a signed request to an app's HTTP endpoint; returns status and body text. */
export async function postSigned(
  url: string,
  body: object,
  defaults: { signingSecret: string; nowSec: number },
  options: PostEventOptions = {},
): Promise<{ status: number; body: string }> {
  const raw = options.rawBody ?? JSON.stringify(body);
  const timestamp = options.timestamp ?? defaults.nowSec;
  const signature =
    options.signature ?? slackSignature(options.signingSecret ?? defaults.signingSecret, timestamp, raw);
  const headers: Record<string, string> = {
    "content-type": options.contentType ?? "application/json",
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": signature,
    "user-agent": "Slackbot 1.0 (+https://api.slack.test/robots)",
  };
  if (options.retryNum !== undefined) headers["x-slack-retry-num"] = String(options.retryNum);
  if (options.retryReason !== undefined) headers["x-slack-retry-reason"] = options.retryReason;
  const res = await fetch(url, { method: "POST", headers, body: raw });
  return { status: res.status, body: await res.text() };
}
