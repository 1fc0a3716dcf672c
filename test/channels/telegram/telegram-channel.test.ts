/**
 * The Telegram adapter on its own: real grammY against the fake Bot API, delivering to a
 * recording sink. Covers what the gateway cannot steer: a bad update is skipped while a commit
 * failure is retried, fatal getUpdates errors, webhook refusals, streamed downloads with caps and
 * time limits, and the streaming preview's ordering, threading and retries.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  TelegramChannel,
  type TelegramChannelOptions,
} from "../../../src/channels/telegram/telegram-channel.js";
import type { AcceptResult, InboundMessage, InboundSink } from "../../../src/channels/types.js";
import { ChannelSendError, SinkUnavailableError } from "../../../src/channels/errors.js";
import { commandList } from "../../../src/gateway/commands.js";
import { ManualClock } from "../../../src/util/clock.js";
import { createLogger } from "../../../src/util/logger.js";
import { FakeTelegramBotApi } from "../../fakes/telegram-bot-api.js";
import { until, untilAdvancing } from "../../helpers/until.js";

const TOKEN = "777001:AAchannel-test-token-for-the-fake-api";
const BOT = { token: TOKEN, id: 777001, username: "unit_bot", firstName: "Unit" };
const ANN = { id: 42, first_name: "Ann" };
const BOB = { id: 43, first_name: "Bob" };
const FORUM = { id: -1001, type: "supergroup" as const, title: "Team", is_forum: true };

/** A sink that records what it is given and fails on demand. */
class RecordingSink implements InboundSink {
  readonly accepted: InboundMessage[] = [];
  readonly attempts: InboundMessage[] = [];
  /** Return an error to throw it for this attempt (`n` counts attempts of that message, from 1). */
  fail: (message: InboundMessage, n: number) => Error | undefined = () => undefined;

  async accept(message: InboundMessage): Promise<AcceptResult> {
    this.attempts.push(message);
    const n = this.attempts.filter((m) => m.platformMessageId === message.platformMessageId).length;
    const error = this.fail(message, n);
    if (error) throw error;
    this.accepted.push(message);
    return { status: "accepted", inboxId: this.accepted.length, sessionKey: "test" };
  }
}

interface LogLine {
  level: number;
  msg: string;
  updateId?: number;
  [key: string]: unknown;
}

let tg: FakeTelegramBotApi | undefined;
let channel: TelegramChannel | undefined;
let workspaceDir: string | undefined;

afterEach(async () => {
  await channel?.stop();
  await tg?.close();
  if (workspaceDir) rmSync(workspaceDir, { recursive: true, force: true });
  channel = undefined;
  tg = undefined;
  workspaceDir = undefined;
});

/**
 * The channel and the fake on one ManualClock: the channel's waits (backoffs, conflict waits,
 * download limits, preview edits) pass only when a test moves it; the fake stamps calls with it.
 */
async function setup(options: Partial<TelegramChannelOptions> = {}) {
  const clock = new ManualClock();
  const fake = new FakeTelegramBotApi({ now: () => clock.now() });
  await fake.start();
  fake.addBot(BOT);
  tg = fake;
  workspaceDir = mkdtempSync(join(tmpdir(), "sy-tg-unit-"));
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: "debug",
    format: "json",
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  });
  const sink = new RecordingSink();
  const made = new TelegramChannel({
    accountId: "default",
    token: TOKEN,
    apiRoot: fake.apiRoot,
    mode: "polling",
    mentionPatterns: [],
    streaming: "off",
    mediaMaxBytes: 1_048_576,
    workspaceDir,
    pollTimeoutSeconds: 5,
    commands: commandList(),
    logger,
    clock,
    random: () => 1,
    ...options,
  });
  channel = made;
  return { tg: fake, channel: made, sink, logs, workspaceDir, clock };
}

