/**
 * Builders for the updates a test pushes into the fake Bot API: incoming messages shaped as
 * Telegram sends them (entities for `/commands` and `@mentions`, reply snapshots, topics).
 */
import type { ChatStore } from "./telegram-chats.js";
import type {
  FakeUserInput,
  PushEditInput,
  PushMessageInput,
  TelegramMessage,
  TelegramMessageEntity,
  TelegramUser,
} from "./telegram-types.js";

/** Sender of pushed group messages when the test names none. */
export const DEFAULT_GROUP_SENDER_ID = 1000;

/** A Bot API user from the test's shorthand. */
export function toUser(input: FakeUserInput): TelegramUser {
  return {
    id: input.id,
    is_bot: input.is_bot ?? false,
    first_name: input.first_name,
    ...(input.username !== undefined ? { username: input.username } : {}),
  };
}

/**
 * The entities Telegram's clients attach to typed text: `bot_command` for a leading
 * `/command[@bot]` and `mention` for each `@username` (5–32 characters). Offsets are UTF-16.
 */
export function detectEntities(text: string): TelegramMessageEntity[] {
  const entities: TelegramMessageEntity[] = [];
  const command = /^\/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?/.exec(text);
  if (command) entities.push({ type: "bot_command", offset: 0, length: command[0].length });
  for (const match of text.matchAll(/(^|[^A-Za-z0-9_/@])(@[A-Za-z][A-Za-z0-9_]{4,31})(?![A-Za-z0-9_])/g)) {
    const offset = (match.index ?? 0) + (match[1]?.length ?? 0);
    entities.push({ type: "mention", offset, length: match[2]?.length ?? 0 });
  }
  return entities;
}

/** A copy of a stored message fit to be `reply_to_message` (Telegram does not nest replies). */
export function replySnapshot(chats: ChatStore, chatId: number, messageId: number): TelegramMessage {
  const target = chats.get(chatId, messageId);
  if (!target) return { message_id: messageId, date: 0, chat: chats.chat(chatId) };
  const { reply_to_message: _nested, ...rest } = structuredClone(target);
  return rest;
}

function defaultSender(chatId: number, isPrivate: boolean): FakeUserInput {
  return { id: isPrivate ? chatId : DEFAULT_GROUP_SENDER_ID, first_name: "Tester", username: "tester" };
}

/** Builds, stores and returns the message a user (or channel) sends. */
export function buildIncomingMessage(
  chats: ChatStore,
  input: PushMessageInput,
  nowSeconds: number,
): TelegramMessage {
  const isPrivate = input.chat.type === "private";
  const from = toUser(input.from ?? defaultSender(input.chat.id, isPrivate));
  const chat = chats.remember({
    id: input.chat.id,
    type: input.chat.type,
    ...(input.chat.title !== undefined ? { title: input.chat.title } : {}),
    ...(input.chat.username !== undefined ? { username: input.chat.username } : {}),
    ...(input.chat.is_forum !== undefined ? { is_forum: input.chat.is_forum } : {}),
    ...(isPrivate ? { first_name: from.first_name } : {}),
    ...(isPrivate && from.username !== undefined ? { username: from.username } : {}),
  });
  const message: TelegramMessage = {
    message_id: chats.nextMessageId(chat.id),
    ...(input.chat.type === "channel" ? {} : { from }),
    chat,
    date: nowSeconds,
    ...(input.messageThreadId !== undefined ? { message_thread_id: input.messageThreadId } : {}),
    ...(input.isTopicMessage ? { is_topic_message: true } : {}),
  };
  if (input.replyToMessageId !== undefined) {
    message.reply_to_message = replySnapshot(chats, chat.id, input.replyToMessageId);
  }
  if (input.text !== undefined) {
    message.text = input.text;
    const entities = input.entities ?? detectEntities(input.text);
    if (entities.length > 0) message.entities = entities;
  }
  if (input.caption !== undefined) {
    message.caption = input.caption;
    const entities = input.text === undefined ? (input.entities ?? detectEntities(input.caption)) : [];
    if (entities.length > 0) message.caption_entities = entities;
  }
  if (input.photo) message.photo = structuredClone(input.photo);
  if (input.document) message.document = { ...input.document };
  if (input.voice) message.voice = { ...input.voice };
  if (input.newChatMembers) message.new_chat_members = input.newChatMembers.map(toUser);
  chats.add(message);
  return structuredClone(message);
}

/**
 * Applies a user's edit to a stored message (see {@link PushEditInput} for which one) and
 * returns a copy with `edit_date` set.
 */
export function applyIncomingEdit(
  chats: ChatStore,
  edit: PushEditInput,
  nowSeconds: number,
): TelegramMessage {
  const chatId = edit.chat?.id ?? edit.chatId;
  if (chatId === undefined) throw new Error("pushEditedMessage: give chat or chatId");
  const chat = edit.chat ?? chats.chat(chatId);
  const from = edit.from ?? defaultSender(chatId, chat.type === "private");
  let message =
    edit.messageId !== undefined ? chats.get(chatId, edit.messageId) : chats.latestFrom(chatId, from.id);
  if (!message && edit.messageId !== undefined) {
    throw new Error(`pushEditedMessage: no message ${edit.messageId} in chat ${chatId}`);
  }
  if (!message) {
    const { message_id } = buildIncomingMessage(
      chats,
      { chat, from, text: edit.text, caption: edit.caption },
      nowSeconds,
    );
    message = chats.get(chatId, message_id) as TelegramMessage;
  }
  if (edit.text !== undefined) {
    message.text = edit.text;
    const entities = edit.entities ?? detectEntities(edit.text);
    if (entities.length > 0) message.entities = entities;
    else delete message.entities;
  }
  if (edit.caption !== undefined) message.caption = edit.caption;
  message.edit_date = nowSeconds;
  return structuredClone(message);
}
