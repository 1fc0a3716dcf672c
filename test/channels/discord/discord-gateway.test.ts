/**
 * Discord end to end: the real gateway and discord.js (gateway WebSocket and REST) against the
 * fake Discord server, with the model simulator behind the real Anthropic SDK.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/util/clock.js";
import { StoreError } from "../../../src/store/store-error.js";
import type { Store } from "../../../src/store/types.js";
import { ModelSimulator, type ModelSimulatorOptions } from "../../fakes/model-simulator.js";
import { FakeDiscord, type FakeDiscordOptions } from "../../fakes/discord-api.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../../helpers/test-gateway.js";
import { until, untilAdvancing } from "../../helpers/until.js";

const TOKEN = "fake-discord-token-for-gateway-tests";
const GUILD = "200000000000000001";
const GENERAL = "300000000000000001";
const OFFTOPIC = "300000000000000002";
const ANN = { id: "400000000000000001", username: "ann", global_name: "Ann" };
const BOB = { id: "400000000000000002", username: "bob" };

let sim: ModelSimulator | undefined;
let fake: FakeDiscord | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await fake?.close();
  await sim?.close();
  gw = undefined;
  fake = undefined;
  sim = undefined;
});

async function setup(
  discord: Record<string, unknown> = {},
  more: {
    sim?: ModelSimulatorOptions;
    fake?: FakeDiscordOptions;
    clock?: ManualClock;
    wrapStore?: (store: Store) => Store;
  } = {},
) {
  sim = new ModelSimulator(more.sim ?? {});
  await sim.start();
  fake = new FakeDiscord({
    token: TOKEN,
    heartbeatIntervalMs: 300,
    guilds: [
      {
        id: GUILD,
        name: "home",
        channels: [
          { id: GENERAL, name: "general" },
          { id: OFFTOPIC, name: "offtopic" },
        ],
      },
    ],
    ...more.fake,
  });
  await fake.start();
  gw = await startTestGateway(
    {
      ...simulatorConfig(sim, "anthropic"),
      channels: {
        discord: {
          token: TOKEN,
          apiUrl: fake.apiUrl,
          allowFrom: [ANN.id],
          guilds: { [GUILD]: { channels: [GENERAL] } },
          ...discord,
        },
      },
    },
    {
      ...(more.clock ? { clock: more.clock } : {}),
      ...(more.wrapStore ? { wrapStore: more.wrapStore } : {}),
    },
  );
  return { sim, fake, gw };
}

/** A store whose first inbox receive fails as a busy database does. */
function failFirstReceive(store: Store): Store {
  let failed = false;
  const receive = store.inbox.receive.bind(store.inbox);
  store.inbox.receive = async (...args) => {
    if (!failed) {
      failed = true;
      throw new StoreError("locked", "database is locked by another process (test)");
    }
    return receive(...args);
  };
  return store;
}

/** Waits until the bot has posted `n` messages in a channel; returns them. */
async function botPosts(f: FakeDiscord, channel: string, n: number) {
  await until(() => f.botMessages(channel).length >= n, `${n} bot messages in ${channel}`);
  return f.botMessages(channel);
}

