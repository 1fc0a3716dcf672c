/**
 * The fake Bot API's methods that need only the calling bot and the shared chats (getMe, send,
 * edit, delete, media, files, commands), with Telegram's validation and error texts. Each takes
 * a {@link MethodContext} and the request parameters and returns the `result`, or throws a
 * BotApiError. Polling and webhook methods live with the server (telegram-bot-api.ts).
 */
import type { ChatStore } from "./telegram-chats.js";
import { badRequest } from "./telegram-errors.js";
import type { FileStore, StoredFile } from "./telegram-files.js";
import { type TelegramHtmlOptions, parseTelegramHtml, type ParsedText } from "./telegram-html.js";
import {
  type ApiParams,
  boolParam,
  chatIdParam,
  intParam,
  isRecord,
  isUpload,
  objectParam,
  arrayParam,
  stringParam,
} from "./telegram-params.js";
import type { TelegramMessage, TelegramMessageEntity, TelegramUser } from "./telegram-types.js";

/** Longest message text, in UTF-16 code units after entity parsing. */
export const MAX_TEXT_LENGTH = 4096;
/** Longest media caption. */
export const MAX_CAPTION_LENGTH = 1024;
/** Largest file `getFile` serves (Telegram's 20 MB download limit). */
export const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;

const NOT_MODIFIED =
  "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

/** What a method sees of the fake and the calling bot. */
export interface MethodContext {
  readonly botUser: TelegramUser;
  readonly canReadAllGroupMessages: boolean;
  /** `setMyCommands` lists by scope and language. */
  readonly commands: Map<string, unknown[]>;
  readonly chats: ChatStore;
  readonly files: FileStore;
  readonly html: TelegramHtmlOptions;
  /** Unix time in seconds, for `date` / `edit_date`. */
  nowSeconds(): number;
  /** Called with every message the bot sent successfully. */
  onSent(message: TelegramMessage): void;
}

/** Applies `parse_mode` (HTML parsed; Markdown modes and no mode keep the text as sent). */
export function formatText(
  text: string,
  params: ApiParams,
  modeField: string,
  entitiesField: string,
  html: TelegramHtmlOptions,
): ParsedText {
  const mode = (stringParam(params, modeField) ?? "").toLowerCase();
  if (mode === "html") return parseTelegramHtml(text, html);
  if (mode !== "" && mode !== "markdown" && mode !== "markdownv2") throw badRequest("unsupported parse_mode");
  const entities = (arrayParam(params, entitiesField) ?? []).filter(isEntity);
  return { text, entities };
}

function isEntity(value: unknown): value is TelegramMessageEntity {
  return (
    isRecord(value) &&
    typeof value.type === "string" &&
    typeof value.offset === "number" &&
    typeof value.length === "number"
  );
}

/** `reply_parameters` / `reply_to_message_id` → the replied message, without its own reply. */
function replyTarget(ctx: MethodContext, chatId: number, params: ApiParams): TelegramMessage | undefined {
  const reply = objectParam(params, "reply_parameters");
  const messageId =
    (reply ? intParam(reply, "message_id") : undefined) ?? intParam(params, "reply_to_message_id");
  if (messageId === undefined) return undefined;
  const target = ctx.chats.get(chatId, messageId);
  if (target) {
    const { reply_to_message: _nested, ...rest } = structuredClone(target);
    return rest;
  }
  const allow =
    (reply ? boolParam(reply, "allow_sending_without_reply") : false) ||
    boolParam(params, "allow_sending_without_reply");
  if (allow) return undefined;
  throw badRequest("message to be replied not found");
}

/** The fields every bot-sent message shares: id, sender, chat, date, thread, reply, keyboard. */
function envelope(ctx: MethodContext, chatId: number, params: ApiParams): TelegramMessage {
  const replyTo = replyTarget(ctx, chatId, params);
  const chat = ctx.chats.chat(chatId);
  const threadId = intParam(params, "message_thread_id");
  const markup = objectParam(params, "reply_markup");
  return {
    message_id: ctx.chats.nextMessageId(chatId),
    from: { ...ctx.botUser },
    chat,
    date: ctx.nowSeconds(),
    ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
    ...(threadId !== undefined && chat.is_forum ? { is_topic_message: true } : {}),
    ...(replyTo ? { reply_to_message: replyTo } : {}),
    ...(markup && Array.isArray(markup.inline_keyboard) ? { reply_markup: markup } : {}),
  };
}

