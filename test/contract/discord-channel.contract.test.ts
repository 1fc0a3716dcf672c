/**
 * The channel contract against the Discord channel: real discord.js (gateway WebSocket and REST)
 * against the fake Discord server. The "platform" is the fake: it takes a person's DMs, shows
 * what the bot posted, and answers scripted faults.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiscordChannel } from "../../src/channels/discord/discord-channel.js";
import type { InboundSink } from "../../src/channels/types.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { FakeDiscord } from "../fakes/discord-api.js";
import { type ChannelHarness, runChannelContract } from "./channel-contract.js";

const ANN = { id: "400000000000000001", username: "ann" };

async function startDiscordHarness(sink: InboundSink): Promise<ChannelHarness> {
  const fake = new FakeDiscord({ token: "fake-discord-token-for-contract", heartbeatIntervalMs: 300 });
  await fake.start();
  const dmChannel = fake.dmChannelOf(ANN.id);
  const workspaceDir = mkdtempSync(join(tmpdir(), "sy-discord-contract-"));
  const clock = new ManualClock(Date.now());
  const channel = new DiscordChannel({
    accountId: "default",
    token: "fake-discord-token-for-contract",
    apiUrl: fake.apiUrl,
    mentionPatterns: [],
    streaming: "off",
    maxMessageChars: 2000,
    maxLinesPerMessage: 17,
    mediaMaxBytes: 1_048_576,
    workspaceDir,
    commands: [],
    slashCommands: { scope: "off" },
    restRequestsPerSecond: 50,
    maxRateLimitWaitMs: 5_000,
    fastIdentify: true,
    logger: silentLogger(),
    clock,
  });
  await channel.start(sink);
  return {
    channel,
    platform: {
      chat: { chatId: dmChannel, senderId: ANN.id },
      async inject(text) {
        const message = fake.dm({ author: ANN, content: text });
        return { platformMessageId: message.id };
      },
      async settle() {
        // No socket: the fake holds the events for a RESUME. Otherwise frames are handled in
        // order: the client's next heartbeat comes after it handled everything sent before.
        if (fake.connections() === 0) return;
        const heartbeats = () => fake.gatewayFrames().filter((f) => f.op === 1).length;
        const seen = heartbeats();
        await fake
          .waitFor(() => heartbeats() > seen || fake.connections() === 0, 2_000)
          .catch(() => undefined);
      },
      advanceClock: (ms) => clock.advance(ms),
      sentTexts: (chatId) => fake.botMessages(chatId).map((m) => m.content),
      messageText: (chatId, id) => fake.messages(chatId).find((m) => m.id === id)?.content,
      typingCount: (chatId) => fake.typingCount(chatId),
      failNextSend(failure) {
        fake.failNext(
          { method: "POST", route: "/channels/:id/messages" },
          failure.type === "rate_limit"
            ? { status: 429, retryAfterSec: failure.retryAfterSeconds, bucketHeaders: false }
            : { status: 403, code: 50001, message: "Missing Access" },
        );
      },
      read(chunk) {
        const fences = chunk.split("\n").filter((l) => /^\s*```/.test(l)).length;
        return { text: chunk, codeBlocksClosed: fences % 2 === 0 };
      },
    },
    async close() {
      await channel.stop();
      await fake.close();
      rmSync(workspaceDir, { recursive: true, force: true });
    },
  };
}

runChannelContract("discord", startDiscordHarness);
