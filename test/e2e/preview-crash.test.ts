/**
 * A streaming preview outlives a SIGKILL: the gateway is killed while a turn's preview shows
 * half an answer, restarted, and the chat ends with exactly one bot message — the preview,
 * edited into the redone turn's whole answer — on Telegram, Slack and Discord. On Slack and
 * Discord also when the kill lands after the platform stored the preview but before the gateway
 * learned its id (nothing recorded): the redone turn finds it in the chat — on Discord also when
 * the redone turn's whole answer streamed while the restarted bot was not logged in yet (its reply
 * looks when it is sent). Real grammY, Bolt and discord.js against the fakes; the gateway is a
 * child process on a fresh home per case.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeDiscord } from "../fakes/discord-api.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeSlack } from "../fakes/slack-api.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { type GatewayProcess, spawnGateway } from "../helpers/gateway-process.js";
import { until } from "../helpers/until.js";

/** An answer that streams for ~4 s: long enough to be killed mid-stream after a preview edit. */
const CUT = {
  text: "This answer is interrupted by a crash half-way through, so the chat must not keep it.",
  chunkDelayMs: 250,
};
const WHOLE = "The whole answer, given after the restart.";

let sim: ModelSimulator;
const homes: string[] = [];
const live = new Set<GatewayProcess>();
beforeAll(async () => {
  sim = new ModelSimulator();
  await sim.start();
});
afterAll(async () => {
  for (const gw of live) await gw.kill("SIGKILL");
  await sim.close();
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** A fresh home whose config has the model simulator and `channel` (YAML lines under channels:). */
function newHome(channel: string[]): string[] {
  const home = mkdtempSync(join(tmpdir(), "sy-preview-crash-"));
  homes.push(home);
  const config = join(home, "switchyard.yaml");
  writeFileSync(
    config,
    [
      "agent:",
      "  model: anthropic/claude-test",
      "gateway:",
      "  leaseTtlMs: 600000", // a takeover that waited for the lease would time the test out
      "providers:",
      "  anthropic:",
      "    apiKey: sk-ant-test-key",
      `    baseUrl: ${sim.url}`,
      "channels:",
      ...channel.map((l) => `  ${l}`),
      "logging:",
      "  level: warn",
    ].join("\n"),
  );
  return ["--home", home, "--config", config, "--port", "0"];
}

/** Reply chunks the gateway of `args` (a `newHome`) has committed, read from its store. */
function committedReplies(args: string[]): number {
  const db = new BetterSqlite3(join(args[1] as string, "switchyard.db"), { readonly: true, timeout: 5_000 });
  try {
    return (db.prepare("SELECT count(*) AS n FROM outbox").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

async function start(args: string[]): Promise<GatewayProcess> {
  const gw = await spawnGateway(args);
  live.add(gw);
  return gw;
}

async function stop(gw: GatewayProcess, signal: NodeJS.Signals): Promise<void> {
  await gw.kill(signal);
  live.delete(gw);
}

describe("Telegram: a preview left by a SIGKILL", () => {
  const TOKEN = "777001:AApreview-crash-token-for-the-fake-00";
  let tg: FakeTelegramBotApi;
  beforeAll(async () => {
    tg = new FakeTelegramBotApi();
    await tg.start();
    tg.addBot({ token: TOKEN, id: 777001, username: "preview_bot" });
  });
  afterAll(() => tg.close());

  const botTexts = () =>
    tg
      .messagesInChat(42)
      .filter((m) => m.from?.id === 777001)
      .map((m) => m.text);

  it("becomes the redone turn's answer: one message in the chat", async () => {
    const args = newHome([
      "telegram:",
      `  token: "${TOKEN}"`,
      `  apiRoot: ${tg.apiRoot}`,
      "  allowFrom: [42]",
      "  streaming: edit",
    ]);
    let gw = await start(args);
    await tg.waitFor("getUpdates", undefined, 10_000);
    sim.script(CUT);
    const edits = tg.calls.filter((c) => c.method === "editMessageText").length;
    tg.pushMessage(TOKEN, {
      chat: { id: 42, type: "private" },
      from: { id: 42, first_name: "Ann" },
      text: "tell me",
    });
    // An edit follows the preview's post and its record: the preview is durable now.
    await until(
      () => tg.calls.filter((c) => c.method === "editMessageText").length > edits,
      "a preview edit",
      15_000,
    );
    await stop(gw, "SIGKILL");
    expect(botTexts()).toHaveLength(1);
    expect(botTexts()[0]).not.toBe(CUT.text);

    sim.script({ text: WHOLE });
    gw = await start(args);
    await until(() => botTexts().includes(WHOLE), "the answer after restart", 15_000);
    await stop(gw, "SIGTERM"); // drains: anything still due would be sent before it exits
    expect(botTexts()).toEqual([WHOLE]);
  }, 60_000);
});

describe("Slack: a preview left by a SIGKILL", () => {
  let fake: FakeSlack;
  beforeAll(async () => {
    fake = new FakeSlack();
    await fake.start();
    fake.addUser({ id: "UANN", name: "ann" });
    fake.addChannel({ id: "D1", name: "", kind: "im", user: "UANN" });
    fake.addChannel({ id: "D2", name: "", kind: "im", user: "UANN" });
  });
  afterAll(() => fake.close());

  const slackArgs = () =>
    newHome([
      "slack:",
      `  botToken: ${fake.botToken}`,
      `  appToken: ${fake.appToken}`,
      `  apiUrl: ${fake.apiUrl}`,
      "  allowFrom: [UANN]",
      "  socketPingTimeoutMs: 200",
      "  streaming: edit",
    ]);
  const botTexts = (channel: string) =>
    fake
      .history(channel)
      .filter((m) => m.bot_id)
      .map((m) => m.text);

  it("recorded: becomes the redone turn's answer", async () => {
    const args = slackArgs();
    let gw = await start(args);
    sim.script(CUT);
    await fake.userMessage({ channel: "D1", user: "UANN", text: "tell me" });
    await until(() => fake.calls("chat.update").length > 0, "a preview edit", 15_000);
    await stop(gw, "SIGKILL");
    expect(botTexts("D1")).toHaveLength(1);

    sim.script({ text: WHOLE });
    gw = await start(args);
    await until(() => botTexts("D1").includes(WHOLE), "the answer after restart", 15_000);
    await stop(gw, "SIGTERM");
    expect(botTexts("D1")).toEqual([WHOLE]);
  }, 60_000);

  it("stored by Slack but never recorded: found by its metadata, not posted twice", async () => {
    const args = slackArgs();
    let gw = await start(args);
    sim.script(CUT);
    fake.failNext("chat.postMessage", { hangAfter: true }); // the preview is stored; its answer never comes
    await fake.userMessage({ channel: "D2", user: "UANN", text: "tell me" });
    await until(() => botTexts("D2").length === 1, "the stored preview", 15_000);
    await stop(gw, "SIGKILL");

    sim.script({ text: WHOLE });
    gw = await start(args);
    await until(() => botTexts("D2").includes(WHOLE), "the answer after restart", 15_000);
    await stop(gw, "SIGTERM");
    expect(botTexts("D2")).toEqual([WHOLE]);
    expect(fake.calls("chat.postMessage").filter((c) => c.params.channel === "D2")).toHaveLength(1);
  }, 60_000);
});

describe("Discord: a preview left by a SIGKILL", () => {
  const TOKEN = "fake-discord-preview-crash-token-0123";
  const ANN = { id: "400000000000000011", username: "ann" };
  const BOB = { id: "400000000000000012", username: "bob" };
  const CAY = { id: "400000000000000013", username: "cay" };
  let fake: FakeDiscord;
  beforeAll(async () => {
    fake = new FakeDiscord({ token: TOKEN });
    await fake.start();
  });
  afterAll(() => fake.close());

  const discordArgs = () =>
    newHome([
      "discord:",
      `  token: ${TOKEN}`,
      `  apiUrl: ${fake.apiUrl}`,
      "  dmPolicy: open",
      "  streaming: edit",
    ]);
  const botTexts = (channel: string) => fake.botMessages(channel).map((m) => m.content);

  it("recorded: becomes the redone turn's answer", async () => {
    const args = discordArgs();
    let gw = await start(args);
    const dm = fake.dmChannelOf(ANN.id);
    sim.script(CUT);
    const edits = fake.edits.length;
    fake.dm({ author: ANN, content: "tell me" });
    await until(() => fake.edits.length > edits, "a preview edit", 15_000);
    await stop(gw, "SIGKILL");
    expect(botTexts(dm)).toHaveLength(1);

    sim.script({ text: WHOLE });
    gw = await start(args);
    await until(() => botTexts(dm).includes(WHOLE), "the answer after restart", 15_000);
    await stop(gw, "SIGTERM");
    expect(botTexts(dm)).toEqual([WHOLE]);
  }, 60_000);

  it("stored by Discord but never recorded: found as the bot's reply to the message, not posted twice", async () => {
    const args = discordArgs();
    let gw = await start(args);
    const dm = fake.dmChannelOf(BOB.id);
    sim.script(CUT);
    fake.failNext({ method: "POST", route: "/channels/:channel/messages" }, { hangAfter: true });
    fake.dm({ author: BOB, content: "tell me" });
    await until(() => botTexts(dm).length === 1, "the stored preview", 15_000);
    await stop(gw, "SIGKILL");

    sim.script({ text: WHOLE });
    gw = await start(args);
    await until(() => botTexts(dm).includes(WHOLE), "the answer after restart", 15_000);
    await stop(gw, "SIGTERM");
    expect(botTexts(dm)).toEqual([WHOLE]);
    expect(fake.sent.filter((s) => s.channelId === dm)).toHaveLength(1);
  }, 60_000);

  it("stored but never recorded, and the redone turn answered before the bot logged in again: its reply takes it", async () => {
    const args = discordArgs();
    let gw = await start(args);
    const dm = fake.dmChannelOf(CAY.id);
    sim.script(CUT);
    fake.failNext({ method: "POST", route: "/channels/:channel/messages" }, { hangAfter: true });
    fake.dm({ author: CAY, content: "tell me" });
    await until(() => botTexts(dm).length === 1, "the stored preview", 15_000);
    await stop(gw, "SIGKILL");

    // The restart's login waits until the redone turn's whole answer streamed and was committed.
    sim.script({ text: WHOLE });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.failNext({ method: "GET", route: "/gateway/bot" }, { until: held });
    const starting = start(args);
    await until(() => committedReplies(args) > 0, "the reply committed before login", 15_000);
    release();
    gw = await starting;
    await until(() => botTexts(dm).includes(WHOLE), "the answer after restart", 15_000);
    await stop(gw, "SIGTERM");
    expect(botTexts(dm)).toEqual([WHOLE]);
  }, 60_000);
});
