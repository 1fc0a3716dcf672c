/**
 * The channel contract against the Slack channel: real Bolt (Socket Mode) against the fake Slack
 * server. The "platform" is the fake: it takes a person's messages, shows what the bot posted,
 * and answers scripted faults.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SlackChannel } from "../../src/channels/slack/slack-channel.js";
import { mrkdwnToText } from "../../src/channels/slack/format.js";
import type { InboundSink } from "../../src/channels/types.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { FakeSlack } from "../fakes/slack-api.js";
import { until } from "../helpers/until.js";
import { type ChannelHarness, runChannelContract } from "./channel-contract.js";

/** How long `settle` waits for the channel to ack an envelope before concluding nobody listens. */
const SETTLE_MS = 300;

async function startSlackHarness(sink: InboundSink): Promise<ChannelHarness> {
  const fake = new FakeSlack();
  await fake.start();
  fake.addUser({ id: "UANN", name: "ann", realName: "Ann" });
  fake.addChannel({ id: "D1", name: "", kind: "im", user: "UANN" });
  const workspaceDir = mkdtempSync(join(tmpdir(), "sy-slack-contract-"));
  // The channel's clock, for its rate-limit pauses; sockets and HTTP keep real time.
  const clock = new ManualClock(Date.now());
  const channel = new SlackChannel({
    accountId: "default",
    botToken: fake.botToken,
    appToken: fake.appToken,
    mode: "socket",
    apiUrl: fake.apiUrl,
    slashCommand: "/switchyard",
    mentionPatterns: [],
    streaming: "off",
    workingStatus: "auto",
    workingReaction: "hourglass_flowing_sand",
    maxMessageChars: 4000,
    mediaMaxBytes: 1_048_576,
    workspaceDir,
    commands: [],
    clientPingTimeoutMs: 200,
    logger: silentLogger(),
    clock,
  });
  await channel.start(sink);
  let lastEnvelope: string | undefined;
  return {
    channel,
    platform: {
      chat: { chatId: "D1", senderId: "UANN" },
      async inject(text) {
        const sending = fake.userMessage({ channel: "D1", user: "UANN", text });
        const ts = fake.history("D1").at(-1)?.ts;
        sending.catch(() => undefined);
        // Written to the socket, or held by Slack for the next connection (nobody connected).
        let held = false;
        const noSocket = until(() => fake.connections() === 0, "no socket", 2_000).then(
          () => {
            held = true;
          },
          () => new Promise<never>(() => {}), // connected all along: `sending` wins the race
        );
        const sent = await Promise.race([sending, noSocket]);
        lastEnvelope = !held && sent ? sent.envelopeId : undefined;
        return { platformMessageId: `D1:${ts}` };
      },
      advanceClock: (ms) => clock.advance(ms),
      async settle() {
        // The channel acks an envelope only once it is committed; no ack means nobody listens.
        if (lastEnvelope) await fake.waitForAck(lastEnvelope, SETTLE_MS).catch(() => undefined);
      },
      sentTexts: (chatId) => fake.posted(chatId).map((m) => m.text),
      messageText: (chatId, id) => fake.history(chatId).find((m) => `${chatId}:${m.ts}` === id)?.text,
      typingCount: (chatId) =>
        fake
          .calls()
          .filter(
            (c) =>
              (c.method === "reactions.add" || c.method === "assistant.threads.setStatus") &&
              (c.params.channel === chatId || c.params.channel_id === chatId),
          ).length,
      failNextSend(failure) {
        fake.failNext(
          "chat.postMessage",
          failure.type === "rate_limit"
            ? { status: 429, retryAfter: failure.retryAfterSeconds }
            : { error: "is_archived" },
        );
      },
      read(chunk) {
        const fences = chunk.split("\n").filter((l) => l.trim() === "```").length;
        return { text: mrkdwnToText(chunk), codeBlocksClosed: fences % 2 === 0 };
      },
    },
    async close() {
      await channel.stop();
      await fake.close();
      rmSync(workspaceDir, { recursive: true, force: true });
    },
  };
}

runChannelContract("slack", startSlackHarness);
