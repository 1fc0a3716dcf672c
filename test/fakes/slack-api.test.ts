/**
 * The fake Slack server, driven through the real `@slack/bolt` (Socket Mode and HTTP mode) and
 * its Web API client, plus raw `fetch` where Bolt is not the client (file downloads).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { App, type Authorize, LogLevel, type Logger, SocketModeReceiver, webApi } from "@slack/bolt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { until } from "../helpers/until.js";
import { FakeSlack } from "./slack-api.js";

let fake: FakeSlack;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
/** Bolt's warnings and errors, kept out of the test output (a dropped socket logs an error). */
const logs: string[] = [];

const logger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (...msg: unknown[]) => logs.push(`warn: ${msg.join(" ")}`),
  error: (...msg: unknown[]) => logs.push(`error: ${msg.join(" ")}`),
  setLevel: () => {},
  getLevel: () => LogLevel.WARN,
  setName: () => {},
};

beforeEach(async () => {
  logs.length = 0;
  fake = new FakeSlack();
  await fake.start();
  fake.addUser({ id: "UANN", name: "ann", realName: "Ann Example" });
  fake.addChannel({ id: "C1", name: "general", kind: "channel" });
  fake.addChannel({ id: "D1", name: "", kind: "im", user: "UANN" });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await fake.close();
});

/** Fresh options each time: the Socket Mode client writes into the object it is given. */
function clientOptions(): { slackApiUrl: string; retryConfig: { retries: number }; logger: Logger } {
  return { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logger };
}

