/**
 * The outbox dispatcher against the real SQLite store and a scripted Channel (our own port).
 * One ManualClock is both its "now" and its timers (send timeouts, retry timers, store-write
 * backoff, stop's limit); backoff jitter is pinned to the ceiling (`random: () => 1`).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Channel, ChatTarget, OutboundMessage, SendReceipt } from "../../src/channels/types.js";
import { ChannelSendError } from "../../src/channels/errors.js";
import { GatewayMetrics } from "../../src/gateway/metrics.js";
import { OutboxDispatcher } from "../../src/gateway/outbox-dispatcher.js";
import type { OutboxDispatcherOptions } from "../../src/gateway/outbox-options.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { OutboxRepo } from "../../src/store/repos/outbox-repo.js";
import type { Store } from "../../src/store/types.js";
import { StoreError } from "../../src/store/store-error.js";
import { ManualClock } from "../../src/util/clock.js";
import { createLogger, silentLogger } from "../../src/util/logger.js";

/** What a held send does until the test releases it; gets the send's signal. */
type Hold = (signal: AbortSignal | undefined) => Promise<void>;

class ScriptedChannel implements Channel {
  readonly name = "console" as const;
  readonly accountId = "default";
  readonly limits = { maxMessageChars: 100, formatting: "plain" as const };
  readonly sent: OutboundMessage[] = [];
  /** Every call of send, with the signal it was given. */
  readonly calls: Array<{ text: string; signal: AbortSignal | undefined }> = [];
  failures: Array<ChannelSendError | Error> = [];
  /** Sends of these texts wait for their Hold before going on. */
  readonly holds = new Map<string, Hold>();
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt> {
    this.calls.push({ text: message.text, signal });
    const hold = this.holds.get(message.text);
    if (hold) await hold(signal);
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.sent.push(message);
    return { platformMessageId: `p${this.sent.length}` };
  }
}

/** A send that never settles, whatever its signal does (a hung socket). */
const hang: Hold = () => new Promise<void>(() => {});

