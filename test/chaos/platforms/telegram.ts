/**
 * Telegram for the chaos run: FakeTelegramBotApi with one bot and C private chats (users 1001…),
 * long polling. The bot's writes are read from the fake's call log as it records them
 * (sendMessage, editMessageText, deleteMessage); a reply is held with an `after` hold, so
 * Telegram has stored it while the gateway waits for the answer. Unconfirmed updates are
 * served again on the next getUpdates, as on Telegram.
 */
import type { MethodHold, TelegramMessage } from "../../fakes/telegram-bot-api.js";
import { FakeTelegramBotApi } from "../../fakes/telegram-bot-api.js";
import type { BotWrite, ChatPlatform, ChatView, HeldReply, KillMoment } from "../types.js";

const TOKEN = "700700:AAchaos-run-token-for-the-fake-api-000";
const BOT_ID = 700700;
const FIRST_USER = 1000;

/** Creates the Telegram platform; `now` is the driver's clock. */
export function telegramPlatform(now: () => number): ChatPlatform {
  const fake = new FakeTelegramBotApi();
  const listeners = new Set<(write: BotWrite) => void>();
  /** When each message was first posted, by `chat:id`. */
  const postedAt = new Map<string, number>();
  let chats = 0;

  const chatOf = (chatId: unknown): number => Number(chatId) - FIRST_USER;
  const tell = (write: BotWrite) => {
    if (write.kind === "post") postedAt.set(`${write.chat}:${write.messageId}`, write.atMs);
    for (const listener of [...listeners]) listener(write);
  };

  return {
    channel: "telegram",
    ownMoments: [] as KillMoment[],
    async start(count) {
      chats = count;
      await fake.start();
      fake.addBot({ token: TOKEN, id: BOT_ID, username: "chaos_bot" });
      fake.onCall((call, result) => {
        if (result === undefined) return; // failed: nothing stored
        const atMs = now();
        if (call.method === "sendMessage" || call.method === "editMessageText") {
          const message = result as TelegramMessage;
          tell({
            chat: chatOf(message.chat.id),
            messageId: String(message.message_id),
            kind: call.method === "sendMessage" ? "post" : "edit",
            text: message.text ?? "",
            atMs,
          });
        } else if (call.method === "deleteMessage") {
          const { chat_id: chatId, message_id: messageId } = call.params;
          tell({ chat: chatOf(chatId), messageId: String(messageId), kind: "delete", text: "", atMs });
        }
      });
    },
    configLines: () => [
      "  telegram:",
      `    token: "${TOKEN}"`,
      `    apiRoot: ${fake.apiRoot}`,
      `    allowFrom: [${Array.from({ length: chats }, (_, i) => FIRST_USER + i + 1).join(", ")}]`,
      "    streaming: edit",
    ],
    send(chat, text) {
      const id = FIRST_USER + chat;
      fake.pushMessage(TOKEN, {
        chat: { id, type: "private" },
        from: { id, first_name: `user${chat}` },
        text,
      });
    },
    onWrite(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    holdNextReply(test): HeldReply {
      const when = (params: Record<string, unknown>) => typeof params.text === "string" && test(params.text);
      const holds: MethodHold[] = [
        fake.holdMethod("sendMessage", { after: true, times: 1, token: TOKEN, when }),
        fake.holdMethod("editMessageText", { after: true, times: 1, token: TOKEN, when }),
      ];
      return {
        caught: () => holds.some((h) => h.held > 0),
        disarm: () => {
          for (const h of holds) h.release();
        },
      };
    },
    spawned() {},
    watchOwn: (moment) => Promise.reject(new Error(`telegram has no moment ${moment}`)),
    view(): ChatView[] {
      return Array.from({ length: chats }, (_, i) => {
        const chat = i + 1;
        const messages = fake
          .messagesInChat(FIRST_USER + chat)
          .filter((m) => m.from?.id === BOT_ID)
          .sort((a, b) => a.message_id - b.message_id)
          .map((m) => {
            const posted = postedAt.get(`${chat}:${m.message_id}`);
            return {
              messageId: String(m.message_id),
              text: m.text ?? "",
              storeKey: `${FIRST_USER + chat}:${m.message_id}`,
              ...(posted !== undefined ? { postedAtMs: posted } : {}),
            };
          });
        return { chat, messages };
      });
    },
    close: () => fake.close(),
  };
}
