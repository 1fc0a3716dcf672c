/**
 * Slack end to end: the real gateway and Bolt (Socket Mode, and HTTP mode for signatures)
 * against the fake Slack server, with the model simulator behind the real Anthropic SDK.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../../src/store/types.js";
import { StoreError } from "../../../src/store/store-error.js";
import { ManualClock } from "../../../src/util/clock.js";
import { FakeSlack, type FakeSlackOptions } from "../../fakes/slack-api.js";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../../helpers/test-gateway.js";
import { until, untilAdvancing } from "../../helpers/until.js";

let sim: ModelSimulator | undefined;
let fake: FakeSlack | undefined;
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
  slack: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
  clock?: ManualClock,
  more: { fake?: FakeSlackOptions; wrapStore?: (store: Store) => Store } = {},
) {
  sim = new ModelSimulator();
  await sim.start();
  fake = new FakeSlack({ ...more.fake, ...(clock ? { now: () => clock.now() } : {}) });
  await fake.start();
  fake.addUser({ id: "UANN", name: "ann", realName: "Ann Example" });
  fake.addUser({ id: "UBOB", name: "bob", realName: "Bob" });
  fake.addChannel({ id: "C1", name: "general", kind: "channel" });
  fake.addChannel({ id: "C2", name: "elsewhere", kind: "channel" });
  fake.addChannel({ id: "D1", name: "", kind: "im", user: "UANN" });
  fake.addChannel({ id: "D2", name: "", kind: "im", user: "UBOB" });
  gw = await startTestGateway(
    {
      ...simulatorConfig(sim, "anthropic"),
      channels: {
        slack: {
          botToken: fake.botToken,
          appToken: fake.appToken,
          apiUrl: fake.apiUrl,
          allowFrom: ["UANN"],
          channels: ["C1"],
          socketPingTimeoutMs: 200,
          ...slack,
        },
      },
      ...extra,
    },
    { ...(clock ? { clock } : {}), ...(more.wrapStore ? { wrapStore: more.wrapStore } : {}) },
  );
  return { sim, fake, gw };
}

/** Waits until the bot has posted `n` messages in a channel; returns them. */
async function botPosts(f: FakeSlack, channel: string, n: number) {
  await until(() => f.posted(channel).length >= n, `${n} posts in ${channel}`);
  return f.posted(channel);
}