describe("Telegram updates that fail", () => {
  it("skips an update its own code cannot map after a few attempts, logging its id, and keeps going", async () => {
    const { tg, channel, sink, logs, clock } = await setup();
    // A message without a chat: mapping it throws (Telegram never sends this; a bug might).
    const bad = tg.pushUpdate(TOKEN, {
      message: { message_id: 1, date: 0, from: { ...ANN, is_bot: false }, text: "?" },
    });
    const good = tg.pushMessage(TOKEN, { chat: { id: BOB.id, type: "private" }, from: BOB, text: "hello" });
    const start = clock.now();
    await channel.start(sink);
    await until(() => sink.accepted.length === 1, "the good update");
    expect(sink.accepted[0]?.text).toBe("hello");
    await untilAdvancing(
      clock,
      () => logs.some((l) => l.updateId === bad && /giving up/.test(l.msg)),
      "the skip",
    );
    const skipped = logs.find((l) => l.updateId === bad && /giving up/.test(l.msg));
    expect(skipped?.level).toBe(50);
    expect(skipped?.attempts).toBe(3);
    expect(clock.now() - start).toBe(500 + 1_000); // two backoffs (retryBaseMs 500, doubling)
    await tg.waitFor("getUpdates", (c) => Number(c.params.offset) > good.updateId);
    expect(tg.pendingUpdates(TOKEN)).toBe(0);
  });

  it("skips an update the sink keeps failing on for a reason other than the commit", async () => {
    const { tg, channel, sink, logs, clock } = await setup();
    sink.fail = (m) => (m.text === "poison" ? new TypeError("a bug in routing") : undefined);
    const bad = tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "poison" });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "next" });
    await channel.start(sink);
    await untilAdvancing(clock, () => sink.accepted.length === 1, "the next update");
    expect(sink.accepted.map((m) => m.text)).toEqual(["next"]);
    expect(sink.attempts.filter((m) => m.text === "poison")).toHaveLength(3);
    expect(logs.some((l) => l.updateId === bad.updateId && l.level === 50)).toBe(true);
  });

  it("retries a failed commit until it succeeds, leaving the update unconfirmed meanwhile", async () => {
    const { tg, channel, sink, clock } = await setup();
    const pendingWhileFailing: number[] = [];
    sink.fail = (_m, n) => {
      if (n > 5) return undefined;
      pendingWhileFailing.push(tg.pendingUpdates(TOKEN));
      // More failures than the skip limit: a commit failure is never given up.
      // The gateway reports a failing store as SinkUnavailableError, like a drain.
      return n === 5
        ? new SinkUnavailableError("draining", 10)
        : new SinkUnavailableError("the message could not be saved: the database is locked", 10);
    };
    const pushed = tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "keep me",
    });
    await channel.start(sink);
    await untilAdvancing(clock, () => sink.accepted.length === 1, "the commit");
    expect(pendingWhileFailing).toEqual([1, 1, 1, 1, 1]);
    expect(sink.attempts).toHaveLength(6);
    await tg.waitFor("getUpdates", (c) => Number(c.params.offset) > pushed.updateId);
    expect(sink.accepted).toHaveLength(1);
  });
});

