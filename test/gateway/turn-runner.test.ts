/**
 * The turn runner on a real store that fails on demand: claim under the session lease, run the
 * real harness against a scripted provider, commit, announce. Every case checks the store and
 * the events; backoffs pass on the ManualClock, never on the wall clock.
 */
import { LaneAbortedError } from "../../src/gateway/lanes/errors.js";
import { SystemPrompt } from "../../src/harness/system-prompt.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Channel, ChatTarget, InboundMessage, StreamTarget } from "../../src/channels/types.js";
import { ChannelDirectory } from "../../src/gateway/channel-directory.js";
import { type GatewayEvent, GatewayEvents } from "../../src/gateway/events.js";
import type { LaneTaskContext } from "../../src/gateway/lanes/types.js";
import { GatewayMetrics } from "../../src/gateway/metrics.js";
import { SessionLeases } from "../../src/gateway/session-leases.js";
import { TurnRunner } from "../../src/gateway/turn-runner.js";
import { heartbeatTurn, messageTurn } from "../../src/gateway/turn-sources.js";
import { AgentSession } from "../../src/harness/agent-session.js";
import { ModelRouter } from "../../src/harness/models/model-router.js";
import type { ModelProvider, ModelRequest, ProviderEvent } from "../../src/harness/providers/types.js";
import { ToolRegistry } from "../../src/harness/tools/registry.js";
import { StoreError } from "../../src/store/store-error.js";
import type { Store } from "../../src/store/types.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { failingStore } from "../helpers/failing-store.js";
import { until } from "../helpers/until.js";

/** Who answers: an id and model no default uses, so the run record can only have them from `attempt`. */
const PROVIDER_ID = "scripted-turn-runner";
const MODEL = "model-under-test";
const KEY = "agent:main:telegram:default:direct:42";
const TTL_MS = 60_000;
/** The runner's commit attempts (COMMIT_ATTEMPTS) and its backoff ceilings between them (0.5 s doubling, capped at 15 s). */
const COMMIT_ATTEMPTS = 8;
const CEILINGS_MS = [500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000];

/** A provider that answers from a script and records every request (our own port, no SDK). */
class ScriptedProvider implements ModelProvider {
  readonly id = PROVIDER_ID;
  readonly simulated = false;
  readonly requests: ModelRequest[] = [];
  constructor(readonly script: Array<ProviderEvent[]>) {}
  async *stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    yield* this.script.shift() ?? [
      { type: "text_delta", text: "(script ended)" },
      { type: "stop", reason: "end_turn" },
    ];
  }
}

const answer = (t: string): ProviderEvent[] => [
  { type: "text_delta", text: t },
  { type: "usage", usage: { inputTokens: 10, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 } },
  { type: "stop", reason: "end_turn" },
];

const TARGET: ChatTarget = { channel: "telegram", accountId: "default", chatId: "42" };

function message(id: string, text = "hello"): InboundMessage {
  return {
    ...TARGET,
    senderId: "42",
    senderName: "Ann",
    isDirect: true,
    mentionsBot: true,
    text,
    attachments: [],
    platformMessageId: id,
    receivedAt: 1,
  };
}

const stores: Store[] = [];
beforeEach(() => {
  // The runner's jitter has no seam of its own: at the ceiling its backoff schedule is exact.
  vi.spyOn(Math, "random").mockReturnValue(1);
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const store of stores.splice(0)) await store.close();
});

/** A channel that records what the turn runner tells it about live text (our own port, no SDK). */
class LiveTextChannel implements Channel {
  readonly name = "telegram" as const;
  readonly accountId = "default";
  readonly limits = { maxMessageChars: 4096, formatting: "plain" as const };
  readonly deltas: Array<{ target: StreamTarget; text: string }> = [];
  readonly discarded: StreamTarget[] = [];
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async send(): Promise<{ platformMessageId: string }> {
    return { platformMessageId: "1" };
  }
  streamDelta(target: StreamTarget, text: string): void {
    this.deltas.push({ target: { ...target, inboxIds: [...target.inboxIds] }, text });
  }
  streamDiscard(target: StreamTarget): void {
    this.discarded.push({ ...target, inboxIds: [...target.inboxIds] });
  }
}

