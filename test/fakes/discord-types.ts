/**
 * Shapes the fake Discord exchanges with its tests: options, directory inputs, the wire objects
 * it serves (users, channels, messages, attachments, commands), recorded calls and scripted REST
 * faults. Wire objects keep Discord's snake_case field names (API v10).
 */

/** A user as a test describes one (a message author, an interaction's user). */
export interface UserInput {
  id: string;
  username: string;
  bot?: boolean;
  global_name?: string | null;
}

/** A guild channel as a test describes one; `type` defaults to 0 (GUILD_TEXT). */
export interface ChannelInput {
  id: string;
  name: string;
  type?: number;
  topic?: string | null;
  /** A category's id. */
  parentId?: string;
}

/** A guild the bot is in. */
export interface GuildInput {
  id: string;
  name: string;
  channels: ChannelInput[];
  /** Default the bot's id. */
  ownerId?: string;
  /** The @everyone role's permission bits (decimal string); default a member's usual set. */
  everyonePermissions?: string;
}

/** Options for {@link FakeDiscord}. */
export interface FakeDiscordOptions {
  /** Port on 127.0.0.1; default 0 (an ephemeral port). */
  port?: number;
  /** The bot token REST (`Authorization: Bot …`) and IDENTIFY accept; default "fake-bot-token". */
  token?: string;
  /** Default id "100000000000000001", username "switchyard". */
  botUser?: { id: string; username: string; global_name?: string | null };
  /** Default the bot's id. */
  applicationId?: string;
  /** Default the bot's username. */
  applicationName?: string;
  /**
   * Whether the app may use the privileged MessageContent intent. True (default): application
   * flags include GATEWAY_MESSAGE_CONTENT_LIMITED (1 << 19). False: flags 0, an IDENTIFY with
   * intent 1 << 15 is closed with 4014, and REST history blanks other people's message content.
   */
  messageContentIntent?: boolean;
  /** HELLO's heartbeat_interval; default 500 ms. */
  heartbeatIntervalMs?: number;
  /** Default one guild "200000000000000001" with a text channel "300000000000000001". */
  guilds?: GuildInput[];
  /** Users known up front (message authors are also learnt as they appear). */
  users?: UserInput[];
  /** Clock in ms for timestamps, snowflakes and windows; default `Date.now`. */
  now?: () => number;
  /** How long an `enforce_nonce` nonce is remembered; default 5 minutes. */
  nonceWindowMs?: number;
  /** How long an interaction may go without its initial response; default 3000 ms, as Discord. */
  interactionResponseWindowMs?: number;
}

/** A user object on the wire. */
export interface DiscordUser {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  avatar: string | null;
  bot?: boolean;
  public_flags: number;
}

/** An attachment object on the wire. */
export interface DiscordAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  proxy_url: string;
  content_type: string;
  ephemeral?: boolean;
}

/** `message_reference` on the wire. */
export interface MessageReference {
  type: number;
  message_id: string;
  channel_id: string;
  guild_id?: string;
  fail_if_not_exists?: boolean;
}

/** A message as REST returns it (the gateway adds guild_id, member, channel_type). */
export interface DiscordMessage {
  id: string;
  channel_id: string;
  author: DiscordUser;
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: DiscordUser[];
  mention_roles: string[];
  attachments: DiscordAttachment[];
  embeds: unknown[];
  components: unknown[];
  pinned: boolean;
  type: number;
  flags: number;
  nonce?: string | number;
  message_reference?: MessageReference;
  referenced_message?: DiscordMessage | null;
  webhook_id?: string;
  application_id?: string;
  interaction_metadata?: Record<string, unknown>;
  position?: number;
}

/** A channel as the fake keeps it (guild channel, DM or thread). */
export interface ChannelRecord {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  parentId?: string;
  topic?: string | null;
  position: number;
  /** DMs: the other user's id. */
  recipientId?: string;
  ownerId?: string;
  createdAt?: number;
  lastMessageId: string | null;
}

/** A guild as the fake keeps it. */
export interface GuildRecord {
  id: string;
  name: string;
  ownerId: string;
  everyonePermissions: string;
  joinedAt: number;
}

/** An application command as stored and returned. */
export interface DiscordCommand {
  id: string;
  application_id: string;
  version: string;
  type: number;
  name: string;
  description: string;
  guild_id?: string;
  default_member_permissions: string | null;
  nsfw: boolean;
  [key: string]: unknown;
}

/** One REST request, as received and answered. */
export interface RecordedCall {
  method: string;
  /** The path after `/api/v10` (e.g. `/channels/1/messages`), or the full path outside it. */
  path: string;
  /** The matched route template (e.g. `/channels/:channel/messages`), if any. */
  route?: string;
  query: Record<string, string>;
  body: unknown;
  /** 0 while unanswered (a hang fault). */
  status: number;
  at: number;
}

