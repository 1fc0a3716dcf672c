/**
 * Telegram end to end: the real gateway and grammY against the fake Bot API server, with the
 * model simulator behind the real Anthropic SDK.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { markdownToPlainText } from "../../../src/channels/telegram/format.js";
import { ManualClock } from "../../../src/util/clock.js";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../../fakes/telegram-bot-api.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../../helpers/test-gateway.js";
import { until } from "../../helpers/until.js";

const TOKEN = "123456:AAtest-token-for-the-fake-bot-api-000";
const BOT = { token: TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" };
const ANN = { id: 42, first_name: "Ann" };
const BOB = { id: 43, first_name: "Bob" };
const GROUP = { id: -1001, type: "supergroup" as const, title: "Team" };

let sim: ModelSimulator | undefined;
let tg: FakeTelegramBotApi | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await tg?.close();
  await sim?.close();
  gw = undefined;
  tg = undefined;
  sim = undefined;
});

/** `clock`: the gateway's clock, which also stamps the fake's calls; default the system clock. */
async function setup(
  telegram: Record<string, unknown> = {},
  extra: Record<string, unknown> | ((sim: ModelSimulator) => Record<string, unknown>) = {},
  clock?: ManualClock,
) {
  sim = new ModelSimulator();
  await sim.start();
  tg = new FakeTelegramBotApi(clock ? { now: () => clock.now() } : {});
  await tg.start();
  tg.addBot(BOT);
  gw = await startTestGateway(
    {
      ...simulatorConfig(sim, "anthropic"),
      channels: {
        telegram: { token: TOKEN, apiRoot: tg.apiRoot, allowFrom: [ANN.id], groups: [GROUP.id], ...telegram },
      },
      ...(typeof extra === "function" ? extra(sim) : extra),
    },
    clock ? { clock } : {},
  );
  return { sim, tg, gw };
}

/** Waits until the bot has sent `n` messages to a chat; returns their texts in order. */
async function botSays(
  fake: FakeTelegramBotApi,
  chatId: number,
  n: number,
  timeoutMs = 10_000,
): Promise<string[]> {
  await until(() => fake.sentMessages({ chatId }).length >= n, `${n} messages to ${chatId}`, timeoutMs);
  return fake.sentMessages({ chatId }).map((m) => m.text ?? "");
}

/** Waits until a reply is dead in the gateway's store. */
async function someReplyDead(gateway: TestGateway): Promise<void> {
  await until(async () => (await gateway.running.store.outbox.countByState()).dead > 0, "a dead reply");
}

