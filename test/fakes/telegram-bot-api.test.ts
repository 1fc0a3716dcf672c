/**
 * The fake Telegram Bot API, driven through the real grammY library (and raw HTTP where a
 * client other than grammY would differ): polling semantics, errors, webhooks, files.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Bot, GrammyError, InputFile, webhookCallback } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { until } from "../helpers/until.js";
import { FakeTelegramBotApi } from "./telegram-bot-api.js";
import { parseTelegramHtml } from "./telegram-html.js";

const TOKEN = "111:AAfake-token-one";
const TOKEN_2 = "222:BBfake-token-two";
const ANN = { id: 42, first_name: "Ann", username: "ann" };

let fake: FakeTelegramBotApi;
/**
 * The fake's timers: a held long poll ends only when a test moves this clock. Call times stay on
 * the wall clock: one test measures grammY's own retry_after wait, which no injected clock reaches.
 */
let clock: ManualClock;
const cleanups: Array<() => Promise<unknown> | unknown> = [];

beforeEach(async () => {
  clock = new ManualClock(Date.now());
  fake = new FakeTelegramBotApi({ webhookRetryDelayMs: 20, clock, now: () => Date.now() });
  await fake.start();
  fake.addBot({ token: TOKEN, id: 111, username: "one_bot", firstName: "One" });
  fake.addBot({ token: TOKEN_2, id: 222, username: "two_bot", canReadAllGroupMessages: true });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await fake.close();
});

function newBot(token = TOKEN, timeoutSeconds = 10): Bot {
  return new Bot(token, { client: { apiRoot: fake.apiRoot, timeoutSeconds } });
}

/** Starts long polling (5 s polls) and registers a stop for the end of the test. */
function startPolling(bot: Bot): Promise<void> {
  const done = bot.start({ timeout: 5 }).catch(() => {});
  cleanups.push(async () => {
    if (bot.isRunning()) await bot.stop();
    await done;
  });
  return done;
}

async function apiError(promise: Promise<unknown>): Promise<GrammyError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof GrammyError)) throw new Error(`expected a GrammyError, got ${String(error)}`);
  return error;
}

