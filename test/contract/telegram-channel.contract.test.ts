/**
 * The channel contract against the Telegram channel: real grammY (long polling) against the
 * fake Bot API server. The "platform" is the fake: it takes pushed messages, shows what the
 * bot sent, and answers scripted faults.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TelegramChannel } from "../../src/channels/telegram/telegram-channel.js";
import type { InboundSink } from "../../src/channels/types.js";
import { silentLogger } from "../../src/util/logger.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { parseTelegramHtml } from "../fakes/telegram-html.js";
import { type ChannelHarness, runChannelContract } from "./channel-contract.js";

const TOKEN = "123456:AAcontract-token-for-the-fake-bot-api";
const BOT = { token: TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" };
const ANN = { id: 42, first_name: "Ann" };
/** How long `settle` waits for the channel to confirm an update before concluding nobody listens. */
const SETTLE_MS = 300;

async function startTelegramHarness(sink: InboundSink): Promise<ChannelHarness> {
  const tg = new FakeTelegramBotApi();
  await tg.start();
  tg.addBot(BOT);
  const workspaceDir = mkdtempSync(join(tmpdir(), "sy-tg-contract-"));
  const channel = new TelegramChannel({
    accountId: "default",
    token: TOKEN,
    apiRoot: tg.apiRoot,
    mode: "polling",
    mentionPatterns: [],
    streaming: "off",
    mediaMaxBytes: 1_048_576,
    workspaceDir,
    pollTimeoutSeconds: 5,
    commands: [],
    logger: silentLogger(),
  });
  await channel.start(sink);
  let lastUpdateId = 0;

  return {
    channel,
    platform: {
      chat: { chatId: String(ANN.id), senderId: String(ANN.id) },
      async inject(text) {
        const pushed = tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text });
        lastUpdateId = pushed.updateId;
        // Telegram message ids are per chat, so the channel qualifies them with the chat id.
        return { platformMessageId: `${ANN.id}:${pushed.messageId}` };
      },
      async settle() {
        // A polling channel confirms an update (polls with a higher offset) only after handing
        // it to the sink; no such poll within SETTLE_MS means nobody is listening.
        const updateId = lastUpdateId;
        await tg
          .waitFor("getUpdates", (c) => Number(c.params.offset) > updateId, SETTLE_MS)
          .catch(() => undefined);
      },
      sentTexts: (chatId) => tg.sentMessages({ chatId: Number(chatId) }).map((m) => m.text ?? ""),
      messageText: (chatId, id) =>
        tg.messagesInChat(Number(chatId)).find((m) => m.message_id === Number(id))?.text,
      typingCount: (chatId) =>
        tg.calls.filter(
          (c) =>
            c.method === "sendChatAction" &&
            String(c.params.chat_id) === chatId &&
            c.params.action === "typing",
        ).length,
      failNextSend(failure) {
        tg.injectFault(
          failure.type === "rate_limit"
            ? {
                method: "sendMessage",
                errorCode: 429,
                description: `Too Many Requests: retry after ${failure.retryAfterSeconds}`,
                parameters: { retry_after: failure.retryAfterSeconds },
              }
            : {
                method: "sendMessage",
                errorCode: 403,
                description: "Forbidden: bot was blocked by the user",
              },
        );
      },
      read(chunk) {
        // What Telegram shows; it rejects (throws on) any tag left open, so parsing is the check.
        const { text } = parseTelegramHtml(chunk);
        const opened = chunk.split("<pre").length - 1;
        const closed = chunk.split("</pre>").length - 1;
        return { text, codeBlocksClosed: opened === closed };
      },
    },
    async close() {
      await channel.stop();
      await tg.close();
      rmSync(workspaceDir, { recursive: true, force: true });
    },
  };
}

runChannelContract("telegram", startTelegramHarness);