describe("Slack channel", () => {
  it("answers a DM with metadata on the reply, shows and clears a working reaction", async () => {
    const { sim, fake } = await setup();
    sim.script({ text: "Hello **Ann**!" });
    const { ts } = await fake.userMessage({ channel: "D1", user: "UANN", text: "hi" });
    const [reply] = await botPosts(fake, "D1", 1);
    expect(reply).toMatchObject({ text: "Hello *Ann*!", metadata: { event_type: "switchyard_reply" } });
    expect(reply?.thread_ts).toBeUndefined();
    expect(fake.calls("reactions.add")[0]?.params).toMatchObject({
      channel: "D1",
      timestamp: ts,
      name: "hourglass_flowing_sand",
    });
    await until(() => fake.calls("reactions.remove").length === 1, "the reaction removed");
    expect(fake.reactions("D1", ts)).toEqual([]);
    // The sender's name came from users.info.
    expect(JSON.stringify(sim.requests[0]?.body)).toContain("hi");
  });

  it("pairs an unknown DM sender, then answers once approved", async () => {
    const { sim, fake, gw } = await setup();
    await fake.userMessage({ channel: "D2", user: "UBOB", text: "hello?" });
    const [codeMessage] = await botPosts(fake, "D2", 1);
    const code = /pairing code is ([A-Z0-9]{8})/.exec(codeMessage?.text ?? "")?.[1];
    expect(code).toBeDefined();
    expect(sim.requests).toHaveLength(0);
    expect(await gw.running.store.pairing.approve("slack", code ?? "", Date.now())).toBeDefined();
    sim.script({ text: "Welcome, Bob." });
    await fake.userMessage({ channel: "D2", user: "UBOB", text: "hello again" });
    expect((await botPosts(fake, "D2", 2))[1]?.text).toBe("Welcome, Bob.");
  });

  it("keeps an unaddressed channel message as context and answers a mention in a thread on it", async () => {
    const { sim, fake } = await setup();
    await fake.userMessage({ channel: "C1", user: "UBOB", text: "lunch at noon?" });
    await until(() => fake.acked.length === 1, "the context message acked");
    expect(fake.posted("C1")).toHaveLength(0);
    sim.script({ text: "Noon works." });
    const mention = await fake.userMessage({
      channel: "C1",
      user: "UANN",
      text: "<@UBOT> does noon work?",
      also: "app_mention",
    });
    const [reply] = await botPosts(fake, "C1", 1);
    expect(reply).toMatchObject({ text: "Noon works.", thread_ts: mention.ts });
    expect(JSON.stringify(sim.requests[0]?.body)).toContain("lunch at noon?");
    // The app_mention twin of the same message ran nothing more.
    await until(() => fake.acked.length === 3, "all three envelopes acked");
    expect(sim.requests).toHaveLength(1);
    expect(fake.posted("C1")).toHaveLength(1);
  });

  it("two threads are two sessions; a reply in the bot's thread needs no mention", async () => {
    const { sim, fake, gw } = await setup();
    sim.script({ text: "one" }, { text: "two" }, { text: "three" });
    const a = await fake.userMessage({ channel: "C1", user: "UANN", text: "<@UBOT> first" });
    await botPosts(fake, "C1", 1);
    const b = await fake.userMessage({ channel: "C1", user: "UANN", text: "<@UBOT> second" });
    await botPosts(fake, "C1", 2);
    await fake.userMessage({ channel: "C1", user: "UBOB", text: "and more", threadTs: a.ts });
    const posts = await botPosts(fake, "C1", 3);
    expect(posts.map((p) => [p.text, p.thread_ts])).toEqual([
      ["one", a.ts],
      ["two", b.ts],
      ["three", a.ts],
    ]);
    const { sessions } = gw.running.store;
    expect(await sessions.get(`agent:main:slack:default:group:C1:thread:${a.ts}`)).toBeDefined();
    expect(await sessions.get(`agent:main:slack:default:group:C1:thread:${b.ts}`)).toBeDefined();
  });

  it("answers a redelivered envelope once", async () => {
    const { sim, fake, gw } = await setup();
    sim.script({ text: "once" });
    const sent = await fake.userMessage({ channel: "D1", user: "UANN", text: "only once please" });
    await botPosts(fake, "D1", 1);
    await fake.redeliver(sent.envelopeId, 1);
    await until(() => fake.acked.filter((id) => id === sent.envelopeId).length === 2, "the redelivery acked");
    expect(sim.requests).toHaveLength(1);
    expect(fake.posted("D1")).toHaveLength(1);
    expect((await gw.running.store.inbox.countByState()).answered).toBe(1);
  });

  it("ignores its own messages, other bots, edits and channels outside the allowlist", async () => {
    const { sim, fake } = await setup();
    await fake.userMessage({ channel: "C1", user: "UOTHER", text: "<@UBOT> hi", botId: "B9" });
    await fake.userMessage({ channel: "C2", user: "UANN", text: "<@UBOT> not here" });
    const first = await fake.userMessage({ channel: "D1", user: "UANN", text: "typo" });
    await until(() => fake.acked.length === 3, "three acked");
    sim.script({ text: "ok" });
    await botPosts(fake, "D1", 1);
    await fake.editUserMessage({ channel: "D1", ts: first.ts, text: "fixed" });
    await until(() => fake.acked.length === 4, "the edit acked");
    expect(sim.requests).toHaveLength(1);
    expect(fake.posted("C1")).toHaveLength(0);
    expect(fake.posted("C2")).toHaveLength(0);
  });

  it("acks an envelope only once committed: one the store refused comes again and is answered once", async () => {
    let refuse = true;
    let refused = 0;
    const wrapStore = (store: Store): Store =>
      new Proxy(store, {
        get(target, prop, receiver) {
          const value: unknown = Reflect.get(target, prop, receiver);
          if (typeof value === "function") return value.bind(target);
          if (prop !== "inbox") return value;
          const inbox = value as Store["inbox"];
          return new Proxy(inbox, {
            get(repo, name, r) {
              const method: unknown = Reflect.get(repo, name, r);
              if (name === "receive" && refuse)
                return () => {
                  refused++;
                  return Promise.reject(new StoreError("disk_full", "the disk is full (test)"));
                };
              return typeof method === "function" ? method.bind(repo) : method;
            },
          });
        },
      });
    const { sim, fake } = await setup({}, {}, undefined, { wrapStore });
    sim.script({ text: "saved this time" });
    const sent = await fake.userMessage({ channel: "D1", user: "UANN", text: "keep me" });
    await until(() => refused > 0, "the refused commit");
    expect(fake.ackOf(sent.envelopeId)).toBeUndefined();
    refuse = false;
    fake.dropConnection(); // Slack re-sends what was never acked once the app is back
    await fake.waitForAck(sent.envelopeId);
    expect((await botPosts(fake, "D1", 1)).map((m) => m.text)).toEqual(["saved this time"]);
    expect(sim.requests).toHaveLength(1);
  });

  it("waits out a 429 on chat.postMessage, for every chat, and posts each reply once", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, fake, gw } = await setup({}, {}, clock);
    sim.script({ text: "after the rate limit" });
    fake.failNext("chat.postMessage", { status: 429, retryAfter: 3 });
    await fake.userMessage({ channel: "D1", user: "UANN", text: "hi" });
    const { store } = gw.running;
    const pendingErrors = async () => (await store.outbox.listByState("pending", 10)).map((r) => r.lastError);
    await until(
      async () => (await pendingErrors())[0]?.startsWith("rate_limit") === true,
      "the rate-limited reply",
    );
    const [waiting] = await store.outbox.listByState("pending", 1);
    expect(waiting?.nextAttemptAt).toBe(clock.now() + 3_000);
    // Another chat's message (a pairing code) meets the paused method without calling Slack.
    await fake.userMessage({ channel: "D2", user: "UBOB", text: "hello?" });
    await until(
      async () => (await pendingErrors()).length === 2 && (await pendingErrors())[1] !== null,
      "the second row held",
    );
    expect((await pendingErrors())[1]).toMatch(/^rate_limit: chat.postMessage is rate limited/);
    expect(fake.calls("chat.postMessage")).toHaveLength(1);
    expect(fake.posted("D1")).toHaveLength(0);
    await untilAdvancing(
      clock,
      () => fake.posted("D1").length === 1 && fake.posted("D2").length === 1,
      "both posts after Retry-After",
    );
    await until(async () => (await store.outbox.countByState()).sent === 2, "the receipts");
    expect(fake.calls("chat.postMessage")).toHaveLength(3);
  });

  it("a post whose answer never came is found by its metadata, not posted twice", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, fake, gw } = await setup({}, {}, clock);
    sim.script({ text: "exactly once" });
    fake.failNext("chat.postMessage", { hangAfter: true });
    await fake.userMessage({ channel: "D1", user: "UANN", text: "hi" });
    await until(() => fake.posted("D1").length === 1, "the post that got no answer");
    const { store } = gw.running;
    await untilAdvancing(
      clock,
      async () => (await store.outbox.countByState()).sent === 1,
      "found and recorded",
    );
    expect(fake.posted("D1")).toHaveLength(1);
    expect(fake.calls("conversations.history")).toHaveLength(1);
    expect(fake.calls("chat.postMessage")).toHaveLength(1);
  });

  it("reports a conversation that is gone as a dead reply, not retried", async () => {
    const { sim, fake, gw } = await setup({}, { outbox: { maxAttempts: 5 } });
    sim.script({ text: "nowhere to go" });
    fake.failNext("chat.postMessage", { error: "channel_not_found" });
    await fake.userMessage({ channel: "D1", user: "UANN", text: "hi" });
    await until(async () => (await gw.running.store.outbox.countByState()).dead === 1, "a dead reply");
    const [dead] = await gw.running.store.outbox.listByState("dead", 1);
    expect(dead).toMatchObject({ attempts: 1 });
    expect(dead?.lastError).toContain("channel_not_found");
    expect(fake.calls("chat.postMessage")).toHaveLength(1);
  });

  it("a Socket Mode disconnect mid-run loses nothing; the reconnect is counted", async () => {
    const { sim, fake, gw } = await setup();
    sim.script({ text: "a b c d e f g h i j k l m n o p", chunkDelayMs: 30 }, { text: "second" });
    await fake.userMessage({ channel: "D1", user: "UANN", text: "first" });
    await sim.waitForRequests(1, 5_000);
    await fake.disconnect();
    const second = fake.userMessage({ channel: "D1", user: "UANN", text: "second" });
    const posts = await botPosts(fake, "D1", 2);
    await second;
    expect(posts.map((p) => p.text)).toEqual(["a b c d e f g h i j k l m n o p", "second"]);
    expect(fake.connectionsOpened()).toBe(2);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_channel_reconnects_total\{[^}]*channel="slack"[^}]*\} 1/);
  });

  it("a slash command runs the chat command and answers only the person", async () => {
    const { fake, gw } = await setup();
    const status = await fake.slashCommand({
      command: "/switchyard",
      text: "status",
      user: "UANN",
      channel: "D1",
      channelName: "directmessage",
    });
    expect(await status.ack).toMatchObject({
      response_type: "ephemeral",
      text: expect.stringContaining("Session"),
    });
    const unknown = await fake.slashCommand({
      command: "/switchyard",
      text: "dance",
      user: "UANN",
      channel: "D1",
    });
    expect(await unknown.ack).toMatchObject({ text: expect.stringContaining('Unknown command "dance"') });
    expect(fake.posted("D1")).toHaveLength(0);
    expect((await gw.running.store.outbox.countByState()).pending).toBe(0);
  });

  it("downloads a file for an admitted sender into the workspace", async () => {
    const { sim, fake, gw } = await setup();
    const file = fake.addFile({ id: "F1", name: "notes.txt", mimetype: "text/plain", content: "the notes" });
    sim.script({ text: "got it" });
    await fake.userMessage({ channel: "D1", user: "UANN", text: "read this", files: [file] });
    await botPosts(fake, "D1", 1);
    const body = JSON.stringify(sim.requests[0]?.body);
    expect(body).toContain("notes.txt");
    const dir = join(gw.running.workspaceDir, "inbox", "slack", "D1");
    expect(existsSync(dir)).toBe(true);
  });
});