function deliver(ctx: MethodContext, message: TelegramMessage): TelegramMessage {
  ctx.chats.add(message);
  ctx.onSent(structuredClone(message));
  return structuredClone(message);
}

/** `sendMessage`. */
export function sendMessage(ctx: MethodContext, params: ApiParams): TelegramMessage {
  const chatId = ctx.chats.reachable(chatIdParam(params));
  const raw = stringParam(params, "text") ?? "";
  if (raw === "") throw badRequest("message text is empty");
  const parsed = formatText(raw, params, "parse_mode", "entities", ctx.html);
  if (parsed.text.trim() === "") throw badRequest("message text is empty");
  if (parsed.text.length > MAX_TEXT_LENGTH) throw badRequest("message is too long");
  const message = envelope(ctx, chatId, params);
  message.text = parsed.text;
  if (parsed.entities.length > 0) message.entities = parsed.entities;
  return deliver(ctx, message);
}

/** `editMessageText` (chat messages only; `inline_message_id` is not supported). */
export function editMessageText(ctx: MethodContext, params: ApiParams): TelegramMessage {
  if (params.inline_message_id !== undefined) throw badRequest("message to edit not found");
  const chatId = ctx.chats.reachable(chatIdParam(params));
  const messageId = intParam(params, "message_id");
  const message = messageId === undefined ? undefined : ctx.chats.get(chatId, messageId);
  if (!message) throw badRequest("message to edit not found");
  if (message.from?.id !== ctx.botUser.id) throw badRequest("message can't be edited");
  if (message.text === undefined) throw badRequest("there is no text in the message to edit");
  const raw = stringParam(params, "text") ?? "";
  if (raw === "") throw badRequest("message text is empty");
  const parsed = formatText(raw, params, "parse_mode", "entities", ctx.html);
  if (parsed.text.trim() === "") throw badRequest("message text is empty");
  if (parsed.text.length > MAX_TEXT_LENGTH) throw badRequest("MESSAGE_TOO_LONG");
  // Without reply_markup an edit removes the inline keyboard, as on Telegram.
  const markup = objectParam(params, "reply_markup");
  const newMarkup = markup && Array.isArray(markup.inline_keyboard) ? markup : undefined;
  const same =
    parsed.text === message.text &&
    JSON.stringify(parsed.entities) === JSON.stringify(message.entities ?? []) &&
    JSON.stringify(newMarkup) === JSON.stringify(message.reply_markup);
  if (same) throw badRequest(NOT_MODIFIED);
  message.text = parsed.text;
  if (parsed.entities.length > 0) message.entities = parsed.entities;
  else delete message.entities;
  if (newMarkup) message.reply_markup = newMarkup;
  else delete message.reply_markup;
  message.edit_date = ctx.nowSeconds();
  return structuredClone(message);
}

/** `deleteMessage`. */
export function deleteMessage(ctx: MethodContext, params: ApiParams): true {
  const chatId = ctx.chats.reachable(chatIdParam(params));
  const messageId = intParam(params, "message_id");
  if (messageId === undefined || !ctx.chats.delete(chatId, messageId)) {
    throw badRequest("message to delete not found");
  }
  return true;
}

/** Methods that only need a reachable chat and answer `true` (`sendChatAction`, `setMessageReaction`). */
export function chatScopedTrue(ctx: MethodContext, params: ApiParams): true {
  ctx.chats.reachable(chatIdParam(params));
  return true;
}

/** `sendPhoto` / `sendDocument`: the file as an upload, a known file_id, or an HTTP URL. */
export function sendMedia(
  ctx: MethodContext,
  params: ApiParams,
  kind: "photo" | "document",
): TelegramMessage {
  const chatId = ctx.chats.reachable(chatIdParam(params));
  const file = resolveInputFile(ctx, params[kind], kind);
  const rawCaption = stringParam(params, "caption") ?? "";
  const caption = formatText(rawCaption, params, "parse_mode", "caption_entities", ctx.html);
  if (caption.text.length > MAX_CAPTION_LENGTH) throw badRequest("message caption is too long");
  const message = envelope(ctx, chatId, params);
  const size = file.content.length;
  if (kind === "photo") {
    message.photo = [
      { file_id: file.fileId, file_unique_id: file.fileUniqueId, width: 90, height: 90, file_size: size },
    ];
  } else {
    message.document = {
      file_id: file.fileId,
      file_unique_id: file.fileUniqueId,
      file_size: size,
      ...(file.fileName !== undefined ? { file_name: file.fileName } : {}),
      ...(file.mimeType !== undefined ? { mime_type: file.mimeType } : {}),
    };
  }
  if (caption.text !== "") message.caption = caption.text;
  if (caption.entities.length > 0) message.caption_entities = caption.entities;
  return deliver(ctx, message);
}