function setup(script: Array<ProviderEvent[]>) {
  const { store, failing, failures } = failingStore();
  stores.push(store);
  const clock = new ManualClock();
  const logger = silentLogger();
  const provider = new ScriptedProvider(script);
  const session = new AgentSession({
    transcript: store.transcript,
    router: ModelRouter.single(provider, MODEL, { profileId: "work" }),
    tools: new ToolRegistry(),
    workspaceDir: "/nonexistent-workspace",
    limits: { maxTokens: 100, maxToolCallsPerRun: 10, historyLimit: 50 },
    prompt: new SystemPrompt({ workspaceDir: "/nonexistent-workspace" }),
    clock,
  });
  const leases = new SessionLeases({
    store,
    owner: "gw_test",
    ttlMs: TTL_MS,
    clock,
    logger,
    onLost: () => {},
    onSweep: async () => {},
  });
  const events = new GatewayEvents((err) => {
    throw err;
  });
  const seen: GatewayEvent[] = [];
  events.on((event) => seen.push(event));
  const channel = new LiveTextChannel();
  const channels = new ChannelDirectory();
  channels.add(channel);
  const runner = new TurnRunner({
    store,
    session,
    // The fallback route names someone else: only the attempt events can name PROVIDER_ID.
    router: { primary: { provider: "fallback-provider", model: "fallback-model", profileId: "default" } },
    channelFor: channels.channelFor,
    events,
    leases,
    progressTimeoutMs: 120_000,
    clock,
    logger,
    metrics: new GatewayMetrics(),
  });
  const lane: LaneTaskContext = {
    signal: new AbortController().signal,
    progress() {},
    acquireModelSlot: async () => ({ release() {} }),
  };
  /** Starts a message turn; `settled` turns true when run() resolves or rejects. */
  const start = (source = messageTurn({ collectAll: false, steer: false })) => {
    const state: { settled: boolean; result?: "resolved"; error?: unknown } = { settled: false };
    const done = runner.run(KEY, source, lane).then(
      () => {
        state.result = "resolved";
      },
      (err: unknown) => {
        state.error = err;
      },
    );
    void done.finally(() => {
      state.settled = true;
    });
    return { state, done };
  };
  const queue = async (id: string) =>
    (await store.inbox.receive(message(id), KEY, clock.now(), "queued")).record.id;
  return { store, failing, failures, clock, provider, runner, leases, lane, seen, start, queue, channel };
}

const types = (events: GatewayEvent[]) => events.map((e) => e.type);

