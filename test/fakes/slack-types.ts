/**
 * Shapes the fake Slack server exchanges with its tests: options, directory entries, stored
 * messages, recorded calls and scripted faults. Wire objects keep Slack's snake_case field names.
 */

/** Options for {@link FakeSlack}. */
import { SLACK_SCOPES } from "../../src/channels/slack/module.js";
export interface FakeSlackOptions {
  /** Port on 127.0.0.1; default 0 (an ephemeral port). */
  port?: number;
  /** Default "T0001". */
  teamId?: string;
  /** The bot's user id; default "UBOT". */
  botUserId?: string;
  /** Default "B0001". */
  botId?: string;
  /** Default "A0001". */
  appId?: string;
  /** The bot token (`xoxb-`) the Web API accepts; default "xoxb-fake". */
  botToken?: string;
  /** The app-level token (`xapp-`) `apps.connections.open` accepts; default "xapp-fake". */
  appToken?: string;
  /** Secret for signed HTTP event delivery; default "fake-signing-secret". */
  signingSecret?: string;
  /** Clock in ms for message ts, event_time and call times; default `Date.now`. */
  now?: () => number;
  /** Scopes granted to the bot token (sent as `x-oauth-scopes`); default a full set, see DEFAULT_SCOPES. */
  scopes?: string[];
  /**
   * Whether the app has the "Agents & AI Apps" feature. When false (the default),
   * `assistant.threads.setStatus` answers `missing_scope` with `needed: "assistant:write"`.
   */
  assistantThreads?: boolean;
  /**
   * Re-send an envelope not acked within this many ms on the current socket (retry_attempt + 1,
   * retry_reason "timeout"), at most `maxRetryAttempts` times. Default: off (0).
   */
  resendUnackedAfterMs?: number;
  /** Most retries per envelope, as Slack (3). */
  maxRetryAttempts?: number;
  /** Deliver the bot's own chat.postMessage messages back as `message` events, as Slack does; default false. */
  echoBotMessages?: boolean;
  /** Largest request body accepted, in bytes; default 5 MB. */
  maxBodyBytes?: number;
}

/**
 * Scopes granted when `scopes` is not given: the app manifest's (the README's, which doctor
 * checks against) plus assistant:write, as an app with Slack's assistant feature has.
 */
export const DEFAULT_SCOPES: readonly string[] = [...SLACK_SCOPES, "assistant:write"];

/** What `addUser` takes. */
export interface SlackUserInput {
  id: string;
  name: string;
  realName?: string;
  isBot?: boolean;
}

/** Conversation kinds: public channel, private channel, DM, group DM. */
export type ChannelKind = "channel" | "private" | "im" | "mpim";

/** What `addChannel` takes. */
export interface SlackChannelInput {
  id: string;
  /** Ignored for `im` (DMs have no name). */
  name: string;
  kind: ChannelKind;
  /** The DM peer (`im` only). */
  user?: string;
  archived?: boolean;
  /** Whether the bot is a member; default true. */
  member?: boolean;
}

/** What `addFile` takes. */
export interface SlackFileInput {
  id: string;
  name: string;
  mimetype: string;
  content: Buffer | string;
  /** The uploader; default none. */
  user?: string;
}

/** A file object as Slack puts it in a message's `files`. */
export interface SlackFileObject {
  id: string;
  created: number;
  timestamp: number;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  pretty_type: string;
  user?: string;
  size: number;
  mode: "hosted";
  is_external: false;
  is_public: boolean;
  url_private: string;
  url_private_download: string;
  permalink: string;
}

/** Message metadata, as chat.postMessage takes it. */
export interface SlackMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/** A message as the fake stores it (the wire message plus its `channel`). */
export interface SlackMessage {
  type: "message";
  channel: string;
  ts: string;
  text: string;
  user?: string;
  bot_id?: string;
  app_id?: string;
  team?: string;
  subtype?: string;
  thread_ts?: string;
  parent_user_id?: string;
  reply_count?: number;
  reply_users?: string[];
  reply_users_count?: number;
  latest_reply?: string;
  metadata?: SlackMetadata;
  files?: SlackFileObject[];
  blocks?: unknown[];
  client_msg_id?: string;
  edited?: { user: string; ts: string };
  reactions?: Array<{ name: string; users: string[]; count: number }>;
}

/** One Web API request, as received (token left out of `params`). */
export interface RecordedCall {
  method: string;
  params: Record<string, unknown>;
  token: string | undefined;
  /** `now()` when it arrived, in ms. */
  at: number;
}

/** A scripted answer for the next call(s) of a method. */
export type SlackFault =
  /** HTTP 429 with `Retry-After: retryAfter` and `{ok:false,error:"ratelimited"}`. */
  | { status: 429; retryAfter: number }
  /** HTTP 200 `{ok:false, error, ...fields}` (e.g. fields `{needed, provided}` for missing_scope). */
  | { error: string; fields?: Record<string, unknown> }
  /** A bare HTTP error status (the client sees a WebAPIHTTPError). */
  | { status: number }
  /** Never answered: the request stays open until the client gives up or the fake closes. */
  | { hang: true }
  /** Carried out (a post is stored), then never answered: the client cannot tell it worked. */
  | { hangAfter: true };

/** What `userMessage` takes. */
export interface UserMessageInput {
  channel: string;
  user: string;
  text: string;
  threadTs?: string;
  files?: SlackFileObject[];
  /** Default from the channel's kind (`private` → "group"). */
  channelType?: "channel" | "group" | "im" | "mpim";
  /** Default "file_share" when `files` is given, else none. */
  subtype?: string;
  /** Marks the message as another bot's. */
  botId?: string;
  /** Also deliver an `app_mention` for the same message, as Slack does when it mentions the app. */
  also?: "app_mention";
}

/** What `userMessage` returns. */
export interface UserMessageResult {
  eventId: string;
  ts: string;
  envelopeId: string;
  /** The `app_mention` twin, when `also: "app_mention"`. */
  mention?: { eventId: string; envelopeId: string };
}

/** What `slashCommand` takes. */
export interface SlashCommandInput {
  command: string;
  text: string;
  user: string;
  channel: string;
  channelName?: string;
}

/** Options of `postEvent` (signed HTTP delivery). */
export interface PostEventOptions {
  signingSecret?: string;
  /** `x-slack-request-timestamp`, in seconds; default now. */
  timestamp?: number;
  /** Replaces the computed `x-slack-signature`. */
  signature?: string;
  retryNum?: number;
  retryReason?: string;
  /** Default "application/json". */
  contentType?: string;
  /** The exact body to send (and sign) instead of `JSON.stringify(body)`. */
  rawBody?: string;
}

/** An ack frame from the app: `{envelope_id, payload?}`. */
export interface EnvelopeAck {
  envelope_id: string;
  payload?: unknown;
}

/** A POST to a `response_url`. */
export interface RecordedResponse {
  url: string;
  body: unknown;
  at: number;
}

/** An `assistant.threads.setStatus` call that succeeded. */
export interface RecordedStatus {
  channel_id: string;
  thread_ts: string;
  status: string;
}