async function rawCall(
  token: string,
  method: string,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${fake.apiRoot}/bot${token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe("FakeTelegramBotApi with grammY long polling", () => {
  it("routes /start, confirms the offset, and stops with an immediate confirm call", async () => {
    const bot = newBot();
    const seen: string[] = [];
    bot.command("start", async (ctx) => {
      seen.push(ctx.match === "" ? "start" : `start ${ctx.match}`);
      await ctx.reply(`welcome ${ctx.from?.first_name}`, {
        reply_parameters: { message_id: ctx.msgId ?? 0 },
      });
    });
    startPolling(bot);
    await fake.waitFor("getUpdates");
    expect(fake.calls.map((c) => c.method)).toEqual(expect.arrayContaining(["getMe", "deleteWebhook"]));

    const pushed = fake.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "/start",
    });
    const send = await fake.waitFor("sendMessage");
    expect(seen).toEqual(["start"]);
    expect(send.params).toMatchObject({ chat_id: ANN.id, text: "welcome Ann" });
    const [reply] = fake.sentMessages({ chatId: ANN.id });
    expect(reply).toMatchObject({
      message_id: pushed.messageId + 1,
      from: { id: 111, is_bot: true, username: "one_bot" },
      chat: { id: ANN.id, type: "private" },
      text: "welcome Ann",
      reply_to_message: { message_id: pushed.messageId, text: "/start" },
    });

    const confirming = await fake.waitFor("getUpdates", (c) => c.params.offset === pushed.updateId + 1);
    expect(confirming.params).not.toHaveProperty("allowed_updates");
    expect(fake.pendingUpdates(TOKEN)).toBe(0);
    expect(fake.confirmedOffset(TOKEN)).toBe(pushed.updateId + 1);

    const t0 = Date.now();
    await bot.stop();
    expect(Date.now() - t0).toBeLessThan(1000);
    const last = fake.calls.at(-1);
    expect(last?.method).toBe("getUpdates");
    expect(last?.params).toEqual({ offset: pushed.updateId + 1, limit: 1 });

    // The aborted poll was dropped: a new instance polls without a conflict and gets new updates.
    const again = newBot();
    const texts: string[] = [];
    again.on("message:text", (ctx) => {
      texts.push(ctx.message.text);
    });
    startPolling(again);
    fake.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "hello again" });
    await fake.waitFor("getUpdates", (c) => c.params.offset === pushed.updateId + 2);
    expect(texts).toEqual(["hello again"]);
  });

  it("waits retry_after after a 429 on getUpdates", async () => {
    fake.injectFault({
      method: "getUpdates",
      errorCode: 429,
      description: "Too Many Requests: retry after 1",
      parameters: { retry_after: 1 },
    });
    const bot = newBot();
    startPolling(bot);
    const second = await fake.waitFor(
      "getUpdates",
      (c) => c !== fake.calls.find((x) => x.method === "getUpdates"),
    );
    const first = fake.calls.find((c) => c.method === "getUpdates");
    const gap = second.timeMs - (first?.timeMs ?? 0);
    expect(gap).toBeGreaterThanOrEqual(900);
    expect(gap).toBeLessThan(3000);
  });

  it("answers the older of two concurrent long polls with 409", async () => {
    const older = rawCall(TOKEN, "getUpdates", { timeout: 5 });
    await fake.waitFor("getUpdates");
    const newer = rawCall(TOKEN, "getUpdates", { timeout: 5 });
    expect(await older).toEqual({
      status: 409,
      json: {
        ok: false,
        error_code: 409,
        description:
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      },
    });
    fake.pushUpdate(TOKEN, {
      message: { message_id: 1, date: 0, chat: { id: 1, type: "private" }, text: "x" },
    });
    expect(await newer).toMatchObject({ status: 200, json: { ok: true, result: [{ update_id: 1 }] } });
  });

  it("keeps offsets, limits, negative offsets and allowed_updates as Telegram does", async () => {
    for (let i = 0; i < 5; i++) {
      fake.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, text: `m${i}` });
    }
    expect((await rawCall(TOKEN, "getUpdates", { limit: 2 })).json).toMatchObject({
      result: [{ update_id: 1 }, { update_id: 2 }],
    });
    expect(fake.pendingUpdates(TOKEN)).toBe(5); // returned, not confirmed
    expect((await rawCall(TOKEN, "getUpdates", { offset: 3, limit: 1 })).json).toMatchObject({
      result: [{ update_id: 3 }],
    });
    expect(fake.pendingUpdates(TOKEN)).toBe(3);
    expect((await rawCall(TOKEN, "getUpdates", { offset: -1 })).json).toMatchObject({
      result: [{ update_id: 5 }],
    });
    expect(fake.pendingUpdates(TOKEN)).toBe(1);
    expect(fake.confirmedOffset(TOKEN)).toBe(5);

    // Reactions are opt-in; a held poll with timeout answers [] when nothing comes.
    await rawCall(TOKEN, "getUpdates", { offset: 6, allowed_updates: [] });
    fake.pushUpdate(TOKEN, { message_reaction: { chat: { id: 1, type: "private" } } });
    expect(fake.pendingUpdates(TOKEN)).toBe(0);
    let answered = false;
    const held = rawCall(TOKEN, "getUpdates", { offset: 6, timeout: 1 }).finally(() => {
      answered = true;
    });
    await until(() => clock.pendingTimers === 1, "the held poll");
    clock.advance(999);
    expect(answered).toBe(false);
    clock.advance(1);
    expect((await held).json).toEqual({ ok: true, result: [] });
    await rawCall(TOKEN, "getUpdates", { allowed_updates: ["message_reaction"] });
    fake.pushUpdate(TOKEN, { message_reaction: { chat: { id: 1, type: "private" } } });
    expect(fake.pendingUpdates(TOKEN)).toBe(1);
  });
});

