/**
 * The outbox dispatcher against the real SQLite store and a scripted Channel (our own port).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type Channel,
  ChannelSendError,
  type ChatTarget,
  type OutboundMessage,
  type SendReceipt,
} from "../../src/channels/types.js";
import { GatewayMetrics } from "../../src/gateway/metrics.js";
import { OutboxDispatcher } from "../../src/gateway/outbox-dispatcher.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";

class ScriptedChannel implements Channel {
  readonly name = "console" as const;
  readonly accountId = "default";
  readonly limits = { maxMessageChars: 100, formatting: "plain" as const };
  readonly sent: OutboundMessage[] = [];
  failures: Array<ChannelSendError | Error> = [];
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async send(message: OutboundMessage): Promise<SendReceipt> {
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.sent.push(message);
    return { platformMessageId: `p${this.sent.length}` };
  }
}

const target: ChatTarget = { channel: "console", accountId: "default", chatId: "c1" };

async function seedTurn(store: Store, clock: ManualClock, texts: string[], chatId = "c1"): Promise<void> {
  const sessionKey = `s-${chatId}`;
  await store.sessions.ensure(sessionKey, "ses1", null, clock.now());
  const { record } = await store.inbox.receive(
    {
      channel: "console",
      accountId: "default",
      chatId,
      senderId: chatId,
      senderName: chatId,
      isDirect: true,
      mentionsBot: true,
      text: "hi",
      attachments: [],
      platformMessageId: `m-${chatId}-${clock.now()}-${texts[0]}`,
      receivedAt: clock.now(),
    },
    sessionKey,
    clock.now(),
  );
  await store.inbox.markQueued(record.id, clock.now());
  const runId = `run-${record.id}`;
  await store.inbox.claim(sessionKey, "ses1", runId, { all: false }, clock.now());
  const ok = await store.commitTurn(
    {
      sessionKey,
      sessionId: "ses1",
      runId,
      inboxIds: [record.id],
      inboxState: "answered",
      events: [{ type: "assistant", text: texts.join(" "), toolCalls: [] }],
      outbox: texts.map((text, seq) => ({
        target: { ...target, chatId },
        text,
        seq,
        kind: "reply" as const,
      })),
      run: {
        runId,
        sessionKey,
        trigger: "user",
        channel: "console",
        provider: "test",
        model: "m",
        startedAt: clock.now(),
        durationMs: 1,
        outcome: "answered",
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
        toolCalls: 0,
        modelCalls: 1,
        errorKind: null,
        error: null,
      },
    },
    clock.now(),
  );
  expect(ok).toBe(true);
}

describe("OutboxDispatcher", () => {
  let store: Store;
  let clock: ManualClock;
  let channel: ScriptedChannel;
  let dispatcher: OutboxDispatcher;

  beforeEach(() => {
    store = openSqliteStore({ path: ":memory:" });
    clock = new ManualClock();
    channel = new ScriptedChannel();
    dispatcher = new OutboxDispatcher({
      store,
      channelFor: (t) => (t.channel === "console" ? channel : undefined),
      clock,
      logger: silentLogger(),
      metrics: new GatewayMetrics(),
      maxAttempts: 3,
    });
  });
  afterEach(async () => {
    await dispatcher.stop();
    store.close();
  });

  const pass = async () => {
    dispatcher.kick();
    await dispatcher.idle();
  };

  it("sends chunks in order and records the platform's receipts", async () => {
    await seedTurn(store, clock, ["one", "two", "three"]);
    for (let i = 0; i < 3; i++) await pass();
    expect(channel.sent.map((m) => m.text)).toEqual(["one", "two", "three"]);
    expect(channel.sent.map((m) => m.idempotencyKey)).toEqual(["outbox-1", "outbox-2", "outbox-3"]);
    const rows = await store.outbox.listByState("sent", 10);
    expect(rows.map((r) => r.platformMessageId)).toEqual(["p1", "p2", "p3"]);
  });

  it("waits the platform's retry-after on a rate limit, then sends once", async () => {
    await seedTurn(store, clock, ["hello"]);
    channel.failures.push(new ChannelSendError("rate_limit", "429", { retryAfterMs: 5_000 }));
    await pass();
    expect(channel.sent).toHaveLength(0);
    const [row] = await store.outbox.listByState("pending", 1);
    expect(row?.nextAttemptAt).toBe(clock.now() + 5_000);
    clock.advance(4_999);
    await pass();
    expect(channel.sent).toHaveLength(0);
    clock.advance(1);
    await pass();
    expect(channel.sent.map((m) => m.text)).toEqual(["hello"]);
    expect((await store.outbox.countByState()).sent).toBe(1);
  });

  it("marks a reply dead after maxAttempts, and at once on a permanent error", async () => {
    await seedTurn(store, clock, ["a"], "c1");
    await seedTurn(store, clock, ["b"], "c2");
    channel.failures.push(new ChannelSendError("permanent", "403 blocked by the user"));
    await pass(); // c1 → dead (permanent), c2 sent
    expect((await store.outbox.listByState("dead", 5)).map((r) => r.lastError)).toEqual([
      "permanent: 403 blocked by the user",
    ]);
    await seedTurn(store, clock, ["c"], "c3");
    channel.failures.push(
      new Error("socket hang up"),
      new Error("socket hang up"),
      new Error("socket hang up"),
    );
    for (let i = 0; i < 3; i++) {
      await pass();
      clock.advance(120_000);
    }
    const dead = await store.outbox.listByState("dead", 5);
    expect(dead).toHaveLength(2);
    expect(dead[1]?.attempts).toBe(2);
    expect(channel.sent.map((m) => m.text)).toEqual(["b"]);
  });

  it("expires replies older than maxAgeMs instead of sending them late", async () => {
    await seedTurn(store, clock, ["stale"]);
    clock.advance(3_600_001);
    expect(await dispatcher.expireStale()).toBe(1);
    await pass();
    expect(channel.sent).toHaveLength(0);
    expect((await store.outbox.countByState()).expired).toBe(1);
  });

  it("marks replies for an unconfigured channel dead with the reason", async () => {
    await seedTurn(store, clock, ["x"]);
    const orphaned = new OutboxDispatcher({
      store,
      channelFor: () => undefined,
      clock,
      logger: silentLogger(),
      metrics: new GatewayMetrics(),
    });
    orphaned.kick();
    await orphaned.idle();
    await orphaned.stop();
    expect((await store.outbox.listByState("dead", 1))[0]?.lastError).toBe(
      "channel console/default is not configured",
    );
  });
});