describe("Telegram channel", () => {
  it("answers an allowed sender, threaded to the message, with typing and registered commands", async () => {
    const { sim, tg } = await setup();
    sim.script({ text: "Hello **Ann**!" });
    const { messageId } = tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "hi",
    });
    expect(await botSays(tg, ANN.id, 1)).toEqual(["Hello Ann!"]);
    const send = tg.calls.find((c) => c.method === "sendMessage");
    expect(send?.params.parse_mode).toBe("HTML");
    expect(send?.params.text).toBe("Hello <b>Ann</b>!");
    expect(JSON.stringify(send?.params.reply_parameters)).toContain(`"message_id":${messageId}`);
    expect(tg.calls.some((c) => c.method === "sendChatAction" && c.params.action === "typing")).toBe(true);
    const commands = tg.calls.find((c) => c.method === "setMyCommands");
    expect(JSON.stringify(commands?.params.commands)).toContain('"command":"stop"');
  });

  it("gives an unknown sender a pairing code and no run; after approval the same sender is answered", async () => {
    const { sim, tg, gw } = await setup();
    const before = sim.requests.length;
    tg.pushMessage(TOKEN, { chat: { id: BOB.id, type: "private" }, from: BOB, text: "hello?" });
    const [codeMessage] = await botSays(tg, BOB.id, 1);
    const code = /pairing code is ([A-Z2-9]{8})/.exec(codeMessage ?? "")?.[1];
    expect(code).toBeDefined();
    expect(codeMessage).toContain(`switchyard pairing approve telegram ${code}`);
    tg.pushMessage(TOKEN, { chat: { id: BOB.id, type: "private" }, from: BOB, text: "still there?" });
    await tg.waitFor("getUpdates", (c) => Number(c.params.offset) >= 3);
    expect(sim.requests.length).toBe(before); // nobody outside the policy reaches the model
    expect(tg.sentMessages({ chatId: BOB.id })).toHaveLength(1); // nothing else answered

    expect(await gw.running.store.pairing.approve("telegram", code ?? "", Date.now())).toBeDefined();
    sim.script({ text: "Welcome, Bob." });
    tg.pushMessage(TOKEN, { chat: { id: BOB.id, type: "private" }, from: BOB, text: "now?" });
    expect((await botSays(tg, BOB.id, 2))[1]).toBe("Welcome, Bob.");
  });

  it("in a group answers only when mentioned, and the run sees the earlier group messages", async () => {
    const { sim, tg } = await setup();
    tg.pushMessage(TOKEN, { chat: GROUP, from: ANN, text: "lunch at noon?" });
    tg.pushMessage(TOKEN, { chat: GROUP, from: BOB, text: "noon works for me" });
    await tg.waitFor("getUpdates", (c) => Number(c.params.offset) >= 3);
    expect(sim.requests).toHaveLength(0);
    sim.script({ text: "Booked for noon." });
    tg.pushMessage(TOKEN, { chat: GROUP, from: ANN, text: "@switchyard_bot book a table please" });
    expect(await botSays(tg, GROUP.id, 1)).toEqual(["Booked for noon."]);
    const body = JSON.stringify(sim.requests[0]?.body);
    expect(body).toContain("Ann: lunch at noon?");
    expect(body).toContain("Bob: noon works for me");
    expect(body).toContain("Ann: @switchyard_bot book a table please");
  });

  it("ignores groups outside the allowlist, edits and service messages", async () => {
    const { sim, tg } = await setup();
    tg.pushMessage(TOKEN, {
      chat: { id: -999, type: "group", title: "Other" },
      from: ANN,
      text: "@switchyard_bot hi",
    });
    tg.pushEditedMessage?.(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "edited" });
    tg.pushMessage(TOKEN, { chat: GROUP, from: ANN, newChatMembers: [BOB] });
    await tg.waitFor("getUpdates", (c) => Number(c.params.offset) >= 4);
    expect(sim.requests).toHaveLength(0);
    expect(tg.sentMessages()).toHaveLength(0);
  });

  it("keeps two forum topics of one group in two sessions", async () => {
    const { sim, tg, gw } = await setup();
    const forum = { ...GROUP, is_forum: true };
    sim.script({ text: "topic one answer" }, { text: "topic two answer" });
    tg.pushMessage(TOKEN, {
      chat: forum,
      from: ANN,
      text: "@switchyard_bot in topic 1",
      messageThreadId: 11,
      isTopicMessage: true,
    });
    await botSays(tg, GROUP.id, 1);
    tg.pushMessage(TOKEN, {
      chat: forum,
      from: ANN,
      text: "@switchyard_bot in topic 2",
      messageThreadId: 22,
      isTopicMessage: true,
    });
    await botSays(tg, GROUP.id, 2);
    const sent = tg.sentMessages({ chatId: GROUP.id });
    expect(sent.map((m) => m.message_thread_id)).toEqual([11, 22]);
    expect(
      await gw.running.store.sessions.get(`agent:main:telegram:default:group:${GROUP.id}:thread:11`),
    ).toBeDefined();
    expect(
      await gw.running.store.sessions.get(`agent:main:telegram:default:group:${GROUP.id}:thread:22`),
    ).toBeDefined();
    // The second topic's run did not see the first topic's conversation.
    expect(JSON.stringify(sim.requests[1]?.body)).not.toContain("in topic 1");
  });

  it("sends a 10,000-character reply as ordered chunks; a block longer than a chunk is closed and reopened", async () => {
    const { sim, tg } = await setup();
    // ~5,600 characters of code: more than one 4096-character message can hold.
    const code = Array.from({ length: 150 }, (_, i) => `const line${i} = ${i}; // keep me whole`).join("\n");
    const prose = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => `Paragraph ${from + i} says something useful.`).join("\n\n");
    const reply = `${prose(0, 100)}\n\n\`\`\`ts\n${code}\n\`\`\`\n\n${prose(100, 100)}`;
    expect(reply.length).toBeGreaterThan(10_000);
    sim.script({ text: reply });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "long one please" });
    const sends = async () => {
      // Every chunk has been sent once the last paragraph has.
      await tg.waitFor("sendMessage", (c) => String(c.params.text).includes("Paragraph 199 says"), 10_000);
      return tg.calls.filter(
        (c) => c.method === "sendMessage" && String(c.params.chat_id) === String(ANN.id),
      );
    };
    const html = (await sends()).map((c) => String(c.params.text));
    const shown = tg.sentMessages({ chatId: ANN.id }).map((m) => m.text ?? "");
    expect(shown).toHaveLength(html.length);
    for (const c of shown) expect(c.length).toBeLessThanOrEqual(4096);
    // The block spans messages: each part is a complete, closed block that keeps its language.
    const withCode = html.filter((c) => c.includes("const line"));
    expect(withCode.length).toBeGreaterThanOrEqual(2);
    for (const c of withCode) {
      expect(c).toContain('<pre><code class="language-ts">');
      expect(c.split("<pre>").length).toBe(c.split("</pre>").length);
    }
    // Joined in order (the reopened fences render as nothing), the messages are the rendered reply.
    const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");
    expect(lines(shown.join("\n"))).toEqual(lines(markdownToPlainText(reply)));
  });

  it("retries a 429 on send at most outbox.maxAttempts times, then shows the reply as dead", async () => {
    const { sim, tg, gw } = await setup({}, { outbox: { maxAttempts: 3 } });
    tg.injectFault({
      method: "sendMessage",
      errorCode: 429,
      description: "Too Many Requests: retry after 0",
      parameters: { retry_after: 0 },
      times: 10,
    });
    sim.script({ text: "rate limited forever" });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "hi" });
    await someReplyDead(gw);
    const [dead] = await gw.running.store.outbox.listByState("dead", 10);
    expect(dead?.attempts).toBe(3);
    expect(dead?.lastError).toMatch(/^rate_limit: 429 Too Many Requests/);
    expect(tg.calls.filter((c) => c.method === "sendMessage")).toHaveLength(3);
    expect(tg.sentMessages({ chatId: ANN.id })).toHaveLength(0);
    const status = (await (await fetch(`${gw.url}/v1/status`)).json()) as {
      deadReplies: Array<{ chatId: string; text: string; attempts: number }>;
    };
    expect(status.deadReplies).toEqual([
      expect.objectContaining({ chatId: String(ANN.id), text: "rate limited forever", attempts: 3 }),
    ]);
  });

  it("keeps the typing indicator alive while a long run works", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, tg } = await setup({}, {}, clock);
    sim.script({ hang: true }); // the model call runs until /stop
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "take your time" });
    const typing = () =>
      tg.calls.filter(
        (c) =>
          c.method === "sendChatAction" &&
          String(c.params.chat_id) === String(ANN.id) &&
          c.params.action === "typing",
      );
    await until(() => typing().length === 1 && sim.requests.length === 1, "the run and its first typing");
    // Telegram shows an indicator for about 5 s: it must be refreshed before then.
    clock.advance(4_999);
    await until(() => typing().length >= 2, "the refreshed typing indicator");
    const [first, second] = typing();
    expect((second?.timeMs ?? 0) - (first?.timeMs ?? 0)).toBeLessThan(5_000);
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "/stop" });
    expect(await botSays(tg, ANN.id, 2)).toContain("⏹ Stopped.");
  });

  it("waits retry_after on a 429 and delivers the reply once", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, tg, gw } = await setup({}, {}, clock);
    const { store } = gw.running;
    tg.injectFault({
      method: "sendMessage",
      errorCode: 429,
      description: "Too Many Requests: retry after 1",
      parameters: { retry_after: 1 },
    });
    sim.script({ text: "after the rate limit" });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "hi" });
    // The 429 is recorded with Telegram's wait, and the outbox arms its timer for exactly then.
    await until(async () => {
      const [row] = await store.outbox.listByState("pending", 1);
      return row?.attempts === 1 && clock.nextDueMs() === row.nextAttemptAt;
    }, "the rate-limited reply waiting for its retry");
    const [waiting] = await store.outbox.listByState("pending", 1);
    expect(waiting?.nextAttemptAt).toBe(clock.now() + 1_000);
    clock.advance(999);
    expect(await store.outbox.countByState()).toMatchObject({ pending: 1, sent: 0 }); // not yet
    clock.advance(1);
    expect(await botSays(tg, ANN.id, 1)).toEqual(["after the rate limit"]);
    // Once: the one row is recorded sent and nothing is left to send.
    await until(async () => (await store.outbox.countByState()).sent === 1, "the receipt");
    expect(await store.outbox.countByState()).toMatchObject({ sent: 1, pending: 0, sending: 0 });
    expect(tg.calls.filter((c) => c.method === "sendMessage")).toHaveLength(2); // the 429, the reply
    expect(tg.sentMessages({ chatId: ANN.id })).toHaveLength(1);
  });

  it("re-sends as plain text when Telegram rejects the entities", async () => {
    const { sim, tg } = await setup();
    tg.injectFault({
      method: "sendMessage",
      errorCode: 400,
      description: "Bad Request: can't parse entities: unsupported start tag at byte offset 0",
    });
    sim.script({ text: "Some **bold** words" });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "hi" });
    expect(await botSays(tg, ANN.id, 1)).toEqual(["Some bold words"]);
    const last = tg.calls.filter((c) => c.method === "sendMessage").at(-1);
    expect(last?.params.parse_mode).toBeUndefined();
  });

  it("does not retry a chat that blocked the bot, and shows the reply as dead", async () => {
    const { sim, tg, gw } = await setup();
    tg.blockChat(ANN.id);
    sim.script({ text: "you will never see this" });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "hi" });
    await someReplyDead(gw);
    const [dead] = await gw.running.store.outbox.listByState("dead", 1);
    expect(dead?.lastError).toMatch(/403 Forbidden: bot was blocked by the user \(chat 42\)/);
    expect(dead?.attempts).toBe(1); // the one failed attempt; never retried
    const status = (await (await fetch(`${gw.url}/v1/status`)).json()) as { deadReplies: unknown[] };
    expect(status.deadReplies).toHaveLength(1);
  });

  it("/stop ends a running turn", async () => {
    const { sim, tg } = await setup();
    sim.script({ hang: true });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "think hard" });
    await sim.waitForRequests(1, 5_000);
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "/stop" });
    const texts = await botSays(tg, ANN.id, 2);
    expect(texts).toContain("Stopping the current turn.");
    expect(texts).toContain("⏹ Stopped.");
  });

  it("downloads attachments into the workspace, and names one over the size cap", async () => {
    const { sim, tg, gw } = await setup({ mediaMaxMb: 0.001 });
    tg.addFile(TOKEN, {
      fileId: "small",
      content: Buffer.from("hello file"),
      filePath: "documents/small.txt",
    });
    tg.addFile(TOKEN, { fileId: "big", content: Buffer.alloc(5_000, 1), filePath: "documents/big.bin" });
    sim.script({ text: "got it" }, { text: "too big" });
    tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      caption: "my notes",
      document: { file_id: "small", file_unique_id: "s", file_name: "notes.txt", file_size: 10 },
    });
    await botSays(tg, ANN.id, 1);
    const saved = join(gw.running.workspaceDir, "inbox/telegram/42");
    expect(existsSync(saved)).toBe(true);
    const first = JSON.stringify(sim.requests[0]?.body);
    expect(first).toContain("my notes");
    tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      document: { file_id: "big", file_unique_id: "b", file_name: "big.bin", file_size: 5_000 },
    });
    await botSays(tg, ANN.id, 2);
    expect(JSON.stringify(sim.requests[1]?.body)).toContain("big.bin not downloaded");
    const files = (await import("node:fs")).readdirSync(saved);
    expect(files.some((f) => f.endsWith("notes.txt"))).toBe(true);
    expect(readFileSync(join(saved, files.find((f) => f.endsWith("notes.txt")) ?? ""), "utf8")).toBe(
      "hello file",
    );
  });

  it("does not download the files of a sender who is not admitted (they get a pairing code)", async () => {
    const { sim, tg, gw } = await setup();
    tg.addFile(TOKEN, {
      fileId: "stranger-file",
      content: Buffer.from("secret"),
      filePath: "documents/s.txt",
    });
    tg.pushMessage(TOKEN, {
      chat: { id: BOB.id, type: "private" },
      from: BOB,
      caption: "open this",
      document: { file_id: "stranger-file", file_unique_id: "x", file_name: "s.txt", file_size: 6 },
    });
    const [reply] = await botSays(tg, BOB.id, 1);
    expect(reply).toMatch(/pairing code/);
    expect(existsSync(join(gw.running.workspaceDir, "inbox/telegram/43"))).toBe(false);
    expect(tg.calls.filter((c) => c.method === "getFile")).toHaveLength(0);
    expect(sim.requests).toHaveLength(0);
  });

  it("streams a preview by editing one message, then finishes it with the final text", async () => {
    const { sim, tg } = await setup({ streaming: "edit" });
    sim.script({ text: "word ".repeat(60).trim(), chunkDelayMs: 40 });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "stream" });
    await tg.waitFor("editMessageText", (c) => String(c.params.text) === "word ".repeat(60).trim(), 10_000);
    expect(tg.sentMessages({ chatId: ANN.id })).toHaveLength(1);
    const edits = tg.calls.filter((c) => c.method === "editMessageText");
    for (let i = 1; i < edits.length - 1; i++) {
      expect((edits[i]?.timeMs ?? 0) - (edits[i - 1]?.timeMs ?? 0)).toBeGreaterThanOrEqual(900);
    }
  });

  it("a model stream that dies half-way and is retried on another key edits the same preview: no text twice", async () => {
    const answer = "word ".repeat(40).trim();
    const { sim, tg } = await setup({ streaming: "edit" }, (sim) => ({
      providers: {
        anthropic: {
          baseUrl: sim.url,
          profiles: [
            { id: "a", apiKey: "sk-ant-key-a" },
            { id: "b", apiKey: "sk-ant-key-b" },
          ],
        },
      },
    }));
    sim.scriptFor("sk-ant-key-a", { dropAfterChunks: 6, text: "lost ".repeat(40).trim(), chunkDelayMs: 40 });
    sim.scriptFor("sk-ant-key-b", { text: answer, chunkDelayMs: 5 });
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "stream" });
    await tg.waitFor("editMessageText", (c) => String(c.params.text) === answer, 10_000);
    // One message: the preview, edited from the lost text into the answer.
    const sent = tg.sentMessages({ chatId: ANN.id });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.text).toMatch(/^lost/);
    const edits = tg.calls.filter((c) => c.method === "editMessageText").map((c) => String(c.params.text));
    expect(edits.at(-1)).toBe(answer);
    // No edit ever shows the lost text and the answer together.
    expect(edits.filter((t) => t.includes("lost") && t.includes("word"))).toEqual([]);
  });
});
