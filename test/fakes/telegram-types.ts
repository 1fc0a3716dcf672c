/**
 * Shapes shared by the fake Telegram Bot API (test/fakes/telegram-bot-api.ts): the subset of
 * Bot API objects the fake produces, and the records its test-control API exposes.
 * Types only; nothing here runs.
 */

/** The four Telegram chat kinds. */
export type TelegramChatType = "private" | "group" | "supergroup" | "channel";

/** A Bot API `User`. */
export interface TelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
  last_name?: string;
  language_code?: string;
}

/** A Bot API `Chat`. */
export interface TelegramChat {
  id: number;
  type: TelegramChatType;
  title?: string;
  username?: string;
  first_name?: string;
  is_forum?: boolean;
}

/** A Bot API `MessageEntity`; offsets and lengths are in UTF-16 code units. */
export interface TelegramMessageEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
  user?: TelegramUser;
}

/** A Bot API `PhotoSize`. */
export interface TelegramPhotoSize {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size?: number;
}

/** A Bot API `Document`. */
export interface TelegramDocument {
  file_id: string;
  file_unique_id: string;
  file_name?: string;
  mime_type?: string;
  file_size?: number;
}

/** A Bot API `Voice`. */
export interface TelegramVoice {
  file_id: string;
  file_unique_id: string;
  duration: number;
  mime_type?: string;
  file_size?: number;
}

/** A Bot API `Message`, with the fields the fake fills in. */
export interface TelegramMessage {
  message_id: number;
  date: number;
  chat: TelegramChat;
  from?: TelegramUser;
  message_thread_id?: number;
  is_topic_message?: boolean;
  reply_to_message?: TelegramMessage;
  edit_date?: number;
  text?: string;
  entities?: TelegramMessageEntity[];
  caption?: string;
  caption_entities?: TelegramMessageEntity[];
  photo?: TelegramPhotoSize[];
  document?: TelegramDocument;
  voice?: TelegramVoice;
  new_chat_members?: TelegramUser[];
  reply_markup?: unknown;
}

/** A Bot API `Update`: `update_id` plus exactly one payload field (`message`, `callback_query`, …). */
export interface TelegramUpdate {
  update_id: number;
  [field: string]: unknown;
}

/** A bot served by the fake. */
export interface FakeBotConfig {
  /** The bot token, as it appears in `/bot<token>/<method>`. */
  token: string;
  /** The bot's user id. */
  id: number;
  /** The bot's username, without `@`. */
  username: string;
  /** First name reported by getMe; defaults to the username. */
  firstName?: string;
  /** getMe's `can_read_all_group_messages` (privacy mode off); defaults to false. */
  canReadAllGroupMessages?: boolean;
}

/** One API request the fake received (over HTTP, or executed from a webhook reply). */
export interface RecordedCall {
  readonly token: string;
  /** The canonical method name when known (`getupdates` is recorded as `getUpdates`), else as sent. */
  readonly method: string;
  /** Parameters as sent: JSON bodies as parsed; query/form fields as strings; uploads as `UploadedFile`. */
  readonly params: Record<string, unknown>;
  /** When the request was received, from the fake's clock (ms). */
  readonly timeMs: number;
  /** True when the call came back as a webhook reply instead of an HTTP request. */
  readonly viaWebhookReply?: boolean;
}

/** A scripted error, consumed by the next matching calls (FIFO per method). */
export interface FaultSpec {
  /** The method it applies to, e.g. `sendMessage`. */
  method: string;
  /** HTTP status and `error_code`, e.g. 429. */
  errorCode: number;
  /** The `description`, e.g. `Too Many Requests: retry after 1`. */
  description: string;
  /** The `parameters` object of the error body. */
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
  /** How many calls it answers; defaults to 1. */
  times?: number;
  /** Only calls with this bot token; defaults to any bot. */
  token?: string;
}

/** One attempt to deliver an update to a webhook. */
export interface WebhookDelivery {
  readonly token: string;
  readonly updateId: number;
  /** The HTTP status the webhook answered, or 0 when the request failed. */
  readonly status: number;
  /** 1 for the first attempt, then 2, 3, … for retries. */
  readonly attempt: number;
  /** Why the request failed, when it did not get an answer. */
  readonly error?: string;
}

/** A user as the test describes it; `is_bot` defaults to false. */
export interface FakeUserInput {
  id: number;
  first_name: string;
  username?: string;
  is_bot?: boolean;
}

/** What `pushMessage` builds an incoming message from. */
export interface PushMessageInput {
  chat: { id: number; type: TelegramChatType; title?: string; username?: string; is_forum?: boolean };
  /** The sender; defaults to a user whose id is the chat id (private) or 1000 (groups). */
  from?: FakeUserInput;
  text?: string;
  caption?: string;
  /** Explicit entities; by default bot_command (leading `/cmd`) and mention (`@name`) are detected. */
  entities?: TelegramMessageEntity[];
  messageThreadId?: number;
  isTopicMessage?: boolean;
  /** A message in the same chat (pushed or bot-sent) this one replies to. */
  replyToMessageId?: number;
  photo?: TelegramPhotoSize[];
  document?: TelegramDocument;
  voice?: TelegramVoice;
  newChatMembers?: FakeUserInput[];
}

/**
 * What `pushEditedMessage` changes: the message `messageId` in the chat, or by default the
 * latest message from `from` (or the default sender) there; with none, a fresh message is made.
 */
export interface PushEditInput {
  /** The chat, as for `pushMessage`; or give `chatId` for a chat the fake already knows. */
  chat?: PushMessageInput["chat"];
  chatId?: number;
  messageId?: number;
  from?: FakeUserInput;
  text?: string;
  caption?: string;
  /** Entities of the new text; detected as for `pushMessage` when omitted. */
  entities?: TelegramMessageEntity[];
}

/** What `pushCallbackQuery` builds a `callback_query` update from. */
export interface PushCallbackQueryInput {
  /** The chat of the message carrying the inline keyboard. */
  chatId: number;
  /** The message carrying the inline keyboard; it must be known to the fake. */
  messageId: number;
  from: FakeUserInput;
  data: string;
}

/** The ids `pushMessage` and friends assigned. */
export interface PushedMessage {
  updateId: number;
  messageId: number;
}