describe("Telegram polling errors", () => {
  it("stops polling on 401 with an error naming the account", async () => {
    const { tg, channel, sink, logs } = await setup();
    tg.injectFault({ method: "getUpdates", errorCode: 401, description: "Unauthorized" });
    await channel.start(sink);
    await until(
      () => logs.some((l) => l.level === 50 && /rejected the bot token/.test(l.msg)),
      "the 401 log",
    );
    const line = logs.find((l) => /rejected the bot token/.test(l.msg));
    expect(line?.msg).toContain('telegram account "default" (@unit_bot)');
    expect(line?.msg).toContain("polling stopped");
    await until(() => channel.health().state === "stopped", "health stopped");
    expect(channel.health().detail).toMatch(/^Telegram rejected the bot token; polling stopped/);
    await channel.stop(); // returns: the loop has ended
    expect(tg.calls.filter((c) => c.method === "getUpdates")).toHaveLength(1);
  });

  it("backs off long on 409 instead of spinning, then resumes", async () => {
    const { tg, channel, sink, logs, clock } = await setup({ conflictBackoffMs: 30_000 });
    tg.injectFault({
      method: "getUpdates",
      errorCode: 409,
      description:
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      times: 2,
    });
    const conflicts = () =>
      logs.filter((l) => l.level === 50 && /Another process is polling this bot/.test(l.msg)).length;
    const polls = () => tg.calls.filter((c) => c.method === "getUpdates");
    await channel.start(sink);
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "after the conflict" });
    for (let n = 1; n <= 2; n++) {
      await until(() => conflicts() === n && clock.pendingTimers === 1, `conflict ${n} and its wait`);
      clock.advance(29_999);
      expect(polls()).toHaveLength(n); // still waiting: no poll in between
      clock.advance(1);
    }
    await until(() => sink.accepted.length === 1, "the message after the conflict");
    const [first, second, third] = polls();
    expect((second?.timeMs ?? 0) - (first?.timeMs ?? 0)).toBe(30_000);
    expect((third?.timeMs ?? 0) - (second?.timeMs ?? 0)).toBe(30_000);
    expect(conflicts()).toBe(2);
  });

  it("polls only while its lease on the bot is valid: a lapsed lease (a stall) stops getUpdates until it is valid again", async () => {
    let valid = true;
    const asked: string[] = [];
    const { tg, channel, sink, clock } = await setup({
      pollTimeoutSeconds: 0,
      leaseRemainingMs: (name) => {
        asked.push(name);
        return valid ? 60_000 : 0;
      },
    });
    const polls = () => tg.calls.filter((c) => c.method === "getUpdates").length;
    await channel.start(sink);
    expect(channel.exclusive).toBe("channel:telegram:default");
    await until(() => polls() >= 2, "polling");
    valid = false;
    const before = polls();
    // The check comes before each poll: at most the poll already on its way goes out.
    await until(() => clock.pendingTimers > 0, "the poller waiting for its lease");
    for (let i = 0; i < 5; i++) clock.advance(250);
    expect(polls()).toBeLessThanOrEqual(before + 1);
    const stalled = polls();
    for (let i = 0; i < 5; i++) clock.advance(250);
    expect(polls()).toBe(stalled);
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "after the stall" });
    valid = true;
    clock.advance(250);
    await until(() => sink.accepted.length === 1, "polling again once the lease is valid");
    expect(new Set(asked)).toEqual(new Set(["channel:telegram:default"]));
  });

  it("under a lease, a long poll ends before the lease would, and a 409 (a poller whose lease lapsed) is waited out for 2 s", async () => {
    const { tg, channel, sink, clock } = await setup({
      pollTimeoutSeconds: 30,
      leaseRemainingMs: () => 10_500,
    });
    tg.injectFault({
      method: "getUpdates",
      errorCode: 409,
      description:
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      times: 1,
    });
    const polls = () => tg.calls.filter((c) => c.method === "getUpdates");
    await channel.start(sink);
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "after the conflict" });
    await until(() => polls().length === 1 && clock.pendingTimers === 1, "the conflict and its wait");
    clock.advance(2_000);
    await until(() => sink.accepted.length === 1, "the message after the conflict");
    const [first, second] = polls();
    expect((second?.timeMs ?? 0) - (first?.timeMs ?? 0)).toBe(2_000);
    // 10.5 s of lease left: the poll is held 9 s at most, ending a second before the lease would.
    expect(second?.params.timeout).toBe(9);
  });

  it("reports a webhook Telegram refuses (400) as a configuration problem, without retrying", async () => {
    const { tg, sink } = await setup();
    const routes: string[] = [];
    const hooked = new TelegramChannel({
      accountId: "hooks",
      token: TOKEN,
      apiRoot: tg.apiRoot,
      mode: "webhook",
      webhook: { url: "ftp://example.com/hook", secret: "s3cret", path: "/telegram/hooks" },
      server: { route: (_method, path) => void routes.push(path), maxBodyBytes: 1_000_000 },
      mentionPatterns: [],
      streaming: "off",
      mediaMaxBytes: 1_000,
      workspaceDir: workspaceDir as string,
      commands: [],
      logger: createLogger({ level: "silent" }),
    });
    // A webhook is every node's (no lease): Telegram posts each update to one URL.
    expect(hooked.exclusive).toBeUndefined();
    await expect(hooked.start(sink)).rejects.toThrow(
      /telegram account hooks: Telegram refused the webhook \(400 Bad Request: bad webhook.*check channels\.telegram\.webhook/,
    );
    await hooked.stop();
    expect(routes).toEqual(["/telegram/hooks"]);
    expect(tg.calls.filter((c) => c.method === "setWebhook")).toHaveLength(1);
  });
});

