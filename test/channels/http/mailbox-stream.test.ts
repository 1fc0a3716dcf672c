/**
 * `GET <base>/events`: one sender's mailbox as SSE, on a real store and the gateway's answer
 * source. A fresh stream starts at the mailbox's end; a reconnect with `Last-Event-ID` (or
 * `?after=`) gets what it missed, in order, once; two senders that collide on everything else
 * (channel, client message ids, texts) never see each other's replies; the route needs the token
 * as the POST does; stopping the channel ends the stream.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpChannel } from "../../../src/channels/http/http-channel.js";
import type { ChatTarget } from "../../../src/channels/types.js";
import { readSseFrames, type SseFrame } from "../../../src/cli/sse-frames.js";
import { AnswerWaiters } from "../../../src/gateway/answer-waiters.js";
import { gatewayErrorStatus } from "../../../src/gateway/error-status.js";
import { GatewayEvents } from "../../../src/gateway/events.js";
import { GatewayHttpServer } from "../../../src/http/server.js";
import { openSqliteStore } from "../../../src/store/sqlite/open-sqlite-store.js";
import { systemClock } from "../../../src/util/clock.js";
import { silentLogger } from "../../../src/util/logger.js";
import { until } from "../../helpers/until.js";

const TOKEN = "mailbox-stream-token-0123456789";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: { token?: string; pollMs?: number } = {}) {
  const store = openSqliteStore({ path: ":memory:" });
  const events = new GatewayEvents();
  const answers = new AnswerWaiters({ store, events, clock: systemClock, logger: silentLogger() });
  const server = new GatewayHttpServer({
    host: "127.0.0.1",
    port: 0,
    logger: silentLogger(),
    errorStatus: gatewayErrorStatus,
    ...(options.token ? { authToken: options.token } : {}),
  });
  const channel = new HttpChannel({
    name: "console",
    server,
    answers,
    basePath: "/v1/console",
    openaiCompatible: false,
    // Without a hint, the store is read only this often: the tests that rely on hints would fail.
    mailboxPollMs: options.pollMs ?? 60_000,
  });
  await server.listen();
  await channel.start({ accept: async () => ({ status: "rejected", reason: "not in this test" }) });
  cleanups.push(async () => {
    await channel.stop();
    await server.close();
    answers.stop();
    store.close();
  });
  /** Sends a reply to `sender`'s mailbox as a delivering commit does (with the in-process hint). */
  const deliver = async (
    sender: string,
    text: string,
    over: { replyTo?: string; hint?: boolean; sessionKey?: string } = {},
  ) => {
    const target: ChatTarget = { channel: "console", accountId: "default", chatId: sender };
    await store.outbox.insert(
      [
        {
          target,
          text,
          seq: 0,
          kind: "reply",
          recipientId: sender,
          delivered: true,
          ...(over.replyTo ? { replyTo: over.replyTo } : {}),
        },
      ],
      over.sessionKey ?? `agent:main:console:dm:${sender}`,
      Date.now(),
    );
    if (over.hint !== false) events.emit({ type: "replies_committed" });
  };
  return { store, server, channel, deliver, url: server.url };
}

/** An open stream and the frames it has received so far. */
async function open(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  let ended = false;
  const reading = (async () => {
    if (!res.body) return;
    try {
      for await (const frame of readSseFrames(res.body as AsyncIterable<Uint8Array>)) frames.push(frame);
    } catch {
      // aborted by the test
    }
    ended = true;
  })();
  cleanups.push(async () => {
    controller.abort();
    await reading;
  });
  const replies = () =>
    frames.filter((f) => f.event === "reply").map((f) => ({ id: Number(f.id), ...JSON.parse(f.data) }));
  await until(() => frames.length > 0 || res.status !== 200, "the stream to open");
  return { res, frames, replies, ended: () => ended, close: () => controller.abort() };
}