describe("FakeTelegramBotApi errors through grammY", () => {
  it("surfaces a sendMessage 429 as GrammyError with retry_after, once", async () => {
    const bot = newBot();
    fake.injectFault({
      method: "sendMessage",
      errorCode: 429,
      description: "Too Many Requests: retry after 7",
      parameters: { retry_after: 7 },
    });
    const error = await apiError(bot.api.sendMessage(ANN.id, "hi"));
    expect(error.error_code).toBe(429);
    expect(error.parameters.retry_after).toBe(7);
    expect((await bot.api.sendMessage(ANN.id, "hi")).text).toBe("hi");
    expect(fake.sentMessages()).toHaveLength(1);
  });

  it("parses HTML like Telegram and rejects what Telegram rejects", async () => {
    const bot = newBot();
    const ok = await bot.api.sendMessage(ANN.id, '<b>bold</b> &amp; <a href="https://example.com">link</a>', {
      parse_mode: "HTML",
    });
    expect(ok.text).toBe("bold & link");
    expect(ok.entities).toEqual([
      { type: "bold", offset: 0, length: 4 },
      { type: "text_link", offset: 7, length: 4, url: "https://example.com/" },
    ]);
    const cases: Array<[string, string]> = [
      ["line<br>break", 'Unsupported start tag "br" at byte offset 4'],
      ["<b>open", 'Can\'t find end tag corresponding to start tag "b"'],
      ["<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'],
      ["ü < 3", 'Unsupported start tag "" at byte offset 3'],
      ["Tom & Jerry", "at byte offset 4"],
      ['<span class="x">s</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'],
    ];
    for (const [html, reason] of cases) {
      const error = await apiError(bot.api.sendMessage(ANN.id, html, { parse_mode: "HTML" }));
      expect(error.error_code).toBe(400);
      expect(error.description).toContain("Bad Request: can't parse entities: ");
      expect(error.description).toContain(reason);
    }
    expect(fake.sentMessages()).toHaveLength(1);
  });

  it("counts length after entity parsing and rejects empty and too-long text", async () => {
    const bot = newBot();
    const visible = "x".repeat(4096);
    expect((await bot.api.sendMessage(ANN.id, `<b>${visible}</b>`, { parse_mode: "HTML" })).text).toBe(
      visible,
    );
    const long = await apiError(bot.api.sendMessage(ANN.id, `${visible}y`));
    expect([long.error_code, long.description]).toEqual([400, "Bad Request: message is too long"]);
    const empty = await apiError(bot.api.sendMessage(ANN.id, "<b> </b>", { parse_mode: "HTML" }));
    expect(empty.description).toBe("Bad Request: message text is empty");
  });

  it("edits messages: not modified, not found, and state in messagesInChat", async () => {
    const bot = newBot();
    const sent = await bot.api.sendMessage(ANN.id, "draft");
    const same = await apiError(bot.api.editMessageText(ANN.id, sent.message_id, "draft"));
    expect(same.description).toBe(
      "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
    const missing = await apiError(bot.api.editMessageText(ANN.id, 999, "x"));
    expect(missing.description).toBe("Bad Request: message to edit not found");
    const edited = await bot.api.editMessageText(ANN.id, sent.message_id, "final");
    expect(edited).toMatchObject({ message_id: sent.message_id, text: "final" });
    expect(fake.messagesInChat(ANN.id).map((m) => m.text)).toEqual(["final"]);
    expect(fake.sentMessages()[0]?.text).toBe("draft");
    const userMessage = fake.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, text: "mine" });
    const notOwn = await apiError(bot.api.editMessageText(ANN.id, userMessage.messageId, "hijack"));
    expect(notOwn.description).toBe("Bad Request: message can't be edited");
    expect(await bot.api.deleteMessage(ANN.id, sent.message_id)).toBe(true);
    expect(fake.messagesInChat(ANN.id).map((m) => m.text)).toEqual(["mine"]);
  });

  it("answers 403 for a blocked chat and 400 for a forgotten one", async () => {
    const bot = newBot();
    fake.blockChat(ANN.id);
    fake.forgetChat(-100);
    const blocked = await apiError(bot.api.sendMessage(ANN.id, "hi"));
    expect([blocked.error_code, blocked.description]).toEqual([
      403,
      "Forbidden: bot was blocked by the user",
    ]);
    const gone = await apiError(bot.api.sendChatAction(-100, "typing"));
    expect([gone.error_code, gone.description]).toEqual([400, "Bad Request: chat not found"]);
    expect(await bot.api.sendChatAction(7, "typing")).toBe(true);
  });

  it("answers 401 for an unknown token and 404 for an unknown method", async () => {
    expect(await rawCall("999:nope", "getMe", {})).toEqual({
      status: 401,
      json: { ok: false, error_code: 401, description: "Unauthorized" },
    });
    expect(await rawCall(TOKEN, "noSuchMethod", {})).toEqual({
      status: 404,
      json: { ok: false, error_code: 404, description: "Not Found" },
    });
    const error = await apiError(new Bot("999:nope", { client: { apiRoot: fake.apiRoot } }).api.getMe());
    expect(error.error_code).toBe(401);
  });
});