describe("Telegram attachments", () => {
  it("streams a file of unknown size and stops at the cap, keeping nothing, with a note to tell the user", async () => {
    const { tg, channel, sink, workspaceDir } = await setup({ mediaMaxBytes: 10_000 });
    tg.addFile(TOKEN, {
      fileId: "unsized",
      content: Buffer.alloc(200_000, 7),
      filePath: "documents/big.bin",
      reportSize: false,
    });
    tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      caption: "here",
      document: { file_id: "unsized", file_unique_id: "u", file_name: "big.bin" }, // no file_size
    });
    await channel.start(sink);
    await until(() => sink.accepted.length === 1, "the message");
    const message = sink.accepted[0] as InboundMessage;
    expect(message.attachments).toEqual([]);
    expect(message.text).toMatch(
      /^here\n\[attachment big\.bin not downloaded: it is over the 9\.8 KB limit \(channels\.telegram\.mediaMaxMb\)\. Tell the user the file was too big to read\.\]$/,
    );
    const dir = join(workspaceDir, "inbox/telegram/42");
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]); // no partial file left
  });

  it("saves a forum topic's attachment in the topic's own folder", async () => {
    const { tg, channel, sink, workspaceDir } = await setup();
    tg.addFile(TOKEN, { fileId: "notes", content: Buffer.from("topic notes"), filePath: "documents/n.txt" });
    tg.pushMessage(TOKEN, {
      chat: FORUM,
      from: ANN,
      caption: "@unit_bot read this",
      messageThreadId: 7,
      isTopicMessage: true,
      document: { file_id: "notes", file_unique_id: "n", file_name: "notes.txt", file_size: 11 },
    });
    await channel.start(sink);
    await until(() => sink.accepted.length === 1, "the message");
    const [attachment] = sink.accepted[0]?.attachments ?? [];
    expect(attachment?.path).toMatch(/^inbox\/telegram\/-1001\/7\/\d+-notes\.txt$/);
    expect(readFileSync(join(workspaceDir, attachment?.path ?? ""), "utf8")).toBe("topic notes");
  });

  it("gives up a download that takes too long, while other chats' messages go through", async () => {
    const { tg, channel, sink, clock } = await setup({ downloadTimeoutMs: 300 });
    tg.addFile(TOKEN, { fileId: "slow", content: Buffer.from("slow"), filePath: "documents/slow.txt" });
    const hold = tg.holdMethod("getFile");
    tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      document: { file_id: "slow", file_unique_id: "s", file_name: "slow.txt", file_size: 4 },
    });
    tg.pushMessage(TOKEN, { chat: { id: BOB.id, type: "private" }, from: BOB, text: "not waiting" });
    await channel.start(sink);
    await until(() => sink.accepted.length === 1, "Bob's message");
    await hold.reached();
    clock.advance(299);
    expect(sink.accepted).toHaveLength(1); // Ann's download still runs
    clock.advance(1);
    await until(() => sink.accepted.length === 2, "Ann's message, with a note");
    hold.release();
    // Bob's message (a later update, another chat) did not wait for Ann's download.
    expect(sink.accepted.map((m) => m.senderName)).toEqual(["Bob", "Ann"]);
    expect(sink.accepted[1]?.text).toBe(
      "[attachment slow.txt could not be downloaded: it took longer than 300 ms]",
    );
  });
});