describe("Slack channel, more of what users rely on", () => {
  it("shows the assistant thread status where the app has it, and clears it", async () => {
    const { sim, fake } = await setup({}, {}, undefined, { fake: { assistantThreads: true } });
    sim.script({ text: "thought about it" });
    const { ts } = await fake.userMessage({ channel: "C1", user: "UANN", text: "<@UBOT> think" });
    await botPosts(fake, "C1", 1);
    expect(fake.statuses()[0]).toMatchObject({ channel_id: "C1", thread_ts: ts, status: "is thinking…" });
    expect(fake.calls("reactions.add")).toHaveLength(0);
    await until(() => !fake.statusOf("C1", ts), "the status cleared");
  });

  it("streams a preview edited by chat.update, which the reply then becomes: one message", async () => {
    const { sim, fake } = await setup({ streaming: "edit" });
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    sim.script({ text: words, chunkDelayMs: 40 });
    await fake.userMessage({ channel: "D1", user: "UANN", text: "stream please" });
    await until(
      () => fake.posted("D1")[0]?.text === words && fake.calls("chat.update").length > 0,
      "the final text in the preview",
    );
    expect(fake.posted("D1")).toHaveLength(1);
    expect(fake.posted("D1")[0]?.metadata).toMatchObject({ event_type: "switchyard_reply" });
    expect(fake.calls("chat.postMessage")).toHaveLength(1);
  });

  it("looks a sender's name up once, then from its cache", async () => {
    const { sim, fake, gw } = await setup();
    sim.script({ text: "one" }, { text: "two" });
    await fake.userMessage({ channel: "D1", user: "UANN", text: "first" });
    await botPosts(fake, "D1", 1);
    await fake.userMessage({ channel: "D1", user: "UANN", text: "second" });
    await botPosts(fake, "D1", 2);
    expect(fake.calls("users.info")).toHaveLength(1);
    // The profile's display name (the fake sets it to the handle), not the id.
    expect((await gw.running.store.inbox.get(2))?.message.senderName).toBe("ann");
  });

  it("downloads nothing for a sender who is not admitted, and notes a file over the cap", async () => {
    const { sim, fake, gw } = await setup({ mediaMaxMb: 0.000_01 });
    const file = fake.addFile({
      id: "F2",
      name: "big.bin",
      mimetype: "application/octet-stream",
      content: "x".repeat(200),
    });
    await fake.userMessage({ channel: "D2", user: "UBOB", text: "take this", files: [file] });
    await botPosts(fake, "D2", 1); // the pairing code, nothing else
    expect(existsSync(join(gw.running.workspaceDir, "inbox", "slack", "D2"))).toBe(false);
    sim.script({ text: "too big, sorry" });
    await fake.userMessage({ channel: "D1", user: "UANN", text: "and this", files: [file] });
    await botPosts(fake, "D1", 1);
    expect(JSON.stringify(sim.requests[0]?.body)).toContain("big.bin not downloaded");
    expect(existsSync(join(gw.running.workspaceDir, "inbox", "slack", "D1"))).toBe(false);
  });
});

