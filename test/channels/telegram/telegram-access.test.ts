/**
 * Access control end to end through Telegram: the real gateway and grammY against the fake Bot
 * API, the model simulator behind the Anthropic SDK. Who reaches the model (DM and group
 * policies, mentions, replies, patterns, commands for other bots), what unknown people get
 * (pairing codes, at most three pending), approvals across a restart, and the chat commands
 * answered through the outbox.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../../fakes/telegram-bot-api.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../../helpers/test-gateway.js";
import { until } from "../../helpers/until.js";

const TOKEN = "345678:AAaccess-token-for-the-fake-bot-api-0";
const BOT = { token: TOKEN, id: 345678, username: "access_bot", firstName: "Access" };
const ANN = { id: 42, first_name: "Ann" };
const BOB = { id: 43, first_name: "Bob" };
const GROUP = { id: -1001, type: "supergroup" as const, title: "Team" };
const OTHER_GROUP = { id: -1002, type: "supergroup" as const, title: "Elsewhere" };

let sim: ModelSimulator | undefined;
let tg: FakeTelegramBotApi | undefined;
let gw: TestGateway | undefined;
let home: string | undefined;

afterEach(async () => {
  await gw?.stop();
  await tg?.close();
  await sim?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  gw = undefined;
  tg = undefined;
  sim = undefined;
  home = undefined;
});

async function setup(telegram: Record<string, unknown> = {}) {
  sim = new ModelSimulator();
  await sim.start();
  tg = new FakeTelegramBotApi();
  await tg.start();
  tg.addBot(BOT);
  home = mkdtempSync(join(tmpdir(), "sy-tg-access-"));
  const config = configFor(sim, tg, telegram);
  gw = await startTestGateway(config, { home });
  return { sim, tg, gw, config, home };
}

function configFor(s: ModelSimulator, fake: FakeTelegramBotApi, telegram: Record<string, unknown>) {
  return {
    ...simulatorConfig(s, "anthropic"),
    channels: {
      telegram: { token: TOKEN, apiRoot: fake.apiRoot, allowFrom: [ANN.id], groups: [GROUP.id], ...telegram },
    },
  };
}

const dm = (from: typeof ANN, text: string) => ({
  chat: { id: from.id, type: "private" as const },
  from,
  text,
});

/** Waits until the bot has sent `n` messages to a chat; returns their texts in order. */
async function botSays(fake: FakeTelegramBotApi, chatId: number, n: number): Promise<string[]> {
  await until(() => fake.sentMessages({ chatId }).length >= n, `${n} messages to ${chatId}`);
  return fake.sentMessages({ chatId }).map((m) => m.text ?? "");
}

/**
 * Waits until the gateway confirmed the update: it was committed and routed (accepted,
 * rejected or answered as a command) before the offset moved past it.
 */
async function routed(fake: FakeTelegramBotApi, pushed: { updateId: number }): Promise<void> {
  await fake.waitFor("getUpdates", (c) => Number(c.params.offset) > pushed.updateId, 10_000);
}

/** Nothing was queued for the model: every routed message so far was rejected. */
async function nothingQueued(g: TestGateway): Promise<Record<string, number>> {
  const counts = await g.running.store.inbox.countByState();
  expect(counts.queued + counts.running + counts.answered + counts.failed).toBe(0);
  return counts;
}