describe("Telegram streaming previews", () => {
  async function previewSetup() {
    const s = await setup({ streaming: "edit", previewEditIntervalMs: 30 });
    await s.channel.start(s.sink);
    const one = s.tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "one" });
    const two = s.tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "two" });
    await until(() => s.sink.accepted.length === 2, "the two messages");
    const turn = (m: { messageId: number }) => ({
      channel: "telegram" as const,
      accountId: "default",
      chatId: String(ANN.id),
      replyTo: `${ANN.id}:${m.messageId}`,
    });
    return { ...s, one: turn(one), two: turn(two) };
  }
  const reply = (target: { chatId: string; replyTo: string }, text: string) => ({
    channel: "telegram" as const,
    accountId: "default",
    ...target,
    text,
    idempotencyKey: `k-${target.replyTo}`,
  });
  const sentPreviews = (fake: FakeTelegramBotApi) =>
    fake.calls.filter((c) => c.method === "sendMessage" && c.params.parse_mode === undefined);

  it("never lets a partial edit land after the final text", async () => {
    const { tg, channel, one, clock } = await previewSetup();
    channel.streamDelta(one, "Hel");
    await tg.waitFor("sendMessage");
    const hold = tg.holdMethod("editMessageText", { times: 1 });
    channel.streamDelta(one, "lo wor");
    await until(() => clock.pendingTimers === 1, "the preview's edit timer");
    clock.advance(30); // the edit interval
    await hold.reached(); // the timer's partial edit is in flight
    const sending = channel.send(reply(one, "<b>Hello world</b>"));
    hold.release();
    const receipt = await sending;
    const edits = tg.calls.filter((c) => c.method === "editMessageText").map((c) => c.params.text);
    expect(edits).toEqual(["Hello wor", "<b>Hello world</b>"]);
    const shown = tg.messagesInChat(ANN.id).find((m) => String(m.message_id) === receipt.platformMessageId);
    expect(shown?.text).toBe("Hello world");
  });

  it("drops the text of a failed model call from the preview, editing the same message", async () => {
    const { tg, channel, one, clock } = await previewSetup();
    channel.streamDelta(one, "Hel");
    await tg.waitFor("sendMessage");
    channel.streamDelta(one, "lo wor");
    await until(() => clock.pendingTimers === 1, "the preview's edit timer");
    await clock.advanceAsync(30);
    await until(() => tg.calls.some((c) => c.method === "editMessageText"), "the partial edit");
    channel.streamReset(one, 9); // the call died; the retry streams from the start
    channel.streamDelta(one, "Goodbye");
    await until(() => clock.pendingTimers === 1, "the next edit timer");
    await clock.advanceAsync(30);
    await until(() => tg.calls.filter((c) => c.method === "editMessageText").length === 2, "the edit");
    const receipt = await channel.send(reply(one, "Goodbye world"));
    const edits = tg.calls.filter((c) => c.method === "editMessageText").map((c) => c.params.text);
    expect(edits).toEqual(["Hello wor", "Goodbye", "Goodbye world"]);
    expect(tg.sentMessages({ chatId: ANN.id })).toHaveLength(1); // one preview, edited throughout
    const shown = tg.messagesInChat(ANN.id).find((m) => String(m.message_id) === receipt.platformMessageId);
    expect(shown?.text).toBe("Goodbye world");
  });

  it("keeps one preview per turn, each replying to the message its turn answers", async () => {
    const { tg, channel, one, two } = await previewSetup();
    channel.streamDelta(one, "first ");
    await tg.waitFor("sendMessage");
    channel.streamDelta(two, "second ");
    channel.streamDelta(one, "answer");
    await until(() => sentPreviews(tg).length === 2, "two previews");
    const replyIds = sentPreviews(tg).map(
      (c) => (c.params.reply_parameters as { message_id: number }).message_id,
    );
    expect(replyIds).toEqual([Number(one.replyTo.split(":")[1]), Number(two.replyTo.split(":")[1])]);
    const first = await channel.send(reply(one, "First answer."));
    const second = await channel.send(reply(two, "Second answer."));
    const text = (id: string) => tg.messagesInChat(ANN.id).find((m) => String(m.message_id) === id)?.text;
    expect([text(first.platformMessageId), text(second.platformMessageId)]).toEqual([
      "First answer.",
      "Second answer.",
    ]);
    expect(tg.sentMessages({ chatId: ANN.id })).toHaveLength(2); // the previews, nothing else
  });

  it("retries a final edit refused with 429 on the same preview, never leaving a stale one", async () => {
    const { tg, channel, one } = await previewSetup();
    channel.streamDelta(one, "partial");
    await tg.waitFor("sendMessage");
    tg.injectFault({
      method: "editMessageText",
      errorCode: 429,
      description: "Too Many Requests: retry after 1",
      parameters: { retry_after: 1 },
    });
    const failed = await channel.send(reply(one, "Final.")).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ChannelSendError);
    expect((failed as ChannelSendError).kind).toBe("rate_limit");
    const receipt = await channel.send(reply(one, "Final.")); // the outbox's retry
    expect(tg.sentMessages({ chatId: ANN.id })).toHaveLength(1);
    expect(
      tg.messagesInChat(ANN.id).find((m) => String(m.message_id) === receipt.platformMessageId)?.text,
    ).toBe("Final.");
  });

  it("sends the reply as a fresh threaded message when the preview was deleted", async () => {
    const { tg, channel, one } = await previewSetup();
    channel.streamDelta(one, "partial");
    const preview = await tg.waitFor("sendMessage");
    const previewId = tg.sentMessages({ chatId: ANN.id })[0]?.message_id;
    expect(preview.params.reply_parameters).toBeDefined();
    await fetch(`${tg.apiRoot}/bot${TOKEN}/deleteMessage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chat_id: ANN.id, message_id: previewId }),
    });
    const receipt = await channel.send(reply(one, "Final."));
    expect(receipt.platformMessageId).not.toBe(String(previewId));
    const last = tg.calls.filter((c) => c.method === "sendMessage").at(-1);
    expect(last?.params.text).toBe("Final.");
    expect(JSON.stringify(last?.params.reply_parameters)).toContain(
      `"message_id":${one.replyTo.split(":")[1]}`,
    );
  });
});