describe("Discord channel", () => {
  it("answers a DM as a reply that pings nobody, with a nonce from its outbox row", async () => {
    const { sim, fake } = await setup();
    sim.script({ text: "Hello **Ann** @everyone" });
    const asked = fake.dm({ author: ANN, content: "hi" });
    const [reply] = await botPosts(fake, asked.channel_id, 1);
    expect(reply?.content).toBe("Hello **Ann** @everyone"); // Markdown kept; the ping is disarmed below
    const body = fake.sent.find((s) => s.messageId === reply?.id)?.body;
    expect(body).toMatchObject({
      enforce_nonce: true,
      allowed_mentions: { parse: [], replied_user: false },
      message_reference: { message_id: asked.id, fail_if_not_exists: false },
    });
    expect(String(body?.nonce)).toMatch(/^outbox-\d+-[0-9a-z]+$/);
    expect(fake.typingCount(asked.channel_id)).toBeGreaterThanOrEqual(1);
    // JSON over the gateway, no compression (no zlib-sync or erlpack in the tree), the four intents.
    expect(fake.connectionLog()[0]?.query).toEqual({ v: "10", encoding: "json" });
    expect(fake.identifyPayloads()[0]?.intents).toBe(1 | (1 << 9) | (1 << 12) | (1 << 15));
  });

  it("takes a message again when the store was busy, and its chat's next message waits behind it", async () => {
    const { sim, fake } = await setup({}, { wrapStore: failFirstReceive });
    // Answers the newest message: the last msg-N in the request.
    sim.setDefault((r) => ({
      text: `re: ${[...JSON.stringify(r.body).matchAll(/msg-[12]/g)].at(-1)?.[0] ?? "?"}`,
    }));
    const first = fake.dm({ author: ANN, content: "msg-1" });
    fake.dm({ author: ANN, content: "msg-2" });
    const posts = await botPosts(fake, first.channel_id, 2);
    // Discord redelivers nothing: m1's commit failed once (locked) and was retried; m2 waited.
    expect(posts.map((p) => p.content)).toEqual(["re: msg-1", "re: msg-2"]);
  });

  it("pairs an unknown DM sender, then answers once approved", async () => {
    const { sim, fake, gw } = await setup();
    const first = fake.dm({ author: BOB, content: "hello?" });
    const [codeMessage] = await botPosts(fake, first.channel_id, 1);
    const code = /pairing code is ([A-Z0-9]{8})/.exec(codeMessage?.content ?? "")?.[1];
    expect(code).toBeDefined();
    expect(sim.requests).toHaveLength(0);
    expect(await gw.running.store.pairing.approve("discord", code ?? "", Date.now())).toBeDefined();
    sim.script({ text: "Welcome, Bob." });
    fake.dm({ author: BOB, content: "hello again" });
    expect((await botPosts(fake, first.channel_id, 2))[1]?.content).toBe("Welcome, Bob.");
  });

  it("keeps an unaddressed channel message as context and answers a mention, a reply to it and a pattern", async () => {
    const { sim, fake, gw } = await setup({ mentionPatterns: ["\\bswitchy\\b"] });
    const bot = fake.botUser.id;
    fake.userMessage({ channelId: GENERAL, author: BOB, content: "lunch at noon?" });
    await until(
      async () => (await gw.running.store.inbox.countRejected()).groupContext === 1,
      "context kept",
    );
    expect(fake.botMessages(GENERAL)).toHaveLength(0);
    sim.script({ text: "Noon works." }, { text: "Still noon." }, { text: "Yes." });
    const mention = fake.userMessage({
      channelId: GENERAL,
      author: ANN,
      content: `<@!${bot}> does noon work?`,
    });
    const [reply] = await botPosts(fake, GENERAL, 1);
    expect(reply?.content).toBe("Noon works.");
    expect(reply?.message_reference?.message_id).toBe(mention.id);
    const firstPrompt = JSON.stringify(sim.requests[0]?.body);
    expect(firstPrompt).toContain("lunch at noon?");
    expect(firstPrompt).toContain("does noon work?");
    expect(firstPrompt).not.toContain(`<@!${bot}>`);
    // A reply to the bot's message addresses it, and the replied-to text reaches the model.
    fake.userMessage({ channelId: GENERAL, author: ANN, content: "really?", replyTo: reply?.id ?? "" });
    await botPosts(fake, GENERAL, 2);
    expect(JSON.stringify(sim.requests[1]?.body)).toContain("Noon works.");
    fake.userMessage({ channelId: GENERAL, author: ANN, content: "switchy, sure?" });
    await botPosts(fake, GENERAL, 3);
    expect(sim.requests).toHaveLength(3);
  });

  it("a thread is its own session inside its channel", async () => {
    const { sim, fake, gw } = await setup();
    const thread = fake.createThread({ parentId: GENERAL, name: "plans" });
    sim.script({ text: "in the thread" });
    fake.userMessage({ channelId: thread.id, author: ANN, content: `<@${fake.botUser.id}> plan it` });
    const [reply] = await botPosts(fake, thread.id, 1);
    expect(reply?.content).toBe("in the thread");
    const key = `agent:main:discord:default:group:${GENERAL}:thread:${thread.id}`;
    expect(await gw.running.store.sessions.get(key)).toBeDefined();
  });

  it("ignores bots, itself, system messages, edits and channels outside the allowlist", async () => {
    const { sim, fake, gw } = await setup();
    const bot = fake.botUser.id;
    fake.userMessage({
      channelId: GENERAL,
      author: { id: "999", username: "otherbot", bot: true },
      content: `<@${bot}> hi`,
    });
    fake.userMessage({ channelId: OFFTOPIC, author: ANN, content: `<@${bot}> not here` });
    fake.systemMessage(GENERAL, 7);
    sim.script({ text: "ok" });
    const typo = fake.dm({ author: ANN, content: "typo" });
    await botPosts(fake, typo.channel_id, 1);
    fake.editUserMessage(typo.channel_id, typo.id, "fixed");
    sim.script({ text: "again" });
    fake.dm({ author: ANN, content: "next" });
    await botPosts(fake, typo.channel_id, 2);
    expect(sim.requests).toHaveLength(2);
    expect(fake.botMessages(GENERAL)).toHaveLength(0);
    expect(fake.botMessages(OFFTOPIC)).toHaveLength(0);
    // The channel outside the allowlist was refused by the router, the bot's message never reached it.
    expect((await gw.running.store.inbox.countByState()).answered).toBe(2);
  });

  it("splits a 5,000-character reply with code into ordered messages, code intact", async () => {
    const { sim, fake } = await setup();
    const code = Array.from({ length: 60 }, (_, i) => `print("line ${i}")`).join("\n");
    const prose = Array.from(
      { length: 40 },
      (_, i) => `Sentence ${i} explains one more step of the plan.`,
    ).join(" ");
    const text = `${prose}\n\n\`\`\`python\n${code}\n\`\`\`\n\n${prose}\n\n${prose}`;
    expect(text.length).toBeGreaterThan(5_000);
    sim.script({ text });
    const asked = fake.dm({ author: ANN, content: "show me" });
    await until(() => fake.botMessages(asked.channel_id).length >= 6, "the reply chunks");
    const chunks = fake.botMessages(asked.channel_id).map((m) => m.content);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2_000);
      expect(chunk.split("\n").length).toBeLessThanOrEqual(17);
      expect(chunk.split("\n").filter((l) => l.startsWith("```")).length % 2).toBe(0);
    }
    const codeChunks = chunks.filter((c) => c.includes("print("));
    expect(codeChunks.every((c) => c.startsWith("```python\n") || !c.startsWith("```"))).toBe(true);
    const lines = chunks.flatMap((c) => c.split("\n")).filter((l) => l.startsWith("print("));
    expect(lines).toEqual(code.split("\n"));
    expect(chunks.join(" ").replace(/\s+/g, " ")).toContain("Sentence 39 explains");
  });

  it("a RECONNECT mid-run loses nothing, and a RESUME that replays a message answers it once", async () => {
    const { sim, fake, gw } = await setup({}, { sim: { firstByteDelayMs: 400 } });
    sim.script({ text: "first answer" }, { text: "second answer" });
    const first = fake.dm({ author: ANN, content: "one" });
    await until(() => sim?.requests.length === 1, "the first run started");
    const resumed = fake.waitForResume();
    await fake.reconnect();
    fake.dm({ author: ANN, content: "two" }); // sent while the bot is away: replayed on RESUME
    await resumed;
    await botPosts(fake, first.channel_id, 2);
    expect(fake.botMessages(first.channel_id).map((m) => m.content)).toEqual([
      "first answer",
      "second answer",
    ]);
    // Now a resume that replays both messages (and the bot's echoes) again: the inbox knows them.
    fake.replayOnResume(4);
    const again = fake.waitForResume();
    fake.dropConnection();
    await again;
    await until(
      async () => ((await gw.running.store.inbox.countByState()).answered ?? 0) >= 2,
      "both answered",
    );
    sim.script({ text: "third answer" });
    fake.dm({ author: ANN, content: "three" });
    await botPosts(fake, first.channel_id, 3);
    expect(fake.botMessages(first.channel_id).map((m) => m.content)).toEqual([
      "first answer",
      "second answer",
      "third answer",
    ]);
    expect(sim.requests).toHaveLength(3);
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(text).toMatch(/switchyard_channel_reconnects_total\{accountId="default",channel="discord"\} 2/);
    // The replayed "one" and "two" made no second row: discord.js drops a MESSAGE_CREATE it still
    // has cached, and one it no longer has would meet the inbox's key (the message id).
    expect(text).toMatch(/switchyard_inbound_total\{channel="discord",verdict="accepted"\} 3/);
  });

  it("answers slash commands ephemerally, registered in the configured server", async () => {
    const { fake, gw } = await setup();
    await until(() => fake.commands(GUILD).length > 0, "commands registered");
    expect(fake.commands(GUILD).map((c) => c.name)).toEqual(
      expect.arrayContaining(["new", "stop", "status", "help"]),
    );
    expect(fake.commands()).toHaveLength(0); // not globally: a server is configured
    const { response } = fake.interaction({ name: "status", channelId: GENERAL, user: ANN });
    const answer = await response;
    expect(answer.flags & 64).toBe(64);
    expect(answer.content).toMatch(/session/i);
    expect(fake.botMessages(GENERAL)).toHaveLength(0);
    const { response: help } = fake.interaction({
      name: "help",
      channelId: fake.dmChannelOf(ANN.id),
      user: ANN,
    });
    expect((await help).content).toContain("/new");
    // Answered in place: nothing waits in the outbox.
    expect((await gw.running.store.outbox.countByState()).pending ?? 0).toBe(0);
  });

  it("streams a preview edited in place, which the reply then becomes: one message", async () => {
    const { sim, fake } = await setup({ streaming: "edit" });
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    sim.script({ text: words, chunkDelayMs: 40 });
    const asked = fake.dm({ author: ANN, content: "stream please" });
    await until(
      () => fake.botMessages(asked.channel_id)[0]?.content === words && fake.edits.length > 0,
      "the final text in the preview",
    );
    expect(fake.botMessages(asked.channel_id)).toHaveLength(1);
    expect(fake.sent.filter((s) => s.channelId === asked.channel_id)).toHaveLength(1);
    expect(
      fake.edits.every(
        (e) => JSON.stringify(e.body.allowed_mentions) === '{"parse":[],"replied_user":false}',
      ),
    ).toBe(true);
  });

  it("saves an admitted sender's attachment, notes one over the cap, and downloads nothing for a stranger", async () => {
    const { sim, fake, gw } = await setup({ mediaMaxMb: 0.001 }); // about 1 KB
    sim.script({ text: "got it" });
    const asked = fake.dm({
      author: ANN,
      content: "files",
      attachments: [
        { name: "note.txt", contentType: "text/plain", bytes: Buffer.from("hello file") },
        { name: "big.bin", contentType: "application/octet-stream", bytes: Buffer.alloc(4_096, 1) },
      ],
    });
    await botPosts(fake, asked.channel_id, 1);
    const row = await gw.running.store.inbox.get(1);
    expect(row?.message.attachments.map((a) => a.name)).toEqual(["note.txt"]);
    expect(readFileSync(join(gw.running.workspaceDir, row?.message.attachments[0]?.path ?? ""), "utf8")).toBe(
      "hello file",
    );
    expect(row?.message.text).toMatch(
      /\[attachment big\.bin not downloaded: 4(\.0)? KB is over the .* limit \(channels\.discord\.mediaMaxMb\)/,
    );
    const stranger = fake.dm({
      author: BOB,
      content: "take this",
      attachments: [{ name: "x.txt", contentType: "text/plain", bytes: Buffer.from("x") }],
    });
    await botPosts(fake, stranger.channel_id, 1); // the pairing code
    // Fetched: note.txt only. big.bin was refused by its declared size, the stranger's never asked for.
    expect(fake.calls({ path: /\/cdn\// }).map((c) => c.path)).toEqual([expect.stringMatching(/note\.txt$/)]);
  });

  it("sits out a short 429 in the library; hands a long one to the outbox, which posts after Retry-After", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, fake, gw } = await setup({}, { clock });
    const route = { method: "POST", route: "/channels/:id/messages" };
    sim.script({ text: "after a short wait" }, { text: "after a long wait" });
    fake.failNext(route, { status: 429, retryAfterSec: 0.05 });
    const asked = fake.dm({ author: ANN, content: "one" });
    await botPosts(fake, asked.channel_id, 1);
    // Sent on the first attempt: the library waited, the outbox saw no failure.
    const sent = () => gw.running.store.outbox.listByState("sent", 5);
    await until(async () => (await sent()).length === 1, "the reply recorded");
    expect((await sent()).map((r) => r.attempts)).toEqual([0]);
    fake.failNext(route, { status: 429, retryAfterSec: 30, bucketHeaders: false });
    fake.dm({ author: ANN, content: "two" });
    const limited = () =>
      fake?.calls({ method: "POST", path: /\/messages$/ }).filter((c) => c.status === 429) ?? [];
    await until(() => limited().length === 2, "the long 429");
    expect(fake.botMessages(asked.channel_id)).toHaveLength(1);
    await untilAdvancing(clock, () => fake.botMessages(asked.channel_id).length === 2, "the retried post");
    expect(fake.botMessages(asked.channel_id).map((m) => m.content)).toEqual([
      "after a short wait",
      "after a long wait",
    ]);
  });

  it("a chunk sent again with the same idempotency key posts once: Discord answers the nonce with the first message", async () => {
    const { fake, gw } = await setup();
    const channel = gw.running.channels.list().find((c) => c.name === "discord");
    const chatId = fake.dmChannelOf(ANN.id);
    const chunk = {
      channel: "discord" as const,
      accountId: "default",
      chatId,
      text: "only once",
      idempotencyKey: "outbox-7-mi1x6ka0",
    };
    const first = await channel?.send(chunk);
    const again = await channel?.send(chunk);
    expect(again?.platformMessageId).toBe(first?.platformMessageId);
    expect(fake.botMessages(chatId).map((m) => m.content)).toEqual(["only once"]);
    expect(fake.sent.map((s) => [s.body.nonce, s.deduplicated])).toEqual([
      ["outbox-7-mi1x6ka0", false],
      ["outbox-7-mi1x6ka0", true],
    ]);
  });

  it("a 403 is not retried and the reply shows as dead with what to fix", async () => {
    const { sim, fake, gw } = await setup();
    sim.script({ text: "cannot post" });
    fake.failNext({ method: "POST", route: "/channels/:id/messages" }, { status: 403, code: 50001 });
    fake.dm({ author: ANN, content: "hi" });
    await until(async () => ((await gw.running.store.outbox.countByState()).dead ?? 0) === 1, "dead row");
    const [dead] = await gw.running.store.outbox.listByState("dead", 5);
    expect(dead?.attempts).toBe(1);
    expect(dead?.lastError).toMatch(/Missing Access: give the bot View Channel and Send Messages/);
  });
});