describe("FakeTelegramBotApi requests and files", () => {
  it("serves getFile and the file download URL", async () => {
    const bot = newBot();
    fake.addFile(TOKEN, {
      fileId: "doc-1",
      content: Buffer.from("hello bytes"),
      filePath: "documents/a.txt",
    });
    const file = await bot.api.getFile("doc-1");
    expect(file).toMatchObject({ file_id: "doc-1", file_size: 11, file_path: "documents/a.txt" });
    const res = await fetch(`${fake.apiRoot}/file/bot${TOKEN}/${file.file_path}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe("hello bytes");
    const wrong = await apiError(bot.api.getFile("nope"));
    expect(wrong.description).toBe("Bad Request: invalid file_id");
    expect((await fetch(`${fake.apiRoot}/file/bot${TOKEN_2}/documents/a.txt`)).status).toBe(404);
  });

  it("leaves out file_size and content-length for a file added with reportSize: false", async () => {
    const bot = newBot();
    fake.addFile(TOKEN, {
      fileId: "doc-2",
      content: Buffer.alloc(40_000, 1),
      filePath: "documents/b.bin",
      reportSize: false,
    });
    const file = await bot.api.getFile("doc-2");
    expect(file.file_size).toBeUndefined();
    const res = await fetch(`${fake.apiRoot}/file/bot${TOKEN}/${file.file_path}`);
    expect(res.headers.get("content-length")).toBeNull();
    expect((await res.arrayBuffer()).byteLength).toBe(40_000);
  });

  it("holds calls of a method (and file downloads) until released, for `times` calls", async () => {
    const bot = newBot();
    fake.addFile(TOKEN, { fileId: "doc-3", content: Buffer.from("held"), filePath: "documents/c.txt" });
    const hold = fake.holdMethod("getFile", { times: 1 });
    let answered = false;
    const first = bot.api.getFile("doc-3").then((f) => {
      answered = true;
      return f;
    });
    await hold.reached();
    expect(hold.waiting).toBe(1);
    // Only one call is held: the next one is answered at once, the held one is not.
    expect((await bot.api.getFile("doc-3")).file_path).toBe("documents/c.txt");
    expect(answered).toBe(false);
    expect(fake.calls.filter((c) => c.method === "getFile")).toHaveLength(1); // recorded once handled
    hold.release();
    expect((await first).file_id).toBe("doc-3");
    expect(hold.waiting).toBe(0);

    const download = fake.holdMethod("downloadFile", { token: TOKEN });
    const fetching = fetch(`${fake.apiRoot}/file/bot${TOKEN}/documents/c.txt`);
    await download.reached();
    download.release();
    expect(await (await fetching).text()).toBe("held");
  });

  it("an `after` hold carries a matching call out and holds only its answer; onCall reports each call", async () => {
    const bot = newBot();
    const seen: string[] = [];
    const off = fake.onCall((call, result) =>
      seen.push(`${call.method}: ${(result as { text?: string }).text}`),
    );
    const hold = fake.holdMethod("sendMessage", { after: true, times: 1, when: (p) => p.text === "held" });
    await bot.api.sendMessage(ANN.id, "not held"); // the test does not match: answered at once
    let answered = false;
    const sending = bot.api.sendMessage(ANN.id, "held").then((m) => {
      answered = true;
      return m;
    });
    await hold.reached();
    // Stored and reported (the platform has it), while the client still waits for the answer.
    expect(fake.messagesInChat(ANN.id).map((m) => m.text)).toEqual(["not held", "held"]);
    expect(seen).toEqual(["sendMessage: not held", "sendMessage: held"]);
    expect(answered).toBe(false);
    hold.release();
    expect((await sending).text).toBe("held");
    off();
    await bot.api.sendMessage(ANN.id, "unheard");
    expect(seen).toHaveLength(2);
  });

  it("accepts multipart uploads, form bodies, query strings and the /test/ environment", async () => {
    const bot = newBot();
    const doc = await bot.api.sendDocument(ANN.id, new InputFile(Buffer.from("report"), "report.txt"), {
      caption: "<i>weekly</i>",
      parse_mode: "HTML",
    });
    expect(doc).toMatchObject({ caption: "weekly", document: { file_name: "report.txt", file_size: 6 } });
    const path = (await bot.api.getFile(doc.document?.file_id ?? "")).file_path;
    const download = await fetch(`${fake.apiRoot}/file/bot${TOKEN}/${path}`);
    expect(await download.text()).toBe("report");

    const form = await fetch(`${fake.apiRoot}/bot${TOKEN}/sendMessage`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ chat_id: String(ANN.id), text: "via form", reply_parameters: "{}" }),
    });
    expect(await form.json()).toMatchObject({ ok: true, result: { text: "via form" } });
    const query = await fetch(
      `${fake.apiRoot}/bot${TOKEN}/test/sendMessage?chat_id=${ANN.id}&text=via%20query`,
    );
    expect(await query.json()).toMatchObject({ ok: true, result: { text: "via query" } });
    expect(fake.calls.at(-1)).toMatchObject({
      method: "sendMessage",
      params: { chat_id: "42", text: "via query" },
    });
  });

  it("keeps several bots independent", async () => {
    const one = newBot(TOKEN);
    const two = newBot(TOKEN_2);
    expect((await one.api.getMe()).username).toBe("one_bot");
    expect(await two.api.getMe()).toMatchObject({
      id: 222,
      username: "two_bot",
      can_read_all_group_messages: true,
    });
    fake.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, text: "for one" });
    fake.pushMessage(TOKEN_2, { chat: { id: 43, type: "private" }, text: "for two" });
    expect((await one.api.getUpdates()).map((u) => u.message?.text)).toEqual(["for one"]);
    expect((await two.api.getUpdates()).map((u) => u.message?.text)).toEqual(["for two"]);
    await two.api.setMyCommands([{ command: "help", description: "Help" }]);
    expect(await one.api.getMyCommands()).toEqual([]);
    expect(await two.api.getMyCommands()).toEqual([{ command: "help", description: "Help" }]);
    await two.api.sendMessage(43, "from two");
    expect(fake.sentMessages({ token: TOKEN })).toHaveLength(0);
    expect(fake.sentMessages({ token: TOKEN_2 }).map((m) => m.from?.id)).toEqual([222]);
  });

  it("detects command and mention entities in pushed messages", () => {
    fake.pushMessage(TOKEN, {
      chat: { id: -1001, type: "supergroup", title: "Team", is_forum: true },
      text: "/ask@one_bot hi @someone",
      messageThreadId: 5,
      isTopicMessage: true,
    });
    const [message] = fake.messagesInChat(-1001);
    expect(message).toMatchObject({
      message_thread_id: 5,
      is_topic_message: true,
      from: { id: 1000 },
      entities: [
        { type: "bot_command", offset: 0, length: 12 },
        { type: "mention", offset: 16, length: 8 },
      ],
    });
  });

  it("rejects a waitFor that times out with the recent calls", async () => {
    await newBot().api.getMe();
    await expect(fake.waitFor("sendMessage", undefined, 50)).rejects.toThrow(
      /timed out after 50 ms.*\n.*getMe/,
    );
  });
});

describe("FakeTelegramBotApi control API", () => {
  it("pushes edits and callback queries that grammY routes", async () => {
    const bot = newBot();
    const edits: string[] = [];
    const callbacks: string[] = [];
    bot.on("edited_message:text", (ctx) => {
      edits.push(ctx.editedMessage.text);
    });
    bot.on("callback_query:data", async (ctx) => {
      callbacks.push(ctx.callbackQuery.data);
      await ctx.answerCallbackQuery("ok");
    });
    startPolling(bot);
    const original = fake.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "typo",
    });
    fake.pushEditedMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "fixed" });
    const keyboard = { inline_keyboard: [[{ text: "A", callback_data: "a" }]] };
    const sent = await bot.api.sendMessage(ANN.id, "pick", { reply_markup: keyboard });
    expect(sent.reply_markup).toEqual(keyboard);
    fake.pushCallbackQuery(TOKEN, { chatId: ANN.id, messageId: sent.message_id, from: ANN, data: "a" });
    await fake.waitFor("answerCallbackQuery");
    expect(edits).toEqual(["fixed"]);
    expect(callbacks).toEqual(["a"]);
    expect(fake.messagesInChat(ANN.id)[0]).toMatchObject({
      message_id: original.messageId,
      text: "fixed",
      edit_date: expect.any(Number),
    });
  });

  it("checks reply targets and marks forum topic messages", async () => {
    const bot = newBot();
    const error = await apiError(bot.api.sendMessage(ANN.id, "x", { reply_parameters: { message_id: 77 } }));
    expect(error.description).toBe("Bad Request: message to be replied not found");
    const lenient = await bot.api.sendMessage(ANN.id, "x", {
      reply_parameters: { message_id: 77, allow_sending_without_reply: true },
    });
    expect(lenient.reply_to_message).toBeUndefined();
    fake.pushMessage(TOKEN, {
      chat: { id: -1001, type: "supergroup", title: "Team", is_forum: true },
      text: "question",
      messageThreadId: 9,
      isTopicMessage: true,
    });
    const inTopic = await bot.api.sendMessage(-1001, "answer", { message_thread_id: 9 });
    expect(inTopic).toMatchObject({
      message_thread_id: 9,
      is_topic_message: true,
      chat: { id: -1001, type: "supergroup", title: "Team", is_forum: true },
    });
    const badCommand = await apiError(bot.api.setMyCommands([{ command: "Help", description: "x" }]));
    expect(badCommand.description).toBe("Bad Request: BOT_COMMAND_INVALID");
  });

  it("drops pending updates on deleteWebhook with drop_pending_updates", async () => {
    fake.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, text: "old" });
    expect(fake.pendingUpdates(TOKEN)).toBe(1);
    await newBot().api.deleteWebhook({ drop_pending_updates: true });
    expect(fake.pendingUpdates(TOKEN)).toBe(0);
  });

  it("close() answers a held long poll with [] and rejects pending waitFors", async () => {
    const poll = rawCall(TOKEN, "getUpdates", { timeout: 30 });
    await fake.waitFor("getUpdates");
    const waiting = fake.waitFor("sendMessage", undefined, 10_000).catch((error: unknown) => error);
    await fake.close();
    expect(await poll).toEqual({ status: 200, json: { ok: true, result: [] } });
    expect(String(await waiting)).toMatch(/closed while waiting/);
  });
});

describe("FakeTelegramBotApi webhooks with grammY webhookCallback", () => {
  async function webhookServer(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const server: Server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(resolve);
        }),
    );
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }

  it("delivers with the secret, executes webhook replies, rejects a wrong secret, and 409s getUpdates", async () => {
    const bot = new Bot(TOKEN, {
      client: { apiRoot: fake.apiRoot, canUseWebhookReply: (method) => method === "sendChatAction" },
    });
    const texts: string[] = [];
    bot.on("message:text", async (ctx) => {
      texts.push(ctx.message.text);
      await ctx.replyWithChatAction("typing"); // returned in the webhook answer
      await ctx.reply("got it"); // a normal API call
    });
    const url = await webhookServer(webhookCallback(bot, "http", { secretToken: "s3cret" }));
    await bot.api.setWebhook(url, { secret_token: "s3cret" });
    expect(await bot.api.getWebhookInfo()).toMatchObject({ url, pending_update_count: 0 });

    const pushed = fake.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "hook",
    });
    const action = await fake.waitFor("sendChatAction");
    expect(action).toMatchObject({ viaWebhookReply: true, params: { chat_id: ANN.id, action: "typing" } });
    expect(texts).toEqual(["hook"]);
    await fake.waitFor("sendMessage"); // made after the webhook answer went out
    expect(fake.sentMessages().map((m) => m.text)).toEqual(["got it"]);
    expect(fake.webhookDeliveries).toMatchObject([{ updateId: pushed.updateId, status: 200, attempt: 1 }]);
    expect(fake.pendingUpdates(TOKEN)).toBe(0);

    const update = {
      message: { message_id: 99, date: 0, chat: { id: ANN.id, type: "private" }, text: "forged" },
    };
    expect(await fake.deliverWebhook(TOKEN, update, { secretToken: "wrong" })).toBe(401);
    expect(await fake.deliverWebhook(TOKEN, update, { secretToken: undefined })).toBe(401);
    expect(texts).toEqual(["hook"]);

    const conflict = await apiError(bot.api.getUpdates());
    expect([conflict.error_code, conflict.description]).toEqual([
      409,
      "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    ]);
    await bot.api.deleteWebhook();
    expect(await bot.api.getUpdates({ timeout: 0 })).toEqual([]);
  });

  it("retries a failing webhook a bounded number of times", async () => {
    let hits = 0;
    const url = await webhookServer((_req, res) => {
      hits += 1;
      res.writeHead(hits === 1 ? 500 : 200).end();
    });
    await rawCall(TOKEN, "setWebhook", { url });
    const first = fake.pushUpdate(TOKEN, {
      message: { message_id: 1, date: 0, chat: { id: 1, type: "private" } },
    });
    await until(() => fake.webhookDeliveries.length === 2, "the retried delivery");
    expect(fake.webhookDeliveries.map((d) => [d.updateId, d.status, d.attempt])).toEqual([
      [first, 500, 1],
      [first, 200, 2],
    ]);
    expect(fake.pendingUpdates(TOKEN)).toBe(0);

    await rawCall(TOKEN, "setWebhook", { url: url.replace(/:\d+\//, ":1/") }); // nothing listens there
    const lost = fake.pushUpdate(TOKEN, {
      message: { message_id: 2, date: 0, chat: { id: 1, type: "private" } },
    });
    await until(
      () => fake.webhookDeliveries.filter((d) => d.updateId === lost).length === 3,
      "three attempts",
    );
    await until(() => fake.pendingUpdates(TOKEN) === 0, "the update given up");
    const info = (await rawCall(TOKEN, "getWebhookInfo", {})).json;
    expect(info).toMatchObject({
      result: { pending_update_count: 0, last_error_message: expect.any(String) },
    });
  });
});

describe("parseTelegramHtml (TDLib cases)", () => {
  it("matches TDLib on nesting, entities, pre/code languages and offsets", () => {
    expect(parseTelegramHtml("🏟 🏟&lt;<i>a</i   >")).toEqual({
      text: "🏟 🏟<a",
      entities: [{ type: "italic", offset: 6, length: 1 }],
    });
    expect(parseTelegramHtml('🏟 🏟&lt;<pre><code class="language-fift">🏟 🏟&lt;</></>').entities).toEqual([
      { type: "pre", offset: 6, length: 6, language: "fift" },
    ]);
    expect(parseTelegramHtml("<code><i><b> </b></i></code>").entities.map((e) => e.type)).toEqual([
      "code",
      "bold",
      "italic",
    ]);
    expect(parseTelegramHtml("<blockquote expandable>q</blockquote>").entities).toEqual([
      { type: "expandable_blockquote", offset: 0, length: 1 },
    ]);
    expect(parseTelegramHtml("&#128512;&#x41;&quot;").text).toBe('😀A"');
    expect(parseTelegramHtml("a & b", { strictAmpersand: false }).text).toBe("a & b");
    expect(() => parseTelegramHtml("🏟 🏟&lt;<i>a</em   >")).toThrow(
      'Unmatched end tag at byte offset 17, expected "</i>", found "</em>"',
    );
    expect(() => parseTelegramHtml("🏟 🏟&lt;<abacaba")).toThrow("Unclosed start tag at byte offset 13");
    expect(() => parseTelegramHtml("🏟 🏟&lt;</")).toThrow("Unexpected end tag at byte offset 13");
  });
});