/** A Socket Mode app (stopped at the end of the test), reconnecting after 200 ms. */
function socketApp(options: { authorize?: Authorize<boolean> } = {}): App {
  const receiver = new SocketModeReceiver({
    appToken: fake.appToken,
    clientPingTimeout: 200,
    logger,
    installerOptions: { clientOptions: clientOptions() },
  });
  const auth = options.authorize ? { authorize: options.authorize } : { token: fake.botToken };
  const app = new App({ ...auth, receiver, logger, clientOptions: clientOptions() });
  cleanups.push(() => app.stop());
  return app;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

function platformError(error: unknown): string {
  if (!(error instanceof webApi.WebAPIPlatformError))
    throw new Error(`not a platform error: ${String(error)}`);
  return error.data.error ?? "";
}

describe("FakeSlack over Socket Mode", () => {
  it("says hello, delivers a message to app.message, records the ack and the bot's metadata post", async () => {
    const app = socketApp();
    const seen: Array<Record<string, unknown>> = [];
    app.message(async ({ message }) => {
      seen.push(message as unknown as Record<string, unknown>);
    });
    await app.start();
    expect(fake.connections()).toBe(1);
    expect(fake.connectionsOpened()).toBe(1);
    expect(fake.calls("apps.connections.open")[0]?.token).toBe(fake.appToken);

    const sent = await fake.userMessage({ channel: "C1", user: "UANN", text: "hello bot" });
    await until(() => seen.length === 1, "the message listener");
    expect(seen[0]).toMatchObject({
      type: "message",
      channel: "C1",
      user: "UANN",
      text: "hello bot",
      ts: sent.ts,
      channel_type: "channel",
    });
    await until(() => fake.acked.includes(sent.envelopeId), "the envelope's ack");
    expect(fake.ackOf(sent.envelopeId)).toEqual({ payload: {} });

    const metadata = { event_type: "switchyard_turn", event_payload: { turn: 7 } };
    const reply = await app.client.chat.postMessage({ channel: "C1", text: "in thread", thread_ts: sent.ts });
    const top = await app.client.chat.postMessage({ channel: "C1", text: "top level", metadata });
    expect(reply.message).toMatchObject({ text: "in thread", thread_ts: sent.ts, user: fake.botUserId });
    expect(fake.posted("C1").map((m) => [m.text, m.thread_ts, m.metadata])).toEqual([
      ["in thread", sent.ts, undefined],
      ["top level", undefined, metadata],
    ]);

    const history = await app.client.conversations.history({ channel: "C1", include_all_metadata: true });
    expect(history.messages?.map((m) => m.text)).toEqual(["top level", "hello bot"]);
    expect(history.messages?.[0]?.metadata).toEqual(metadata);
    expect(history.messages?.[1]).toMatchObject({
      reply_count: 1,
      latest_reply: reply.ts,
      thread_ts: sent.ts,
    });
    const plain = await app.client.conversations.history({ channel: "C1", limit: 1 });
    expect(plain.messages?.[0]?.ts).toBe(top.ts);
    expect(plain.messages?.[0]).not.toHaveProperty("metadata");
    expect(plain.has_more).toBe(true);
    const second = await app.client.conversations.history({
      channel: "C1",
      limit: 1,
      cursor: plain.response_metadata?.next_cursor ?? "",
    });
    expect(second.messages?.map((m) => m.ts)).toEqual([sent.ts]);
    expect(second.has_more).toBe(false);

    const thread = await app.client.conversations.replies({ channel: "C1", ts: sent.ts });
    expect(thread.messages?.map((m) => m.text)).toEqual(["hello bot", "in thread"]);
    expect(fake.history("C1").map((m) => m.text)).toEqual(["hello bot", "in thread", "top level"]);

    await fake.editUserMessage({ channel: "C1", ts: sent.ts, text: "hello bot, edited" });
    await until(() => seen.length === 2, "the message_changed event");
    expect(seen[1]).toMatchObject({
      subtype: "message_changed",
      channel: "C1",
      message: { ts: sent.ts, text: "hello bot, edited", user: "UANN" },
      previous_message: { ts: sent.ts, text: "hello bot" },
    });
    expect(fake.history("C1")[0]?.text).toBe("hello bot, edited");

    const auth = await app.client.auth.test();
    expect(auth).toMatchObject({ user_id: fake.botUserId, bot_id: fake.botId, team_id: fake.teamId });
    expect(auth.response_metadata?.scopes).toContain("chat:write");
  });

  it("reconnects by itself after a disconnect frame and re-sends an envelope left unacked by a dropped socket", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holdNext = true;
    // Bolt acks an event once it is authorized; holding authorize keeps the envelope unacked.
    const authorize: Authorize<boolean> = async () => {
      if (holdNext) {
        holdNext = false;
        await gate;
      }
      return { botToken: fake.botToken, botUserId: fake.botUserId, botId: fake.botId };
    };
    const app = socketApp({ authorize });
    const seen: Array<{ text: unknown; eventId: unknown; retryNum: unknown; retryReason: unknown }> = [];
    app.message(async ({ message, body, context }) => {
      const text = (message as { text?: string }).text;
      seen.push({
        text,
        eventId: body.event_id,
        retryNum: context.retryNum,
        retryReason: context.retryReason,
      });
    });
    await app.start();

    // A disconnect frame: the client closes and opens a new connection by itself.
    holdNext = false;
    await fake.disconnect("refresh_requested");
    await until(() => fake.connectionsOpened() === 2 && fake.connections() === 1, "the reconnect");
    const after = await fake.userMessage({ channel: "D1", user: "UANN", text: "after reconnect" });
    await until(() => fake.ackOf(after.envelopeId) !== undefined, "the ack after reconnect");
    expect(seen).toEqual([{ text: "after reconnect", eventId: after.eventId, retryNum: 0, retryReason: "" }]);

    // An envelope in flight when the socket dies is sent again on the next connection.
    holdNext = true;
    const held = await fake.userMessage({ channel: "D1", user: "UANN", text: "held" });
    await until(() => !holdNext, "authorize to hold the event");
    expect(fake.ackOf(held.envelopeId)).toBeUndefined();
    fake.dropConnection();
    const queued = await fake.userMessage({ channel: "D1", user: "UANN", text: "queued" });
    await until(() => fake.ackOf(held.envelopeId) !== undefined, "the re-sent envelope's ack");
    await until(() => fake.ackOf(queued.envelopeId) !== undefined, "the queued envelope's ack");
    expect(fake.connectionsOpened()).toBe(3);
    await until(() => seen.length === 3, "both messages");
    // Bolt runs listeners concurrently, so their order is not the frames' order.
    expect(seen.slice(1)).toEqual(
      expect.arrayContaining([
        { text: "held", eventId: held.eventId, retryNum: 1, retryReason: "timeout" },
        { text: "queued", eventId: queued.eventId, retryNum: 0, retryReason: "" },
      ]),
    );

    // The first attempt finishes late: its ack goes out on the new socket, and the app sees the
    // event twice under one event_id (deduplicating is the app's job, as on Slack).
    release();
    await until(() => seen.length === 4, "the late first attempt");
    expect(seen[3]).toEqual({ text: "held", eventId: held.eventId, retryNum: 0, retryReason: "" });
    await until(() => fake.acked.filter((id) => id === held.envelopeId).length === 2, "the late ack");
  });

  it("re-sends on the same socket after resendUnackedAfterMs, and queues envelopes while no socket is open", async () => {
    await fake.close();
    // One retry at most, so a slow machine cannot add a second one.
    fake = new FakeSlack({ resendUnackedAfterMs: 100, maxRetryAttempts: 1 });
    await fake.start();
    fake.addUser({ id: "UANN", name: "ann" });
    fake.addChannel({ id: "D1", name: "", kind: "im", user: "UANN" });
    let holdNext = true;
    const gate: { release?: () => void } = {};
    const authorize: Authorize<boolean> = async () => {
      if (holdNext) {
        holdNext = false;
        await new Promise<void>((resolve) => {
          gate.release = resolve;
        });
      }
      return { botToken: fake.botToken, botUserId: fake.botUserId, botId: fake.botId };
    };
    cleanups.push(() => gate.release?.());
    const app = socketApp({ authorize });
    const retries: unknown[] = [];
    app.message(async ({ context }) => {
      retries.push(context.retryNum);
    });

    // Delivered before the app connects: queued, then written right after hello.
    const early = fake.userMessage({ channel: "D1", user: "UANN", text: "early" });
    await app.start();
    const sent = await early;
    await until(() => retries.length === 1, "the re-sent envelope");
    expect(retries).toEqual([1]);
    expect(fake.connectionsOpened()).toBe(1);
    expect(await fake.waitForAck(sent.envelopeId)).toEqual({ payload: {} });
  });

  it("delivers an app_mention twin, file_share messages, and slash commands with a response payload", async () => {
    const app = socketApp();
    const events: Array<{ type: string; ts: unknown; text: unknown }> = [];
    const files: unknown[] = [];
    app.message(async ({ message }) => {
      const m = message as { ts: string; text?: string; files?: unknown[]; subtype?: string };
      events.push({ type: "message", ts: m.ts, text: m.text });
      if (m.files) files.push({ subtype: m.subtype, files: m.files });
    });
    app.event("app_mention", async ({ event }) => {
      events.push({ type: "app_mention", ts: event.ts, text: event.text });
    });
    app.command("/ask", async ({ command, ack, respond }) => {
      await ack({ response_type: "ephemeral", text: `asked: ${command.text}` });
      await respond({ text: `answer for ${command.user_name}` });
    });
    await app.start();

    const sent = await fake.userMessage({
      channel: "C1",
      user: "UANN",
      text: "<@UBOT> hi",
      also: "app_mention",
    });
    await until(() => events.length === 2, "both events");
    expect(events).toEqual(
      expect.arrayContaining([
        { type: "message", ts: sent.ts, text: "<@UBOT> hi" },
        { type: "app_mention", ts: sent.ts, text: "<@UBOT> hi" },
      ]),
    );
    expect(sent.mention?.eventId).not.toBe(sent.eventId);
    await until(() => fake.acked.includes(sent.mention?.envelopeId ?? ""), "the twin's ack");

    const joined: unknown[] = [];
    app.event("member_joined_channel", async ({ event, body }) => {
      joined.push([event.user, event.channel, body.event_id]);
    });
    const raw = await fake.deliverEvent(
      { type: "member_joined_channel", user: "UANN", channel: "C1", channel_type: "C", event_ts: "1.000001" },
      { eventId: "EvJOINED" },
    );
    await until(() => joined.length === 1, "the raw event");
    expect(joined).toEqual([["UANN", "C1", "EvJOINED"]]);
    expect(raw.eventId).toBe("EvJOINED");

    const file = fake.addFile({ id: "F1", name: "notes.txt", mimetype: "text/plain", content: "hello file" });
    await fake.userMessage({ channel: "C1", user: "UANN", text: "see file", files: [file] });
    await until(() => files.length === 1, "the file_share message");
    expect(files[0]).toEqual({ subtype: "file_share", files: [file] });
    const download = await fetch(file.url_private_download, {
      headers: { authorization: `Bearer ${fake.botToken}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("text/plain");
    expect(download.headers.get("content-length")).toBe("10");
    expect(await download.text()).toBe("hello file");
    const login = await fetch(file.url_private_download);
    expect(login.status).toBe(200);
    expect(login.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await login.text()).toContain("<html");

    const command = await fake.slashCommand({ command: "/ask", text: "why", user: "UANN", channel: "C1" });
    expect(await command.ack).toEqual({ response_type: "ephemeral", text: "asked: why" });
    expect(fake.ackOf(command.envelopeId)).toEqual({
      payload: { response_type: "ephemeral", text: "asked: why" },
    });
    await until(() => fake.responses().length === 1, "the response_url post");
    expect(fake.responses()[0]?.body).toEqual({ text: "answer for ann" });
  });
});

describe("FakeSlack Web API semantics", () => {
  function client(token = fake.botToken, extra: { rejectRateLimitedCalls?: boolean } = {}): webApi.WebClient {
    return new webApi.WebClient(token, { ...clientOptions(), ...extra });
  }

  it("answers 429 with Retry-After and Slack's platform errors", async () => {
    const web = client(fake.botToken, { rejectRateLimitedCalls: true });
    fake.failNext("chat.postMessage", { status: 429, retryAfter: 1 });
    const limited = await rejection(web.chat.postMessage({ channel: "C1", text: "x" }));
    expect(limited).toBeInstanceOf(webApi.WebAPIRateLimitedError);
    expect((limited as webApi.WebAPIRateLimitedError).retryAfter).toBe(1);
    await web.chat.postMessage({ channel: "C1", text: "after the limit" });
    expect(fake.calls("chat.postMessage")).toHaveLength(2);

    fake.addChannel({ id: "C2", name: "old", kind: "channel", archived: true });
    fake.addChannel({ id: "C3", name: "elsewhere", kind: "channel", member: false });
    const post = (channel: string, text = "x") => rejection(web.chat.postMessage({ channel, text }));
    expect(platformError(await post("C404"))).toBe("channel_not_found");
    expect(platformError(await post("C2"))).toBe("is_archived");
    expect(platformError(await post("C3"))).toBe("not_in_channel");
    expect(platformError(await post("C1", "y".repeat(40_001)))).toBe("msg_too_long");
    expect(platformError(await rejection(web.apiCall("nope.method")))).toBe("unknown_method");
    expect(platformError(await rejection(client("xoxb-wrong").auth.test()))).toBe("invalid_auth");
    expect(platformError(await rejection(client(fake.appToken).auth.test()))).toBe("not_allowed_token_type");
    expect(platformError(await rejection(client("").auth.test()))).toBe("not_authed");
    fake.failNext("users.info", { error: "fatal_error" });
    expect(platformError(await rejection(web.users.info({ user: "UANN" })))).toBe("fatal_error");
    fake.failNext("users.info", { status: 503 });
    expect(await rejection(web.users.info({ user: "UANN" }))).toBeInstanceOf(webApi.WebAPIHTTPError);

    const status = await rejection(
      web.assistant.threads.setStatus({
        channel_id: "D1",
        thread_ts: "1700000000.000100",
        status: "thinking",
      }),
    );
    expect(platformError(status)).toBe("missing_scope");
    expect((status as webApi.WebAPIPlatformError).data).toMatchObject({ needed: "assistant:write" });
  });

  it("a fault with `when` takes only matching calls; onCarriedOut reports a call before its answer, held or not", async () => {
    const web = client();
    const carried: string[] = [];
    fake.onCarriedOut((method, params, result) =>
      carried.push(`${method} ${String(params.text)} ${String(result.ts)}`),
    );
    fake.failNext("chat.postMessage", { hangAfter: true }, 1, (params) => params.text === "hang");
    const first = await web.chat.postMessage({ channel: "C1", text: "pass" }); // not matched: answered
    const hung = web.chat.postMessage({ channel: "C1", text: "hang" });
    hung.catch(() => {});
    await until(() => carried.length === 2, "the held post carried out");
    expect(fake.posted("C1").map((m) => m.text)).toEqual(["pass", "hang"]);
    expect(carried).toEqual([
      `chat.postMessage pass ${first.ts}`,
      `chat.postMessage hang ${fake.posted("C1")[1]?.ts}`,
    ]);
    await web.chat.postMessage({ channel: "C1", text: "hang" }); // the fault was used up
    expect(fake.posted("C1")).toHaveLength(3);
  });

  it("updates, reacts, sets thread status and describes users and conversations", async () => {
    await fake.close();
    fake = new FakeSlack({ assistantThreads: true });
    await fake.start();
    fake.addUser({ id: "UANN", name: "ann", realName: "Ann Example" });
    fake.addChannel({ id: "D1", name: "", kind: "im", user: "UANN" });
    fake.addChannel({ id: "C5", name: "secret", kind: "private" });
    const web = client();
    const human = fake.seedMessage({ channel: "D1", user: "UANN", text: "question" });

    await web.assistant.threads.setStatus({ channel_id: "D1", thread_ts: human.ts, status: "is thinking…" });
    expect(fake.statuses()).toEqual([{ channel_id: "D1", thread_ts: human.ts, status: "is thinking…" }]);
    expect(fake.statusOf("D1", human.ts)).toBe("is thinking…");
    const posted = await web.chat.postMessage({ channel: "D1", text: "draft", thread_ts: human.ts });
    expect(fake.statusOf("D1", human.ts)).toBeUndefined();
    const ts = posted.ts ?? "";
    const updated = await web.chat.update({ channel: "D1", ts, text: "final" });
    expect(updated).toMatchObject({ channel: "D1", ts, text: "final" });
    expect(fake.posted("D1")[0]?.text).toBe("final");
    expect(platformError(await rejection(web.chat.update({ channel: "D1", ts: human.ts, text: "x" })))).toBe(
      "cant_update_message",
    );
    expect(
      platformError(await rejection(web.chat.update({ channel: "D1", ts: "1.000001", text: "x" }))),
    ).toBe("message_not_found");

    await web.reactions.add({ channel: "D1", timestamp: human.ts, name: "eyes" });
    expect(fake.reactions("D1", human.ts)).toEqual(["eyes"]);
    expect(
      platformError(await rejection(web.reactions.add({ channel: "D1", timestamp: human.ts, name: "eyes" }))),
    ).toBe("already_reacted");
    await web.reactions.remove({ channel: "D1", timestamp: human.ts, name: "eyes" });
    expect(
      platformError(
        await rejection(web.reactions.remove({ channel: "D1", timestamp: human.ts, name: "eyes" })),
      ),
    ).toBe("no_reaction");

    const user = await web.users.info({ user: "UANN" });
    expect(user.user).toMatchObject({ id: "UANN", name: "ann", real_name: "Ann Example", is_bot: false });
    expect(platformError(await rejection(web.users.info({ user: "U404" })))).toBe("user_not_found");
    const dm = await web.conversations.info({ channel: "D1" });
    expect(dm.channel).toMatchObject({ id: "D1", is_im: true, user: "UANN", is_private: true });
    const secret = await web.conversations.info({ channel: "C5" });
    expect(secret.channel).toMatchObject({
      name: "secret",
      is_channel: true,
      is_private: true,
      is_member: true,
    });
    expect(fake.calls("conversations.info").map((c) => c.params.channel)).toEqual(["D1", "C5"]);
  });
});

describe("FakeSlack signed HTTP delivery to Bolt's HTTPReceiver", () => {
  it("is accepted when signed, refused with 401 when forged or stale, and answers url_verification", async () => {
    const app = new App({
      token: fake.botToken,
      signingSecret: fake.signingSecret,
      logger,
      clientOptions: clientOptions(),
    });
    const seen: Array<{ text: unknown; retryNum: unknown; retryReason: unknown }> = [];
    app.message(async ({ message, context }) => {
      const text = (message as { text?: string }).text;
      seen.push({ text, retryNum: context.retryNum, retryReason: context.retryReason });
    });
    const server = (await app.start({ port: 0, host: "127.0.0.1" })) as Server;
    cleanups.push(() => app.stop());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    const event = (text: string) => ({
      type: "message",
      channel: "C1",
      user: "UANN",
      text,
      ts: "1700000000.000100",
      event_ts: "1700000000.000100",
      channel_type: "channel",
    });

    const ok = await fake.postEvent(url, fake.eventCallback(event("over http")));
    expect(ok).toEqual({ status: 200, body: "" });
    await until(() => seen.length === 1, "the HTTP listener");
    expect(seen[0]).toEqual({ text: "over http", retryNum: undefined, retryReason: undefined });

    const retried = await fake.postEvent(url, fake.eventCallback(event("retried")), {
      retryNum: 1,
      retryReason: "http_timeout",
    });
    expect(retried.status).toBe(200);
    await until(() => seen.length === 2, "the retried delivery");
    expect(seen[1]).toEqual({ text: "retried", retryNum: 1, retryReason: "http_timeout" });

    const forged = await fake.postEvent(url, fake.eventCallback(event("forged")), { signingSecret: "wrong" });
    expect(forged.status).toBe(401);
    const sixMinutesAgo = Math.floor(Date.now() / 1000) - 6 * 60;
    const stale = await fake.postEvent(url, fake.eventCallback(event("stale")), { timestamp: sixMinutesAgo });
    expect(stale.status).toBe(401);
    expect(logs.join("\n")).toMatch(/signature mismatch[\s\S]*request is stale/);

    const challenge = await fake.postEvent(url, { token: "t", challenge: "c-123", type: "url_verification" });
    expect(challenge.status).toBe(200);
    expect(JSON.parse(challenge.body)).toEqual({ challenge: "c-123" });
    expect(seen).toHaveLength(2);
  });
});