describe("TurnRunner", () => {
  it("commits a message turn's answer: inbox answered, reply rows, a run record naming who answered", async () => {
    const t = setup([answer("hi Ann")]);
    const inboxId = await t.queue("m1");
    const { state, done } = t.start();
    await done;
    expect(state.result).toBe("resolved");

    const row = await t.store.inbox.get(inboxId);
    expect(row).toMatchObject({ state: "answered", attempts: 1, owner: null, leaseUntil: null });
    const outbox = await t.store.outbox.listForInbox(inboxId);
    expect(outbox).toMatchObject([
      { text: "hi Ann", kind: "reply", state: "pending", replyTo: "m1", seq: 0 },
    ]);
    const runs = await t.store.runs.recent(10);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      sessionKey: KEY,
      trigger: "user",
      channel: "telegram",
      provider: PROVIDER_ID,
      model: MODEL,
      outcome: "answered",
      modelCalls: 1,
      usage: { inputTokens: 10, outputTokens: 3 },
    });
    expect(t.provider.requests[0]?.model).toBe(MODEL);

    expect(types(t.seen)).toEqual(["turn_committed", "replies_committed", "turn_ended"]);
    expect(t.seen[0]).toMatchObject({
      type: "turn_committed",
      sessionKey: KEY,
      inboxIds: [inboxId],
      state: "answered",
      replies: ["hi Ann"],
      run: { runId: runs[0]?.runId, provider: PROVIDER_ID },
    });
    // The lease stays held for the session's next turn, until it has been idle a while.
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toMatchObject({ owner: "gw_test" });
    await t.leases.releaseIdle();
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toBeUndefined();
    expect((await t.store.sessions.get(KEY))?.lastTarget).toEqual(TARGET);
  });

  it("a turn that ends with nothing to send has its preview discarded; one with an answer does not", async () => {
    const t = setup([answer("  \n "), answer("a real answer")]);
    const blank = await t.queue("m1");
    await t.start().done;
    expect(await t.store.outbox.listForInbox(blank)).toEqual([]);
    expect(t.channel.deltas.map((d) => d.text)).toEqual(["  \n "]);
    expect(t.channel.discarded).toEqual([{ ...TARGET, replyTo: "m1", inboxIds: [blank] }]);
    await t.queue("m2");
    await t.start().done;
    expect(t.channel.discarded).toHaveLength(1);
  });

  it("a message claimed again (redone after a crash) streams as recovered: its earlier preview may be in the chat", async () => {
    const t = setup([answer("again")]);
    const id = await t.queue("m1");
    // A crashed attempt claimed it once: the claim now is its second.
    const lease = await t.store.leases.acquireSession(KEY, "gw_dead", t.clock.now(), 1);
    await t.store.inbox.claim(
      KEY,
      "ses-x",
      "run-x",
      { all: false, lease: { owner: "gw_dead", fence: lease?.fence ?? 0 } },
      t.clock.now(),
    );
    t.clock.advance(2);
    await t.start().done;
    expect((await t.store.inbox.get(id))?.attempts).toBe(2);
    expect(t.channel.deltas[0]?.target).toMatchObject({ replyTo: "m1", recovered: true });
  });

  it("retries a failing commit with backoff on the clock, gives up after its attempts, and never throws", async () => {
    const t = setup([answer("an answer nobody saves")]);
    const inboxId = await t.queue("m1");
    t.failing.add("commitTurn");
    const t0 = t.clock.now();
    const { state, done } = t.start();

    await until(() => t.failures.length === 1, "the first commit attempt");
    // Each retry waits its full backoff ceiling on the clock, and not a millisecond less.
    for (const [i, waitMs] of CEILINGS_MS.entries()) {
      await t.clock.advanceAsync(waitMs - 1);
      expect(t.failures).toHaveLength(i + 1);
      await t.clock.advanceAsync(1);
      expect(t.failures).toHaveLength(i + 2);
    }
    await done;

    expect(state.result).toBe("resolved");
    expect(t.failures).toEqual(Array(COMMIT_ATTEMPTS).fill("commitTurn"));
    expect(t.clock.now() - t0).toBe(CEILINGS_MS.reduce((a, b) => a + b));
    expect(t.clock.pendingTimers).toBe(0);
    expect(t.provider.requests).toHaveLength(1);
    expect(types(t.seen)).toEqual(["turn_unsaved", "turn_ended"]);
    expect(t.seen[0]).toEqual({ type: "turn_unsaved", sessionKey: KEY, inboxIds: [inboxId] });

    // Not answered, and not retried against the failing store: the row stays `running` under
    // the lease this process keeps (and renews), to be redone after a restart.
    expect(await t.store.inbox.get(inboxId)).toMatchObject({
      state: "running",
      attempts: 1,
      owner: "gw_test",
    });
    expect(await t.store.outbox.listForInbox(inboxId)).toEqual([]);
    expect(await t.store.runs.recent(10)).toEqual([]);
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toMatchObject({ owner: "gw_test" });
    const session = await t.store.sessions.get(KEY);
    const transcript = await t.store.transcript.tail(KEY, session?.sessionId ?? "", 10);
    expect(transcript.map((e) => e.payload.type)).toEqual(["user"]);
  });

  it("commits once when commitTurn fails twice and then works", async () => {
    const t = setup([answer("saved on the third try")]);
    const inboxId = await t.queue("m1");
    t.failing.add("commitTurn");
    const { state, done } = t.start();

    await until(() => t.failures.length === 1, "the first commit attempt");
    await t.clock.advanceAsync(CEILINGS_MS[0] ?? 0);
    expect(t.failures).toHaveLength(2);
    t.failing.delete("commitTurn");
    expect(state.settled).toBe(false);
    await t.clock.advanceAsync(CEILINGS_MS[1] ?? 0);
    await done;

    expect(state.result).toBe("resolved");
    expect(t.failures).toEqual(["commitTurn", "commitTurn"]);
    expect(await t.store.inbox.get(inboxId)).toMatchObject({ state: "answered", attempts: 1 });
    expect(await t.store.outbox.listForInbox(inboxId)).toMatchObject([{ text: "saved on the third try" }]);
    expect(await t.store.runs.recent(10)).toHaveLength(1);
    expect(types(t.seen)).toEqual(["turn_committed", "replies_committed", "turn_ended"]);
    // The lease stays held for the session's next turn, until it has been idle a while.
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toMatchObject({ owner: "gw_test" });
    await t.leases.releaseIdle();
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toBeUndefined();
  });

  it("rejects when the claim fails, still ends the turn and frees the lease; the message is answered once later", async () => {
    const t = setup([answer("answered once")]);
    const inboxId = await t.queue("m1");
    t.failing.add("inbox.claim");
    const first = t.start();
    await first.done;

    // The store error propagates (the turn scheduler logs it as a crashed turn).
    expect(first.state.result).toBeUndefined();
    expect(first.state.error).toBeInstanceOf(StoreError);
    expect(t.failures).toEqual(["inbox.claim"]);
    expect(types(t.seen)).toEqual(["turn_ended"]);
    // The lease stays held for the session's next turn, until it has been idle a while.
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toMatchObject({ owner: "gw_test" });
    await t.leases.releaseIdle();
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toBeUndefined();
    expect(await t.store.inbox.get(inboxId)).toMatchObject({ state: "queued", attempts: 0 });
    expect(t.provider.requests).toHaveLength(0);

    t.failing.delete("inbox.claim");
    t.seen.length = 0;
    await t.start().done;
    await t.start().done; // nothing left to claim: no second answer
    expect(await t.store.inbox.get(inboxId)).toMatchObject({ state: "answered", attempts: 1 });
    expect(await t.store.outbox.listForInbox(inboxId)).toHaveLength(1);
    expect(await t.store.runs.recent(10)).toHaveLength(1);
    expect(t.provider.requests).toHaveLength(1);
    expect(types(t.seen)).toEqual(["turn_committed", "replies_committed", "turn_ended", "turn_ended"]);
  });

  it("a turn whose session lease was lost (evicted) commits nothing, no failure notice; the next holder redoes its message", async () => {
    const t = setup([answer("too late")]);
    const inboxId = await t.queue("m1");
    const lost = new AbortController();
    lost.abort(new LaneAbortedError("evicted"));
    await t.runner.run(KEY, messageTurn({ collectAll: false, steer: false }), {
      ...t.lane,
      signal: lost.signal,
    });
    expect(await t.store.outbox.listForInbox(inboxId)).toEqual([]);
    expect(await t.store.inbox.get(inboxId)).toMatchObject({ state: "running", owner: "gw_test" });
    expect(types(t.seen)).not.toContain("turn_committed");
    // Past the lost lease the next holder takes the session and its message back to the queue.
    const next = await t.store.leases.acquireSession(KEY, "gw_other", t.clock.now() + TTL_MS + 1, TTL_MS);
    expect(next?.requeued).toBe(1);
  });

  it("does nothing while another process holds the session's lease", async () => {
    const t = setup([answer("never")]);
    const inboxId = await t.queue("m1");
    const other = await t.store.leases.acquireSession(KEY, "gw_other", t.clock.now(), TTL_MS);
    expect(other).toBeDefined();
    const { state, done } = t.start();
    await done;

    expect(state.result).toBe("resolved");
    expect(types(t.seen)).toEqual(["turn_ended"]);
    expect(await t.store.inbox.get(inboxId)).toMatchObject({ state: "queued", attempts: 0, runId: null });
    expect(t.provider.requests).toHaveLength(0);
    expect(await t.store.runs.recent(10)).toEqual([]);
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toMatchObject({
      owner: "gw_other",
      fence: other?.fence,
    });
  });

  it("commits a heartbeat answered only HEARTBEAT_OK with no reply rows", async () => {
    const t = setup([answer("HEARTBEAT_OK")]);
    const source = heartbeatTurn({ checklist: "- look at the calendar", target: TARGET, ackMaxChars: 300 });
    const { state, done } = t.start(source);
    await done;

    expect(state.result).toBe("resolved");
    expect(types(t.seen)).toEqual(["turn_committed", "turn_ended"]);
    expect(t.seen[0]).toMatchObject({ type: "turn_committed", inboxIds: [], state: "answered", replies: [] });
    expect(Object.values(await t.store.outbox.countByState()).every((n) => n === 0)).toBe(true);
    expect(await t.store.runs.recent(10)).toMatchObject([
      { trigger: "heartbeat", outcome: "answered", provider: PROVIDER_ID, model: MODEL },
    ]);
    const session = await t.store.sessions.get(KEY);
    const transcript = await t.store.transcript.tail(KEY, session?.sessionId ?? "", 10);
    expect(transcript.map((e) => e.payload)).toMatchObject([
      { type: "trigger", origin: "heartbeat" },
      { type: "assistant", text: "HEARTBEAT_OK" },
    ]);
    // The lease stays held for the session's next turn, until it has been idle a while.
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toMatchObject({ owner: "gw_test" });
    await t.leases.releaseIdle();
    expect(await t.store.leases.getSession(KEY, t.clock.now())).toBeUndefined();
  });
});