describe("the console mailbox stream", () => {
  it("starts at the end, then sends each new reply once with its cursor as the event id", async () => {
    const { deliver, url } = await setup();
    await deliver("ann", "old one");
    const s = await open(`${url}/v1/console/events?sender=ann`);
    expect(s.res.headers.get("content-type")).toBe("text/event-stream");
    expect(s.frames[0]?.event).toBe("ready");
    const end = Number(s.frames[0]?.id);
    expect(end).toBeGreaterThan(0);
    await deliver("ann", "a gateway notice");
    await deliver("ann", "answer to m-1", { replyTo: "m-1" });
    await deliver("ann", "task report", { sessionKey: "agent:main:task:t1" });
    await until(() => s.replies().length === 3, "three replies");
    expect(s.replies()).toEqual([
      expect.objectContaining({ text: "a gateway notice", origin: "gateway" }),
      expect.objectContaining({ text: "answer to m-1", replyTo: "m-1" }),
      expect.objectContaining({ text: "task report", origin: "assignment" }),
    ]);
    expect(s.replies()[0]!.id).toBeGreaterThan(end);
    expect(s.replies()[1]!.id).toBeGreaterThan(s.replies()[0]!.id);
  });

  it("resumes after Last-Event-ID (or ?after=): what was missed first, in order, nothing twice", async () => {
    const { deliver, url } = await setup();
    const first = await open(`${url}/v1/console/events?sender=ann`);
    await deliver("ann", "seen");
    await until(() => first.replies().length === 1, "the first reply");
    const seen = first.replies()[0]!.id;
    first.close();
    await deliver("ann", "missed 1");
    await deliver("ann", "missed 2");
    const again = await open(`${url}/v1/console/events?sender=ann`, { "last-event-id": String(seen) });
    expect(again.frames[0]).toMatchObject({ event: "ready", id: String(seen) });
    await until(() => again.replies().length === 2, "the missed replies");
    await deliver("ann", "live");
    await until(() => again.replies().length === 3, "the live reply");
    expect(again.replies().map((r) => r.text)).toEqual(["missed 1", "missed 2", "live"]);
    // A cursor from another database (beyond this mailbox's end) starts at the end.
    const beyond = await open(`${url}/v1/console/events?sender=ann`, { "last-event-id": "999" });
    expect(beyond.frames[0]).toMatchObject({ event: "ready", id: String(again.replies()[2]!.id) });
    const byQuery = await open(`${url}/v1/console/events?sender=ann&after=${seen}`);
    await until(() => byQuery.replies().length === 3, "the replies after the cursor");
    expect(byQuery.replies().map((r) => r.text)).toEqual(["missed 1", "missed 2", "live"]);
  });

  it("never shows one sender's replies to another that collides on everything else", async () => {
    const { deliver, url } = await setup();
    const ann = await open(`${url}/v1/console/events?sender=ann&after=0`);
    const bob = await open(`${url}/v1/console/events?sender=bob&after=0`);
    // One channel, the same client message ids, cursors numbered alike: only the sender differs.
    for (let i = 0; i < 3; i++) {
      await deliver("bob", `for bob ${i}`, { replyTo: `m-${i}` });
      await deliver("ann", `for ann ${i}`, { replyTo: `m-${i}` });
    }
    await until(() => ann.replies().length === 3 && bob.replies().length === 3, "three replies each");
    expect(ann.replies().map((r) => [r.text, r.replyTo])).toEqual([
      ["for ann 0", "m-0"],
      ["for ann 1", "m-1"],
      ["for ann 2", "m-2"],
    ]);
    expect(bob.replies().map((r) => r.text)).toEqual(["for bob 0", "for bob 1", "for bob 2"]);
    // A cursor names a row of its own mailbox only: bob resuming with ann's cursors reads bob's.
    const annLast = ann.replies()[2]!.id;
    const bobAgain = await open(`${url}/v1/console/events?sender=bob`, {
      "last-event-id": String(annLast - 1),
    });
    await until(() => bobAgain.replies().length === 1, "bob's last reply");
    expect(bobAgain.replies().map((r) => r.text)).toEqual(["for bob 2"]);
  });

  it("reads the store without a hint (another process's replies) every pollMs", async () => {
    const { deliver, url } = await setup({ pollMs: 20 });
    const s = await open(`${url}/v1/console/events?sender=ann`);
    await deliver("ann", "from another process", { hint: false });
    await until(() => s.replies().length === 1, "the polled reply");
  });

  it("needs the token as the POST does, refuses a bad cursor, and ends when the channel stops", async () => {
    const { channel, url } = await setup({ token: TOKEN });
    const anonymous = await fetch(`${url}/v1/console/events?sender=ann`);
    expect(anonymous.status).toBe(401);
    const post = await fetch(`${url}/v1/console`, { method: "POST", body: "{}" });
    expect(post.status).toBe(401);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const bad = await fetch(`${url}/v1/console/events?sender=ann`, {
      headers: { ...auth, "last-event-id": "x" },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBe(
      'Last-Event-ID must be a whole number (found "x")',
    );
    const noSender = await fetch(`${url}/v1/console/events`, { headers: auth });
    expect(noSender.status).toBe(400);
    const s = await open(`${url}/v1/console/events?sender=ann`, auth);
    expect(s.frames[0]?.event).toBe("ready");
    await channel.stop();
    await until(() => s.ended(), "the stream to end");
    const stopped = await fetch(`${url}/v1/console/events?sender=ann`, { headers: auth });
    expect(stopped.status).toBe(503);
  });
});