/** A file uploaded in a multipart request. */
export interface UploadedFile {
  field: string;
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** A POST to `/channels/:id/messages` (every one that passed auth, errors included). */
export interface SentRecord {
  channelId: string;
  body: Record<string, unknown>;
  files: Array<Omit<UploadedFile, "bytes"> & { size: number }>;
  at: number;
  status: number;
  messageId?: string;
  /** True when `enforce_nonce` returned an existing message instead of creating one. */
  deduplicated: boolean;
}

/** A successful PATCH of one of the bot's messages. */
export interface EditRecord {
  channelId: string;
  messageId: string;
  body: Record<string, unknown>;
  at: number;
}

/** A REST route matcher for {@link RestFault}s: `route` matches the path after `/api/v10`. */
export interface FaultMatch {
  method?: string;
  /** A RegExp tested against the path, or a string: exact, or a template with `:name` segments. */
  route: RegExp | string;
  /** Only requests whose parsed body (JSON, or a multipart's payload_json) passes this test. */
  when?: (body: unknown) => boolean;
}

/** A scripted answer for the next matching REST request(s). */
export type RestFault =
  /** 429 with Discord's rate-limit headers and body; discord.js waits and retries. */
  | {
      status: 429;
      retryAfterSec: number;
      global?: boolean;
      /**
       * False: only Retry-After (scope "shared", as Discord's per-resource limits): the bucket
       * stays open, so the client's next request goes out at once. Default true.
       */
      bucketHeaders?: boolean;
    }
  /** An error status with Discord's JSON error body (`code`/`message` default per status). */
  | { status: 403 | 404 | 500 | 502 | 503; code?: number; message?: string }
  /** Never answered (and not carried out) until the client gives up or the fake closes. */
  | { hang: true }
  /** Carried out (a message is stored and echoed), then never answered. */
  | { hangAfter: true }
  /** Carried out and answered as usual once `until` settles (e.g. a login held before READY). */
  | { until: Promise<unknown> };

/** What `userMessage` / `dm` take. */
export interface UserMessageInput {
  channelId: string;
  /** Default from the channel. */
  guildId?: string;
  author: UserInput;
  content: string;
  /** Users mentioned (ids or users); default computed from `<@id>` / `<@!id>` in content. */
  mentions?: Array<string | UserInput>;
  /** Reply to this stored message (message_reference, referenced_message, type 19). */
  replyTo?: string;
  /** Whether a reply pings (mentions) the replied-to author; default true, as Discord's client. */
  replyPing?: boolean;
  attachments?: AttachmentInput[];
  embeds?: unknown[];
  /** Default 0, or 19 for a reply. */
  type?: number;
  /** Default a fresh snowflake. */
  id?: string;
}

/** An attachment a test puts on a user's message; served from `/cdn/attachments/…`. */
export interface AttachmentInput {
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** What `createThread` takes; `type` 11 (public, default) or 12 (private). */
export interface ThreadInput {
  parentId: string;
  name: string;
  /** Default a fresh snowflake. */
  id?: string;
  /** Default a fresh snowflake (someone other than the bot). */
  ownerId?: string;
  type?: 11 | 12;
}

/** A thread channel object as THREAD_CREATE carries it. */
export interface ThreadObject {
  id: string;
  type: number;
  name: string;
  guild_id: string;
  parent_id: string;
  newly_created: boolean;
  [key: string]: unknown;
}

/** What `interaction` takes. */
export interface InteractionInput {
  /** The command's name; `data.id` is the registered command's id when one has this name. */
  name: string;
  channelId: string;
  /** Default from the channel (none for a DM channel). */
  guildId?: string;
  user: UserInput;
  /** Raw option objects, or name → value (string 3, integer 4, number 10, boolean 5). */
  options?: Array<Record<string, unknown>> | Record<string, string | number | boolean>;
  locale?: string;
  id?: string;
}

/** The final answer to an interaction: type 4's data, or the @original edit after a type 5. */
export interface InteractionResponse {
  content: string;
  flags: number;
}

/** What `interaction` returns. */
export interface InteractionHandle {
  id: string;
  token: string;
  /** Resolves with the final answer; rejects when the fake closes first. */
  response: Promise<InteractionResponse>;
}

/** One REST call made for an interaction (callback, @original edit/fetch/delete, followup). */
export interface InteractionCall {
  kind: "callback" | "edit" | "fetch" | "delete" | "followup";
  body: unknown;
  status: number;
  at: number;
}

/** A gateway connection as accepted (before any IDENTIFY/RESUME). */
export interface ConnectionRecord {
  path: string;
  query: Record<string, string>;
  at: number;
  /** The close code the fake refused it with, if it did (4002, 4012). */
  refusedWith?: number;
}
