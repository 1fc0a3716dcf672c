/**
 * Several bot accounts and webhook mode, end to end: the real gateway and grammY against the
 * fake Bot API. Webhook updates reach the gateway through a forwarding proxy standing in for the
 * public HTTPS endpoint (the gateway's own port is only known once it listens).
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../../fakes/telegram-bot-api.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../../helpers/test-gateway.js";
import { until } from "../../helpers/until.js";

const ALPHA = { token: "111111:AAalpha-token-for-the-fake-bot-api", id: 111111, username: "alpha_bot" };
const BETA = { token: "222222:BBbeta-token-for-the-fake-bot-api0", id: 222222, username: "beta_bot" };
const ANN = { id: 42, first_name: "Ann" };
const GROUP = { id: -1001, type: "supergroup" as const, title: "Team" };
const SECRET = "webhook-secret_1";

let sim: ModelSimulator | undefined;
let tg: FakeTelegramBotApi | undefined;
let gw: TestGateway | undefined;
let proxy: Server | undefined;

afterEach(async () => {
  await gw?.stop();
  await tg?.close();
  await sim?.close();
  if (proxy) {
    const p = proxy;
    await new Promise<void>((r) => p.close(() => r()));
    p.closeAllConnections();
  }
  gw = undefined;
  tg = undefined;
  sim = undefined;
  proxy = undefined;
});

async function fakes() {
  sim = new ModelSimulator();
  await sim.start();
  tg = new FakeTelegramBotApi();
  await tg.start();
  tg.addBot(ALPHA);
  tg.addBot(BETA);
  return { sim, tg };
}

/** The "public" endpoint: forwards every request, path and headers as they are, to the gateway. */
async function startProxy(target: () => string | undefined): Promise<string> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const base = target();
    if (!base) {
      res.writeHead(502).end();
      return;
    }
    const headers: Record<string, string> = { "content-type": String(req.headers["content-type"] ?? "") };
    const secret = req.headers["x-telegram-bot-api-secret-token"];
    if (typeof secret === "string") headers["x-telegram-bot-api-secret-token"] = secret;
    const answer = await fetch(`${base}${req.url}`, {
      method: req.method,
      headers,
      body: Buffer.concat(chunks),
    });
    res.writeHead(answer.status).end(Buffer.from(await answer.arrayBuffer()));
  });
  proxy = server;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function botSays(fake: FakeTelegramBotApi, filter: { token?: string; chatId: number }, n: number) {
  await until(() => fake.sentMessages(filter).length >= n, `${n} messages to ${filter.chatId}`);
  return fake.sentMessages(filter).map((m) => m.text ?? "");
}

describe("Telegram with several bot accounts", () => {
  it("answers through each bot in one group, in separate sessions, with the right token", async () => {
    const { sim, tg } = await fakes();
    gw = await startTestGateway({
      ...simulatorConfig(sim, "anthropic"),
      channels: {
        telegram: {
          apiRoot: tg.apiRoot,
          groups: [GROUP.id],
          accounts: { alpha: { token: ALPHA.token }, beta: { token: BETA.token } },
        },
      },
    });
    sim.script({ text: "Alpha here." }, { text: "Beta here." });
    tg.pushMessage(ALPHA.token, { chat: GROUP, from: ANN, text: "@alpha_bot who are you?" });
    await botSays(tg, { token: ALPHA.token, chatId: GROUP.id }, 1);
    tg.pushMessage(BETA.token, { chat: GROUP, from: ANN, text: "@beta_bot and you?" });
    await botSays(tg, { token: BETA.token, chatId: GROUP.id }, 1);
    expect(tg.sentMessages({ token: ALPHA.token }).map((m) => m.text)).toEqual(["Alpha here."]);
    expect(tg.sentMessages({ token: BETA.token }).map((m) => m.text)).toEqual(["Beta here."]);
    const store = gw.running.store;
    const alpha = await store.sessions.get(`agent:main:telegram:alpha:group:${GROUP.id}`);
    const beta = await store.sessions.get(`agent:main:telegram:beta:group:${GROUP.id}`);
    expect(alpha && beta && alpha.sessionId !== beta.sessionId).toBe(true);
    // Beta's run did not see alpha's conversation.
    expect(JSON.stringify(sim.requests[1]?.body)).not.toContain("who are you");
  });
});