function resolveInputFile(ctx: MethodContext, input: unknown, kind: string): StoredFile {
  if (isUpload(input)) return ctx.files.addUpload(input.content, kind, input.filename, input.contentType);
  if (typeof input !== "string" || input === "") throw badRequest(`there is no ${kind} in the request`);
  const known = ctx.files.byId(input);
  if (known) return known;
  if (/^https?:\/\//.test(input)) {
    return ctx.files.addUpload(Buffer.alloc(0), kind, input.split("/").pop() ?? undefined);
  }
  throw badRequest("wrong file identifier/HTTP URL specified");
}

/** `getFile`. */
export function getFile(ctx: MethodContext, params: ApiParams): Record<string, unknown> {
  const fileId = stringParam(params, "file_id") ?? "";
  const file = ctx.files.byId(fileId);
  if (!file) throw badRequest("invalid file_id");
  if (file.content.length > MAX_DOWNLOAD_BYTES) throw badRequest("file is too big");
  return {
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
    ...(file.reportSize === false ? {} : { file_size: file.content.length }),
    file_path: file.filePath,
  };
}

/** `getMe`: the bot user plus the capability flags grammY's `UserFromGetMe` carries. */
export function getMe(ctx: MethodContext): Record<string, unknown> {
  return {
    ...ctx.botUser,
    can_join_groups: true,
    can_read_all_group_messages: ctx.canReadAllGroupMessages,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
    has_topics_enabled: false,
    allows_users_to_create_topics: false,
    can_manage_bots: false,
    supports_join_request_queries: false,
  };
}

/** Commands are stored per scope and language, as on Telegram. */
function commandsKey(params: ApiParams): string {
  const scope = objectParam(params, "scope") ?? { type: "default" };
  return `${JSON.stringify(scope)}|${stringParam(params, "language_code") ?? ""}`;
}

/** `setMyCommands`, with Telegram's checks on names (`[a-z0-9_]{1,32}`) and descriptions. */
export function setMyCommands(ctx: MethodContext, params: ApiParams): true {
  const commands = arrayParam(params, "commands") ?? [];
  for (const entry of commands) {
    const command = isRecord(entry) ? entry.command : undefined;
    if (typeof command !== "string" || !/^[a-z0-9_]{1,32}$/.test(command))
      throw badRequest("BOT_COMMAND_INVALID");
    const description = isRecord(entry) ? entry.description : undefined;
    if (typeof description !== "string" || description.trim() === "" || description.length > 256) {
      throw badRequest("BOT_COMMAND_DESCRIPTION_INVALID");
    }
  }
  ctx.commands.set(commandsKey(params), commands);
  return true;
}

/** The methods above by Bot API name; the server adds getUpdates and the webhook methods. */
export const botMethods = {
  getMe,
  sendMessage,
  editMessageText,
  deleteMessage,
  sendPhoto: (ctx, params) => sendMedia(ctx, params, "photo"),
  sendDocument: (ctx, params) => sendMedia(ctx, params, "document"),
  sendChatAction: chatScopedTrue,
  setMessageReaction: chatScopedTrue,
  getChat: (ctx, params) => ctx.chats.chat(ctx.chats.reachable(chatIdParam(params))),
  answerCallbackQuery: () => true,
  getFile,
  setMyCommands,
  deleteMyCommands: (ctx, params): true => {
    ctx.commands.delete(commandsKey(params));
    return true;
  },
  getMyCommands: (ctx, params) => ctx.commands.get(commandsKey(params)) ?? [],
} satisfies Record<string, (ctx: MethodContext, params: ApiParams) => unknown>;