describe("Discord across a restart", () => {
  it("answers a message sent while the gateway was down (Discord does not redeliver it), once", async () => {
    const { sim, fake, gw: before } = await setup();
    sim.script({ text: "first answer" }, { text: "answer to the missed one" });
    const first = fake.dm({ author: ANN, content: "one" });
    await botPosts(fake, first.channel_id, 1);
    const home = before.home;
    const config = {
      ...simulatorConfig(sim, "anthropic"),
      channels: { discord: { token: TOKEN, apiUrl: fake.apiUrl, allowFrom: [ANN.id] } },
    };
    await before.running.stop();
    gw = undefined; // its home is reused below, and removed at the end
    fake.dm({ author: ANN, content: "two, while you were away" });
    const second = await startTestGateway(config, { home });
    try {
      await botPosts(fake, first.channel_id, 2);
      expect(fake.botMessages(first.channel_id).map((m) => m.content)).toEqual([
        "first answer",
        "answer to the missed one",
      ]);
      expect(JSON.stringify(sim.requests[1]?.body)).toContain("two, while you were away");
      expect(sim.requests).toHaveLength(2);
    } finally {
      await second.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("Discord catching up after a restart", () => {
  /** Stops the first gateway, runs `whileDown`, starts a second on the same home with `discord` settings. */
  async function restart(before: TestGateway, discord: Record<string, unknown>, whileDown: () => void) {
    const home = before.home;
    await before.running.stop();
    gw = undefined;
    whileDown();
    const config = {
      ...simulatorConfig(sim as ModelSimulator, "anthropic"),
      channels: { discord: { token: TOKEN, apiUrl: (fake as FakeDiscord).apiUrl, ...discord } },
    };
    gw = await startTestGateway(config, { home });
    return gw;
  }

  it("a live message that arrives while its chat is caught up is taken after the missed ones", async () => {
    const { sim, fake, gw: before } = await setup();
    const first = fake.dm({ author: ANN, content: "one" });
    await botPosts(fake, first.channel_id, 1);
    const reads = () => fake.calls({ method: "GET", route: "/channels/:channel/messages" }).length;
    const readsBefore = reads();
    // The catch-up's read is held up a second (a 429), and a live message comes meanwhile.
    fake.failNext({ method: "GET", route: "/channels/:channel/messages" }, { status: 429, retryAfterSec: 1 });
    await restart(before, { allowFrom: [ANN.id] }, () => {
      fake.dm({ author: ANN, content: "two, while you were away" });
    });
    await until(() => reads() > readsBefore, "the catch-up's read");
    fake.dm({ author: ANN, content: "three, live" });
    await botPosts(fake, first.channel_id, 3);
    const words = sim.requests.map((r) => JSON.stringify(r.body));
    const two = words.findIndex((w) => w.includes("two, while you were away") && !w.includes("three, live"));
    const three = words.findIndex((w) => w.includes("three, live"));
    expect(two).toBeGreaterThan(0);
    expect(three).toBeGreaterThan(two);
    expect(sim.requests).toHaveLength(3);
  });

  it("a chat first heard of while the gateway was away is read back when its next message comes", async () => {
    const { sim, fake, gw: before } = await setup({ allowFrom: [ANN.id, BOB.id] });
    const first = fake.dm({ author: ANN, content: "one" });
    await botPosts(fake, first.channel_id, 1);
    let missed: { channel_id: string } | undefined;
    await restart(before, { allowFrom: [ANN.id, BOB.id] }, () => {
      missed = fake.dm({ author: BOB, content: "hello, while you were away" });
    });
    const bobChat = missed?.channel_id as string;
    expect(fake.botMessages(bobChat)).toHaveLength(0); // nothing knew of bob's chat
    fake.dm({ author: BOB, content: "are you there?" });
    await botPosts(fake, bobChat, 2);
    const words = sim.requests.slice(1).map((r) => JSON.stringify(r.body));
    expect(words[0]).toContain("hello, while you were away");
    expect(words[0]).not.toContain("are you there?");
    expect(words[1]).toContain("are you there?");
    expect(sim.requests).toHaveLength(3);
  });
});

describe("Discord without the Message Content intent", () => {
  it("stops the channel with what to enable, in status; the gateway runs on", async () => {
    const { gw } = await setup({}, { fake: { messageContentIntent: false } });
    await until(async () => {
      const status = (await (await fetch(`${gw.url}/v1/status`)).json()) as {
        channels: Array<{ name: string; state?: string; detail?: string }>;
      };
      const discord = status.channels.find((c) => c.name === "discord");
      return discord?.state === "stopped" && /MESSAGE CONTENT INTENT/.test(discord.detail ?? "");
    }, "the discord channel stopped with a reason");
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  });
});