describe("Slack channel, HTTP mode", () => {
  it("refuses forged and stale events with 401, answers url_verification and a signed event", async () => {
    const { sim, fake, gw } = await setup({ mode: "http", signingSecret: "shh", appToken: undefined });
    const url = `${gw.url}/slack/events`;
    const event = fake.eventCallback({
      type: "message",
      channel: "D1",
      channel_type: "im",
      user: "UANN",
      text: "hi",
      ts: "1700000000.000100",
    });
    expect((await fake.postEvent(url, event, { signingSecret: "shh", signature: "v0=forged" })).status).toBe(
      401,
    );
    const stale = Math.floor(Date.now() / 1000) - 6 * 60;
    expect((await fake.postEvent(url, event, { signingSecret: "shh", timestamp: stale })).status).toBe(401);
    expect((await fake.postEvent(url, event, { signingSecret: "wrong" })).status).toBe(401);
    const challenge = await fake.postEvent(
      url,
      { type: "url_verification", challenge: "c-1" },
      { signingSecret: "shh" },
    );
    expect(JSON.parse(challenge.body)).toEqual({ challenge: "c-1" });
    sim.script({ text: "signed and answered" });
    expect((await fake.postEvent(url, event, { signingSecret: "shh" })).status).toBe(200);
    expect(
      (await fake.postEvent(url, event, { signingSecret: "shh", retryNum: 1, retryReason: "http_timeout" }))
        .status,
    ).toBe(200);
    expect((await botPosts(fake, "D1", 1))[0]?.text).toBe("signed and answered");
    expect(sim.requests).toHaveLength(1);
    const form = new URLSearchParams({
      command: "/switchyard",
      text: "help",
      user_id: "UANN",
      channel_id: "D1",
      channel_name: "directmessage",
      trigger_id: "t-1",
    }).toString();
    const command = await fake.postEvent(
      url,
      {},
      {
        signingSecret: "shh",
        contentType: "application/x-www-form-urlencoded",
        rawBody: form,
      },
    );
    expect(command.status).toBe(200);
    expect(JSON.parse(command.body)).toMatchObject({
      response_type: "ephemeral",
      text: expect.stringContaining("/new"),
    });
  });
});