describe("Telegram direct-message policy", () => {
  it("allowlist: answers allowFrom, and gives anyone else nothing — no code, no run", async () => {
    const { sim, tg, gw } = await setup({ dmPolicy: "allowlist" });
    await routed(tg, tg.pushMessage(TOKEN, dm(BOB, "let me in")));
    expect(tg.sentMessages({ chatId: BOB.id })).toHaveLength(0);
    expect((await nothingQueued(gw)).rejected).toBe(1);
    expect(await gw.running.store.pairing.listPending(Date.now())).toEqual([]);
    sim.script({ text: "Hi Ann." });
    tg.pushMessage(TOKEN, dm(ANN, "hello"));
    expect(await botSays(tg, ANN.id, 1)).toEqual(["Hi Ann."]);
    expect(sim.requests).toHaveLength(1);
  });

  it("open: answers a sender nobody approved", async () => {
    const { sim, tg } = await setup({ dmPolicy: "open" });
    sim.script({ text: "Hello, stranger." });
    tg.pushMessage(TOKEN, dm(BOB, "anyone there?"));
    expect(await botSays(tg, BOB.id, 1)).toEqual(["Hello, stranger."]);
  });

  it("disabled: answers no direct message, not even from allowFrom", async () => {
    const { sim, tg, gw } = await setup({ dmPolicy: "disabled" });
    await routed(tg, tg.pushMessage(TOKEN, dm(ANN, "hello?")));
    expect(tg.sentMessages()).toHaveLength(0);
    expect((await nothingQueued(gw)).rejected).toBe(1);
    expect(sim.requests).toHaveLength(0);
  });

  it("pairing: at most three codes wait for approval; a fourth stranger gets nothing", async () => {
    const { sim, tg, gw } = await setup();
    const strangers = [50, 51, 52, 53].map((id) => ({ id, first_name: `Stranger ${id}` }));
    for (const s of strangers.slice(0, 3)) {
      tg.pushMessage(TOKEN, dm(s, "hi"));
      const [code] = await botSays(tg, s.id, 1);
      expect(code).toMatch(/pairing code is [A-Z2-9]{8}/);
    }
    const fourth = strangers[3] as (typeof strangers)[number];
    await routed(tg, tg.pushMessage(TOKEN, dm(fourth, "hi")));
    const pending = await gw.running.store.pairing.listPending(Date.now());
    expect(pending.map((p) => p.senderId).sort()).toEqual(["50", "51", "52"]);
    // A code is committed to the outbox with the verdict, before the update is confirmed: the
    // fourth stranger has none, now or later.
    const outbox = await gw.running.store.outbox.countByState();
    expect(Object.values(outbox).reduce((a, b) => a + b, 0)).toBe(3);
    expect(tg.sentMessages({ chatId: fourth.id })).toHaveLength(0);
    expect(sim.requests).toHaveLength(0);
  });

  it("keeps approvals across a gateway restart with the same home", async () => {
    const { sim, tg, gw: first, config, home } = await setup();
    tg.pushMessage(TOKEN, dm(BOB, "hello?"));
    const [codeMessage] = await botSays(tg, BOB.id, 1);
    const code = /pairing code is ([A-Z2-9]{8})/.exec(codeMessage ?? "")?.[1] ?? "";
    expect(await first.running.store.pairing.approve("telegram", code, Date.now())).toBeDefined();
    await first.stop();
    gw = await startTestGateway(config, { home });
    sim.script({ text: "Welcome back, Bob." });
    tg.pushMessage(TOKEN, dm(BOB, "and now?"));
    expect((await botSays(tg, BOB.id, 2))[1]).toBe("Welcome back, Bob.");
  });
});