describe("Telegram webhook mode through the gateway", () => {
  it("commits and answers updates with the right secret; a wrong or missing secret gets 401 and nothing", async () => {
    const { sim, tg } = await fakes();
    let gatewayUrl: string | undefined;
    const publicUrl = await startProxy(() => gatewayUrl);
    const g = await startTestGateway({
      ...simulatorConfig(sim, "anthropic"),
      channels: {
        telegram: {
          token: ALPHA.token,
          apiRoot: tg.apiRoot,
          allowFrom: [ANN.id],
          mode: "webhook",
          webhook: { url: `${publicUrl}/telegram/default`, secret: SECRET },
        },
      },
    });
    gw = g;
    gatewayUrl = g.url;
    const setWebhook = await tg.waitFor("setWebhook");
    expect(setWebhook.params).toMatchObject({ url: `${publicUrl}/telegram/default`, secret_token: SECRET });

    sim.script({ text: "Hello over the webhook." });
    tg.pushMessage(ALPHA.token, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "hi" });
    expect(await botSays(tg, { chatId: ANN.id }, 1)).toEqual(["Hello over the webhook."]);
    expect(tg.webhookDeliveries.map((d) => d.status)).toEqual([200]);
    expect(tg.pendingUpdates(ALPHA.token)).toBe(0);

    const inboxRows = async () =>
      Object.values(await g.running.store.inbox.countByState()).reduce((a, b) => a + b, 0);
    const before = await inboxRows();
    const sneaky = {
      message: { message_id: 900, date: 0, chat: { id: ANN.id, type: "private" }, from: ANN, text: "sneaky" },
    };
    expect(await tg.deliverWebhook(ALPHA.token, sneaky, { secretToken: "wrong-secret" })).toBe(401);
    expect(await tg.deliverWebhook(ALPHA.token, sneaky, { secretToken: undefined })).toBe(401);
    expect(await inboxRows()).toBe(before);
    expect(sim.requests).toHaveLength(1);
  });

  it("gives each account sharing one webhook setting its own URL and route", async () => {
    const { sim, tg } = await fakes();
    let gatewayUrl: string | undefined;
    const publicUrl = await startProxy(() => gatewayUrl);
    gw = await startTestGateway({
      ...simulatorConfig(sim, "anthropic"),
      channels: {
        telegram: {
          apiRoot: tg.apiRoot,
          allowFrom: [ANN.id],
          mode: "webhook",
          webhook: { url: `${publicUrl}/telegram`, secret: SECRET },
          accounts: { alpha: { token: ALPHA.token }, beta: { token: BETA.token } },
        },
      },
    });
    gatewayUrl = gw.url;
    const urls = tg.calls.filter((c) => c.method === "setWebhook").map((c) => [c.token, c.params.url]);
    expect(urls).toEqual(
      expect.arrayContaining([
        [ALPHA.token, `${publicUrl}/telegram/alpha`],
        [BETA.token, `${publicUrl}/telegram/beta`],
      ]),
    );
    sim.script({ text: "From alpha." }, { text: "From beta." });
    tg.pushMessage(ALPHA.token, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "alpha?" });
    await botSays(tg, { token: ALPHA.token, chatId: ANN.id }, 1);
    tg.pushMessage(BETA.token, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "beta?" });
    await botSays(tg, { token: BETA.token, chatId: ANN.id }, 1);
    expect(tg.sentMessages({ token: ALPHA.token }).map((m) => m.text)).toEqual(["From alpha."]);
    expect(tg.sentMessages({ token: BETA.token }).map((m) => m.text)).toEqual(["From beta."]);
  });
});