/** A send that honours its signal: it fails with the signal's reason once aborted. */
const untilAborted: Hold = (signal) =>
  new Promise<void>((_, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

/** A hold the test releases by hand. */
function gate(): { hold: Hold; release(): void } {
  let release = () => {};
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { hold: () => opened, release };
}

/** Lets every ready promise chain run (the SQLite store is synchronous under its async API). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The store with some outbox methods replaced (failure injection at the port). */
function withOutbox(store: Store, overrides: Partial<OutboxRepo>): Store {
  const outbox = new Proxy(store.outbox, {
    get(target, prop) {
      const own = (overrides as Record<PropertyKey, unknown>)[prop];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return new Proxy(store, {
    get(target, prop) {
      if (prop === "outbox") return outbox;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A logger whose JSON lines land in `lines`. */
function capturingLogger(): {
  logger: ReturnType<typeof silentLogger>;
  lines: Array<Record<string, unknown>>;
} {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    format: "json",
    level: "debug",
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
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
  // Claimed and committed under the session's lease, as a turn is; given back afterwards.
  const lease = await store.leases.acquireSession(sessionKey, "gw_seed", clock.now(), 60_000);
  if (!lease) throw new Error("seedTurn: the session lease was refused");
  await store.inbox.claim(sessionKey, "ses1", runId, { all: false, lease }, clock.now());
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
        attempts: [],
        calls: [],
      },
      lease,
    },
    clock.now(),
  );
  expect(ok).toBe(true);
  await store.leases.releaseSession(sessionKey, lease.owner, lease.fence, clock.now());
}

describe("OutboxDispatcher", () => {
  let store: Store;
  let clock: ManualClock;
  let channel: ScriptedChannel;
  let dispatcher: OutboxDispatcher;

  /** Replaces the dispatcher under test (afterEach stops it). */
  const make = (over: Partial<OutboxDispatcherOptions> = {}): OutboxDispatcher => {
    dispatcher = new OutboxDispatcher({
      store,
      channelFor: (t) => (t.channel === "console" ? channel : undefined),
      clock,
      logger: silentLogger(),
      metrics: new GatewayMetrics(),
      maxAttempts: 3,
      random: () => 1,
      ...over,
    });
    return dispatcher;
  };

  beforeEach(() => {
    store = openSqliteStore({ path: ":memory:" });
    clock = new ManualClock();
    channel = new ScriptedChannel();
    make();
  });
  afterEach(async () => {
    const stopping = dispatcher.stop();
    await clock.advanceAsync(60_000);
    await stopping;
    store.close();
  });

  const pass = async () => {
    dispatcher.kick();
    await dispatcher.idle();
  };

  it("sends chunks in order and records the platform's receipts", async () => {
    await seedTurn(store, clock, ["one", "two", "three"]);
    await pass();
    expect(channel.sent.map((m) => m.text)).toEqual(["one", "two", "three"]);
    const rows0 = await store.outbox.listByState("sent", 10);
    expect(channel.sent.map((m) => m.idempotencyKey)).toEqual(
      rows0.map((r) => `outbox-${r.id}-${r.createdAt.toString(36)}`),
    );
    expect(channel.sent[0]?.idempotencyKey).toMatch(/^outbox-1-[0-9a-z]+$/);
    const rows = await store.outbox.listByState("sent", 10);
    expect(rows.map((r) => r.platformMessageId)).toEqual(["p1", "p2", "p3"]);
  });

  it("while other nodes run, finds rows they commit (no kick here) within pollMs; alone, it waits to be kicked", async () => {
    await pass();
    await seedTurn(store, clock, ["committed by another node"]);
    await clock.advanceAsync(60_000);
    await dispatcher.idle();
    expect(channel.sent).toHaveLength(0); // alone: nothing woke it
    dispatcher.pollOthers(1_000);
    await dispatcher.idle();
    expect(channel.sent.map((m) => m.text)).toEqual(["committed by another node"]);
    await seedTurn(store, clock, ["and another"]);
    await clock.advanceAsync(999);
    await dispatcher.idle();
    expect(channel.sent).toHaveLength(1);
    await clock.advanceAsync(1);
    await dispatcher.idle();
    expect(channel.sent.map((m) => m.text)).toEqual(["committed by another node", "and another"]);
    dispatcher.pollOthers(undefined);
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

  it("arms one timer for a chat in backoff instead of polling for the chunks behind it", async () => {
    const due = vi.spyOn(store.outbox, "nextDueAt");
    await seedTurn(store, clock, ["first", "second"]);
    channel.failures.push(new ChannelSendError("rate_limit", "429", { retryAfterMs: 5_000 }));
    await pass();
    const callsAfterPass = due.mock.calls.length;
    await clock.advanceAsync(4_999);
    expect(due.mock.calls.length).toBe(callsAfterPass); // no pass before the retry is due
    expect(clock.pendingTimers).toBe(1); // one timer, armed for the retry
    await clock.advanceAsync(1);
    await dispatcher.idle();
    expect(channel.sent.map((m) => m.text)).toEqual(["first", "second"]);
  });

  it("marks a reply dead after maxAttempts, counting every attempt, and at once on a permanent error", async () => {
    await seedTurn(store, clock, ["a"], "c1");
    await seedTurn(store, clock, ["b"], "c2");
    channel.failures.push(new ChannelSendError("permanent", "403 blocked by the user"));
    await pass(); // c1 → dead (permanent), c2 sent
    const [blocked] = await store.outbox.listByState("dead", 5);
    expect(blocked).toMatchObject({ lastError: "permanent: 403 blocked by the user", attempts: 1 });
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
    expect(channel.calls.filter((c) => c.text === "c")).toHaveLength(3);
    const dead = await store.outbox.listByState("dead", 5);
    expect(dead).toHaveLength(2);
    expect(dead[1]).toMatchObject({ attempts: 3, lastError: "transient: socket hang up" });
    expect(channel.sent.map((m) => m.text)).toEqual(["b"]);
  });

  it("expires replies older than maxAgeMs at start-up instead of sending them late", async () => {
    await seedTurn(store, clock, ["stale"]);
    clock.advance(3_600_001);
    expect(await dispatcher.expireStale()).toBe(1);
    await pass();
    expect(channel.sent).toHaveLength(0);
    expect((await store.outbox.countByState()).expired).toBe(1);
  });

  it("expires, with a log line, a reply that outlived maxAgeMs while waiting to be sent", async () => {
    const { logger, lines } = capturingLogger();
    make({ logger });
    await seedTurn(store, clock, ["waited"], "c1");
    channel.failures.push(new Error("socket hang up"));
    await pass(); // c1 fails once and waits for its retry
    await seedTurn(store, clock, ["queued"], "c2"); // no pass claims it before it is too old
    clock.set(clock.now() + 3_600_001); // the host slept: the wall clock jumped, no timer ran
    await pass();
    expect(channel.sent).toHaveLength(0);
    expect(channel.calls.map((c) => c.text)).toEqual(["waited"]);
    expect(await store.outbox.countByState()).toMatchObject({ expired: 2, dead: 0, pending: 0, sending: 0 });
    const expiredLines = lines.filter((l) => l.msg === "reply expired unsent: older than outbox.maxAgeMs");
    expect(expiredLines.map((l) => [l.chatId, l.level])).toEqual([
      ["c1", 40],
      ["c2", 40],
    ]);
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

  it("times out a hung send: aborts its signal and retries it with backoff", async () => {
    await seedTurn(store, clock, ["stuck"]);
    channel.holds.set("stuck", hang);
    dispatcher.kick();
    await settle();
    const [call] = channel.calls;
    expect(call?.signal?.aborted).toBe(false);
    await clock.advanceAsync(29_999);
    expect((await store.outbox.get(1))?.state).toBe("sending");
    await clock.advanceAsync(1);
    await dispatcher.idle();
    expect(call?.signal?.aborted).toBe(true);
    expect(call?.signal?.reason).toMatchObject({ name: "ChannelSendError", kind: "transient" });
    expect(await store.outbox.get(1)).toMatchObject({
      state: "pending",
      attempts: 1,
      lastError: "transient: send timed out after 30000 ms (sendTimeoutMs)",
      nextAttemptAt: clock.now() + 1_000,
    });
    channel.holds.delete("stuck");
    clock.advance(1_000);
    await pass();
    expect(channel.sent.map((m) => m.text)).toEqual(["stuck"]);
  });

  describe("a row in doubt (an earlier send may have arrived)", () => {
    /** The channel can look its messages up; `delivered` holds the keys the platform has. */
    const lookups: string[] = [];
    const delivered = new Map<string, string>();
    let lookupFailure: Error | undefined;
    beforeEach(() => {
      lookups.length = 0;
      delivered.clear();
      lookupFailure = undefined;
      Object.assign(channel, {
        findSent: async (m: OutboundMessage) => {
          lookups.push(m.idempotencyKey);
          if (lookupFailure) throw lookupFailure;
          const id = delivered.get(m.idempotencyKey);
          return id ? { platformMessageId: id } : undefined;
        },
      });
    });

    it("a timed-out send that did arrive is found by its key and recorded, not posted again", async () => {
      await seedTurn(store, clock, ["once"]);
      channel.failures.push(new ChannelSendError("transient", "socket hang up"));
      await pass();
      const row = await store.outbox.get(1);
      expect(row).toMatchObject({ state: "pending", inDoubt: true });
      delivered.set(`outbox-1-${row?.createdAt.toString(36)}`, "p-earlier");
      clock.advance(1_000);
      await pass();
      expect(lookups).toHaveLength(1);
      expect(channel.sent).toHaveLength(0);
      expect(await store.outbox.get(1)).toMatchObject({ state: "sent", platformMessageId: "p-earlier" });
    });

    it("a row taken over from `sending` is looked up, then sent when it is not there", async () => {
      await seedTurn(store, clock, ["retaken"]);
      await store.outbox.claimDue(clock.now(), 10, {
        owner: "dead",
        ttlMs: 1_000,
        hosted: [{ channel: "console", accountId: "default" }],
      });
      clock.advance(1_001);
      const [reset] = await store.outbox.resetExpired(clock.now());
      expect(reset).toMatchObject({ state: "pending", inDoubt: true });
      await pass();
      expect(lookups).toHaveLength(1);
      expect(channel.sent.map((m) => m.text)).toEqual(["retaken"]);
    });

    it("a lookup that cannot tell is retried later, never posted blind; a rate limit puts no row in doubt", async () => {
      await seedTurn(store, clock, ["unsure"]);
      channel.failures.push(new ChannelSendError("rate_limit", "429", { retryAfterMs: 1_000 }));
      await pass();
      expect(await store.outbox.get(1)).toMatchObject({ state: "pending", inDoubt: false });
      channel.failures.push(new ChannelSendError("transient", "timeout"));
      clock.advance(1_000);
      await pass();
      lookupFailure = new ChannelSendError("transient", "history unavailable");
      clock.advance(60_000);
      await pass();
      // The third attempt (maxAttempts) was the lookup's: nothing was ever posted blind.
      expect(channel.sent).toHaveLength(0);
      expect(lookups).toHaveLength(1);
      expect(await store.outbox.get(1)).toMatchObject({ state: "dead", attempts: 3, inDoubt: true });
    });

    it("a row never in doubt is sent without a lookup", async () => {
      await seedTurn(store, clock, ["fresh"]);
      await pass();
      expect(lookups).toHaveLength(0);
      expect(channel.sent).toHaveLength(1);
    });
  });

  it("keeps sending to other chats while one chat's send is slow", async () => {
    await seedTurn(store, clock, ["slow"], "c1");
    await seedTurn(store, clock, ["b0", "b1"], "c2");
    const slow = gate();
    channel.holds.set("slow", slow.hold);
    dispatcher.kick();
    await settle();
    expect(channel.sent.map((m) => m.text)).toEqual(["b0", "b1"]);
    expect((await store.outbox.get(1))?.state).toBe("sending");
    slow.release();
    await dispatcher.idle();
    expect(channel.sent.map((m) => m.text)).toEqual(["b0", "b1", "slow"]);
    expect((await store.outbox.countByState()).sent).toBe(3);
  });

  it("runs at most `concurrency` sends at once and claims more as they finish", async () => {
    make({ concurrency: 2 });
    const gates = ["c1", "c2", "c3"].map(() => gate());
    for (const [i, chatId] of ["c1", "c2", "c3"].entries()) {
      await seedTurn(store, clock, [`to ${chatId}`], chatId);
      channel.holds.set(`to ${chatId}`, gates[i]!.hold);
    }
    dispatcher.kick();
    await settle();
    expect(channel.calls.map((c) => c.text)).toEqual(["to c1", "to c2"]);
    gates[1]!.release();
    await settle();
    expect(channel.calls.map((c) => c.text)).toEqual(["to c1", "to c2", "to c3"]);
    gates[0]!.release();
    gates[2]!.release();
    await dispatcher.idle();
    expect((await store.outbox.countByState()).sent).toBe(3);
  });

  it("stop() aborts in-flight sends and waits for them to settle", async () => {
    await seedTurn(store, clock, ["aborted"], "c1");
    await seedTurn(store, clock, ["finishes"], "c2");
    channel.holds.set("aborted", untilAborted);
    // This platform call completes even though it was asked to stop.
    channel.holds.set("finishes", (signal) => untilAborted(signal).catch(() => {}));
    dispatcher.kick();
    await settle();
    expect(channel.calls).toHaveLength(2);
    await dispatcher.stop();
    expect(channel.calls.every((c) => c.signal?.aborted)).toBe(true);
    // The finished send is recorded; the aborted one stays `sending` (back to pending at the
    // next start) without using up an attempt.
    expect(await store.outbox.get(2)).toMatchObject({ state: "sent", platformMessageId: "p1" });
    expect(await store.outbox.get(1)).toMatchObject({ state: "sending", attempts: 0 });
    dispatcher.kick(); // no-op once stopped
    await settle();
    expect(channel.calls).toHaveLength(2);
  });

  it("stop() stops waiting for a send that ignores its signal after stopTimeoutMs", async () => {
    make({ stopTimeoutMs: 2_000 });
    await seedTurn(store, clock, ["deaf"]);
    channel.holds.set("deaf", hang);
    dispatcher.kick();
    await settle();
    let stopped = false;
    const stopping = dispatcher.stop().then(() => {
      stopped = true;
    });
    await clock.advanceAsync(1_999);
    expect(stopped).toBe(false);
    await clock.advanceAsync(1);
    await stopping;
    expect(channel.calls[0]?.signal?.aborted).toBe(true);
    expect((await store.outbox.get(1))?.state).toBe("sending");
  });

  it("re-records a receipt whose write failed, and never sends that reply again", async () => {
    const { logger, lines } = capturingLogger();
    let markSentFailures = 2;
    const flaky = withOutbox(store, {
      markSent: async (id, platformMessageId, now) => {
        if (markSentFailures-- > 0) throw new StoreError("locked", "database is locked");
        await store.outbox.markSent(id, platformMessageId, now);
      },
    });
    make({ store: flaky, logger });
    await seedTurn(store, clock, ["a", "b"]);
    dispatcher.kick();
    await dispatcher.idle(); // the unrecorded receipt takes no send slot: nothing waits on the store
    expect(channel.sent.map((m) => m.text)).toEqual(["a"]);
    expect((await store.outbox.get(1))?.state).toBe("sending"); // holds back "b", never resent
    await clock.advanceAsync(1_000); // second failure, next try in 2 s
    expect((await store.outbox.get(1))?.state).toBe("sending");
    await clock.advanceAsync(2_000);
    await dispatcher.idle();
    expect(await store.outbox.get(1)).toMatchObject({ state: "sent", platformMessageId: "p1", attempts: 0 });
    expect(channel.sent.map((m) => m.text)).toEqual(["a", "b"]);
    expect(channel.calls.map((c) => c.text)).toEqual(["a", "b"]);
    const failures = lines.filter((l) => l.level === 50 && l.outboxId === 1);
    expect(failures.map((l) => l.retryInMs)).toEqual([1_000, 2_000]);
    expect(String(failures[0]?.msg)).toMatch(/delivered.*not be sent again/);
  });

  it("at stop, gives an unrecorded receipt one last attempt, then logs it as left sending", async () => {
    const { logger, lines } = capturingLogger();
    let markSentCalls = 0;
    const broken = withOutbox(store, {
      markSent: async () => {
        markSentCalls++;
        throw new StoreError("disk_full", "database is full");
      },
    });
    make({ store: broken, logger });
    await seedTurn(store, clock, ["a"]);
    await pass();
    expect(markSentCalls).toBe(1);
    await dispatcher.stop();
    expect(markSentCalls).toBe(2);
    expect((await store.outbox.get(1))?.state).toBe("sending"); // back to pending at the next start
    expect(lines.at(-1)).toMatchObject({
      level: 50,
      outboxId: 1,
      msg: "reply delivered but its receipt was not recorded before stop; it stays `sending` and is sent again after restart",
    });
    expect(clock.pendingTimers).toBe(0); // no retry timer outlives stop()
    await clock.advanceAsync(60_000);
    expect(markSentCalls).toBe(2);
  });

  it("rejects bad options naming the field, the value and what was expected", () => {
    expect(() => make({ sendTimeoutMs: 0 })).toThrow(
      new RangeError(
        "OutboxDispatcherOptions.sendTimeoutMs: got 0, expected an integer from 1 to 2147483647",
      ),
    );
    expect(() => make({ concurrency: 1.5 })).toThrow(
      /OutboxDispatcherOptions\.concurrency: got 1.5, expected/,
    );
    expect(() => make({ maxAttempts: Number.NaN })).toThrow(/maxAttempts: got NaN/);
  });
});