describe("Telegram group policy and mentions", () => {
  const say = (chat: typeof GROUP, from: typeof ANN, text: string, extra: Record<string, unknown> = {}) => ({
    chat,
    from,
    text,
    ...extra,
  });

  it("open: answers a mention in a group that is not in groups", async () => {
    const { sim, tg } = await setup({ groupPolicy: "open" });
    sim.script({ text: "Hello, elsewhere." });
    tg.pushMessage(TOKEN, say(OTHER_GROUP, ANN, "@access_bot hi"));
    expect(await botSays(tg, OTHER_GROUP.id, 1)).toEqual(["Hello, elsewhere."]);
  });

  it("disabled: answers no group, not even an allowlisted one", async () => {
    const { sim, tg, gw } = await setup({ groupPolicy: "disabled" });
    await routed(tg, tg.pushMessage(TOKEN, say(GROUP, ANN, "@access_bot hi")));
    expect(tg.sentMessages()).toHaveLength(0);
    expect((await nothingQueued(gw)).rejected).toBe(1);
    expect(sim.requests).toHaveLength(0);
  });

  it("requireMention false: answers every group message", async () => {
    const { sim, tg } = await setup({ requireMention: false });
    sim.script({ text: "No mention needed." });
    tg.pushMessage(TOKEN, say(GROUP, ANN, "what time is it?"));
    expect(await botSays(tg, GROUP.id, 1)).toEqual(["No mention needed."]);
  });

  it("gives a mentioned run at most groupHistoryLimit earlier messages", async () => {
    const { sim, tg } = await setup({ groupHistoryLimit: 2 });
    let last = { updateId: 0 };
    for (const text of ["first remark", "second remark", "third remark", "fourth remark"]) {
      last = tg.pushMessage(TOKEN, say(GROUP, BOB, text));
    }
    await routed(tg, last);
    sim.script({ text: "Caught up." });
    tg.pushMessage(TOKEN, say(GROUP, ANN, "@access_bot summary?"));
    await botSays(tg, GROUP.id, 1);
    const body = JSON.stringify(sim.requests[0]?.body);
    expect(body).toContain("Bob: third remark");
    expect(body).toContain("Bob: fourth remark");
    expect(body).not.toContain("second remark");
    expect(body).not.toContain("first remark");
  });

  it("answers a reply to one of its messages, and a configured mention pattern", async () => {
    const { sim, tg } = await setup({ mentionPatterns: ["\\bclaw\\b"] });
    sim.script({ text: "First answer." }, { text: "Replying to the reply." }, { text: "Pattern heard." });
    tg.pushMessage(TOKEN, say(GROUP, ANN, "@access_bot start"));
    await botSays(tg, GROUP.id, 1);
    const botMessage = tg.sentMessages({ chatId: GROUP.id })[0]?.message_id as number;
    tg.pushMessage(TOKEN, say(GROUP, BOB, "thanks, and then?", { replyToMessageId: botMessage }));
    expect((await botSays(tg, GROUP.id, 2))[1]).toBe("Replying to the reply.");
    tg.pushMessage(TOKEN, say(GROUP, BOB, "hey Claw, one more"));
    expect((await botSays(tg, GROUP.id, 3))[2]).toBe("Pattern heard.");
    expect(sim.requests).toHaveLength(3);
  });

  it("treats a command for another bot as not addressed to it", async () => {
    const { sim, tg, gw } = await setup();
    await routed(tg, tg.pushMessage(TOKEN, say(GROUP, ANN, "/roll 2d6")));
    await routed(tg, tg.pushMessage(TOKEN, say(GROUP, ANN, "/status@dice_bot")));
    await routed(tg, tg.pushMessage(TOKEN, say(GROUP, ANN, "/new@dice_bot @access_bot")));
    expect(tg.sentMessages()).toHaveLength(0);
    expect((await nothingQueued(gw)).rejected).toBe(3);
    expect(sim.requests).toHaveLength(0);
  });
});

describe("Telegram chat commands", () => {
  it("answers /help, /status and /new through the outbox, threaded, without a run", async () => {
    const { sim, tg, gw } = await setup();
    sim.script({ text: "Noted." });
    tg.pushMessage(TOKEN, dm(ANN, "remember this"));
    await botSays(tg, ANN.id, 1);
    const sessionKey = `agent:main:telegram:dm:${ANN.id}`;
    const before = await gw.running.store.sessions.get(sessionKey);
    const help = tg.pushMessage(TOKEN, dm(ANN, "/help"));
    expect((await botSays(tg, ANN.id, 2))[1]).toContain("/new — start a fresh session");
    tg.pushMessage(TOKEN, dm(ANN, "/status"));
    expect((await botSays(tg, ANN.id, 3))[2]).toContain(`Session: ${sessionKey}`);
    tg.pushMessage(TOKEN, dm(ANN, "/new"));
    expect((await botSays(tg, ANN.id, 4))[3]).toMatch(/^Started a new session/);
    const after = await gw.running.store.sessions.get(sessionKey);
    expect(after?.sessionId).not.toBe(before?.sessionId);
    expect(sim.requests).toHaveLength(1);
    // Each answer is an outbox notice, recorded as sent (just after Telegram took it).
    const notices = async () =>
      (await gw.running.store.outbox.listByState("sent", 10)).filter((r) => r.kind === "notice");
    await until(async () => (await notices()).length >= 3, "three notices recorded as sent");
    expect(await notices()).toHaveLength(3);
    const helpSend = tg.calls.find(
      (c) => c.method === "sendMessage" && String(c.params.text).includes("/new — start a fresh session"),
    );
    expect(JSON.stringify(helpSend?.params.reply_parameters)).toContain(`"message_id":${help.messageId}`);
  });

  it("answers its own bare command in a group (it addresses the bot)", async () => {
    const { sim, tg } = await setup();
    tg.pushMessage(TOKEN, { chat: GROUP, from: ANN, text: "/status" });
    const [status] = await botSays(tg, GROUP.id, 1);
    expect(status).toContain(`Session: agent:main:telegram:default:group:${GROUP.id}`);
    expect(sim.requests).toHaveLength(0);
  });
});
