/**
 * Chats and their messages as the fake Bot API keeps them: message ids increment per chat and
 * are shared by pushed (user) and bot-sent messages, so replies and edits can reference either.
 */
import { badRequest, forbidden } from "./telegram-errors.js";
import type { TelegramChat, TelegramChatType, TelegramMessage } from "./telegram-types.js";

interface ChatRecord {
  chat: TelegramChat;
  lastMessageId: number;
  messages: Map<number, TelegramMessage>;
}

/** Telegram's id ranges: users are positive, supergroups/channels `-100…`, basic groups other negatives. */
function typeFromId(chatId: number): TelegramChatType {
  if (chatId > 0) return "private";
  return chatId <= -1_000_000_000_000 ? "supergroup" : "group";
}

/** Chats, messages and the blocked / forgotten marks. */
export class ChatStore {
  readonly #chats = new Map<number, ChatRecord>();
  readonly #blocked = new Set<number>();
  readonly #forgotten = new Set<number>();

  /** Sends to this chat answer 403 "Forbidden: bot was blocked by the user". */
  block(chatId: number): void {
    this.#blocked.add(chatId);
  }

  /** Sends to this chat answer 400 "Bad Request: chat not found". */
  forget(chatId: number): void {
    this.#forgotten.add(chatId);
  }

  /** Clears `block` and `forget` marks for the chat. */
  restore(chatId: number): void {
    this.#blocked.delete(chatId);
    this.#forgotten.delete(chatId);
  }

  /**
   * Resolves a `chat_id` parameter to a numeric chat id the bot may write to.
   * @throws BotApiError as Telegram answers for a missing, unknown or blocked chat.
   */
  reachable(chatId: number | string | undefined): number {
    if (chatId === undefined || chatId === "") throw badRequest("chat_id is empty");
    let id: number | undefined;
    if (typeof chatId === "number") id = chatId;
    else {
      const username = chatId.replace(/^@/, "").toLowerCase();
      for (const record of this.#chats.values()) {
        if (record.chat.username?.toLowerCase() === username) id = record.chat.id;
      }
    }
    if (id === undefined || this.#forgotten.has(id)) throw badRequest("chat not found");
    if (this.#blocked.has(id)) {
      throw forbidden(id > 0 ? "bot was blocked by the user" : "bot was kicked from the group chat");
    }
    return id;
  }

  /** Records what a pushed update says about a chat (type, title, forum flag). */
  remember(chat: TelegramChat): TelegramChat {
    const record = this.#record(chat.id);
    record.chat = { ...record.chat, ...chat };
    return { ...record.chat };
  }

  /** The chat object for an id: as last pushed, or derived from the id's range. */
  chat(chatId: number): TelegramChat {
    return { ...this.#record(chatId).chat };
  }

  /** Allocates the next message id in the chat. */
  nextMessageId(chatId: number): number {
    const record = this.#record(chatId);
    record.lastMessageId += 1;
    return record.lastMessageId;
  }

  /** Stores a message (the store keeps its own copy). */
  add(message: TelegramMessage): void {
    const record = this.#record(message.chat.id);
    record.messages.set(message.message_id, structuredClone(message));
    record.lastMessageId = Math.max(record.lastMessageId, message.message_id);
  }

  /** The stored message, live (callers mutate it to edit); undefined when unknown or deleted. */
  get(chatId: number, messageId: number): TelegramMessage | undefined {
    return this.#chats.get(chatId)?.messages.get(messageId);
  }

  /** The latest stored message in the chat sent by `userId`, live; undefined when none. */
  latestFrom(chatId: number, userId: number): TelegramMessage | undefined {
    let latest: TelegramMessage | undefined;
    for (const message of this.#chats.get(chatId)?.messages.values() ?? []) {
      if (message.from?.id === userId && (!latest || message.message_id > latest.message_id))
        latest = message;
    }
    return latest;
  }

  /** Deletes a message; false when it was unknown. */
  delete(chatId: number, messageId: number): boolean {
    return this.#chats.get(chatId)?.messages.delete(messageId) ?? false;
  }

  /** Copies of the chat's current messages (edits applied, deletions gone), by message id. */
  list(chatId: number): TelegramMessage[] {
    const messages = [...(this.#chats.get(chatId)?.messages.values() ?? [])];
    return messages.sort((a, b) => a.message_id - b.message_id).map((m) => structuredClone(m));
  }

  #record(chatId: number): ChatRecord {
    let record = this.#chats.get(chatId);
    if (!record) {
      record = { chat: { id: chatId, type: typeFromId(chatId) }, lastMessageId: 0, messages: new Map() };
      this.#chats.set(chatId, record);
    }
    return record;
  }
}
