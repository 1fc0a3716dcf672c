/**
 * HelperProgress on its own: a real in-memory store with helper rows, the real event bus and
 * channel directory, and an in-test channel that records what it is asked to show. Every rule:
 * a helper's tool call shows (its root parent's chat, one line per helper), a session that is
 * no helper or has no chat shows nothing, ends (done, failed, stopped; a yield is no end) update
 * the display but never create one, the parent's wake lets ended helpers go, helpers all stopped
 * and /stop discard the display; and callSummary.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callSummary } from "../../../src/capabilities/subagents/call-summary.js";
import { HelperProgress } from "../../../src/capabilities/subagents/helper-progress.js";
import type { Channel, HelperProgress as Progress, StreamTarget } from "../../../src/channels/types.js";
import { ChannelDirectory } from "../../../src/gateway/channel-directory.js";
import { GatewayEvents } from "../../../src/gateway/events.js";
import type { HookTurn } from "../../../src/harness/hooks.js";
import type { RunRecord } from "../../../src/store/repos/run-repo.js";
import type { Subagent } from "../../../src/store/repos/subagent-repo.js";
import { openSqliteStore } from "../../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../../src/store/types.js";
import { silentLogger } from "../../../src/util/logger.js";
import { commitLeased, runRecord, turn as turnOf } from "../../contract/store/fixtures.js";
import { until } from "../../helpers/until.js";

const PREFIX = "agent:main:sub:";
const PARENT = "agent:main:telegram:dm:42";
const CHAT = { channel: "telegram" as const, accountId: "default", chatId: "42" };

/** Records what it is asked to show and discard. */
class RecordingChannel {
  readonly name = "telegram" as const;
  readonly accountId = "default";
  readonly limits = { maxMessageChars: 4096, formatting: "plain" as const };
  readonly shown: Array<{ target: StreamTarget; lines: string[] }> = [];
  readonly discarded: StreamTarget[] = [];
  async start() {}
  async stop() {}
  async send() {
    return { platformMessageId: "1" };
  }
  streamHelpers(target: StreamTarget, p: Progress) {
    this.shown.push({
      target,
      lines: p.helpers.map((h) => `${h.label}:${h.state}:${h.lastCall ?? ""}:${h.depth}`),
    });
  }
  streamDiscard(target: StreamTarget) {
    this.discarded.push(target);
  }
}

let store: Store;
let channel: RecordingChannel;
let events: GatewayEvents;
let progress: HelperProgress;
let n = 0;

beforeEach(() => {
  store = openSqliteStore({ path: ":memory:" });
  channel = new RecordingChannel();
  const channels = new ChannelDirectory();
  channels.add(channel as unknown as Channel);
  events = new GatewayEvents();
  progress = new HelperProgress({ store, channels, childPrefix: PREFIX, logger: silentLogger() });
  progress.attach(events);
});
afterEach(async () => {
  await store.close();
});

async function spawn(label: string, parent = PARENT, depth = 1, target: typeof CHAT | null = CHAT) {
  const outcome = await store.subagents.spawn(
    {
      id: `sa-${++n}`,
      parentSessionKey: parent,
      parentRunId: "run-p",
      childKeyPrefix: PREFIX,
      depth,
      label,
      task: "t",
      context: "",
      tools: [],
      model: null,
      origin: { target, privateChat: true, groupChat: false },
    },
    { maxActive: 20, maxPerRun: 20 },
    1,
  );
  if (outcome.status !== "spawned") throw new Error(outcome.status);
  return outcome.child;
}

const turn = (sessionKey: string, aborted = false): HookTurn => ({
  sessionKey,
  sessionId: "s",
  runId: "r",
  trigger: "subagent",
  signal: aborted ? AbortSignal.abort() : new AbortController().signal,
});

async function call(child: Subagent, name: string, args: Record<string, unknown>, aborted = false) {
  const verdict = await progress
    .hooks()
    .beforeToolCall?.(
      { id: "c", name, argumentsJson: JSON.stringify(args) },
      turn(child.childSessionKey, aborted),
    );
  expect(verdict).toBeUndefined(); // it never blocks a call
}

/** Emits a turn_committed and lets the handlers' reads settle. */
async function commit(sessionKey: string, over: Partial<RunRecord>) {
  events.emit({
    type: "turn_committed",
    sessionKey,
    inboxIds: [],
    state: over.outcome === "answered" ? "answered" : "failed",
    replies: [],
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    run: runRecord("run", { sessionKey, ...over }),
  });
  await new Promise((resolve) => setImmediate(resolve));
}

const last = () => channel.shown.at(-1)?.lines;

describe("HelperProgress", () => {
  it("a helper's tool call shows in its parent's chat (the wake's target: no message answered), one line per helper", async () => {
    const a = await spawn("vendors-1");
    const b = await spawn("vendors-2");
    await call(a, "web_fetch", { url: "https://example.com/pricing" });
    expect(channel.shown[0]?.target).toEqual({ ...CHAT, inboxIds: [] });
    await call(b, "read_file", { path: "notes.md" });
    await call(a, "exec", { command: "ls -la" });
    expect(last()).toEqual(["vendors-1:running:exec ls -la:1", "vendors-2:running:read_file notes.md:1"]);
    expect(progress.size).toBe(1);
  });

  it("a grandchild shows in its root parent's display; a session that is no helper, a helper without a chat, or a stopping run show nothing", async () => {
    const a = await spawn("a");
    await call(a, "read_file", { path: "x" });
    const g = await spawn("g", a.childSessionKey, 2);
    expect(progress.rootOf(g.childSessionKey)).toBe(PARENT);
    await call(g, "read_file", { path: "y" });
    expect(last()).toEqual(["a:running:read_file x:1", "g:running:read_file y:2"]);
    const before = channel.shown.length;
    await progress
      .hooks()
      .beforeToolCall?.({ id: "c", name: "read_file", argumentsJson: "{}" }, turn(PARENT));
    await progress
      .hooks()
      .beforeToolCall?.({ id: "c", name: "read_file", argumentsJson: "{}" }, turn(`${PREFIX}x:1`));
    const quiet = await spawn("bg", "agent:main:heartbeat", 1, null);
    await call(quiet, "read_file", { path: "z" });
    await call(a, "read_file", { path: "late" }, true);
    expect(channel.shown.length).toBe(before);
  });

  it("ends update the line (done, failed, stopped); a yield is no end; an end never creates a display", async () => {
    const a = await spawn("a");
    const b = await spawn("b");
    const c = await spawn("c");
    await call(a, "read_file", { path: "x" });
    await call(b, "read_file", { path: "y" });
    await call(c, "read_file", { path: "z" });
    await commit(a.childSessionKey, { outcome: "yielded" });
    expect(last()?.[0]).toBe("a:running:read_file x:1");
    await commit(a.childSessionKey, { outcome: "answered" });
    await commit(b.childSessionKey, { outcome: "failed" });
    await commit(c.childSessionKey, { outcome: "aborted" });
    expect(last()).toEqual(["a:done:read_file x:1", "b:failed:read_file y:1", "c:stopped:read_file z:1"]);
    const other = await spawn("o", "agent:main:telegram:dm:7");
    const before = channel.shown.length;
    await commit(other.childSessionKey, { outcome: "answered" }); // no display for its parent: decided at once
    expect(channel.shown.length).toBe(before);
  });

  it("an answer of a helper whose row still runs (it waits for its own helpers) is no end; its last answer is", async () => {
    const a = await spawn("a");
    await call(a, "spawn_agent", { task: "count" });
    await store.subagents.start(a.id, "run-a1", 2);
    await commit(a.childSessionKey, { outcome: "answered" });
    expect(last()).toEqual(["a:running:spawn_agent count:1"]);
    await commitLeased(
      store,
      turnOf("run-a1", [], {
        sessionKey: a.childSessionKey,
        outbox: [],
        run: runRecord("run-a1", { sessionKey: a.childSessionKey }),
        subagent: { id: a.id, state: "done", result: "r" },
      }),
      3,
    );
    await commit(a.childSessionKey, { outcome: "answered" });
    expect(last()).toEqual(["a:done:spawn_agent count:1"]);
  });

  it("the parent's wake lets the ended helpers go: none running, the display is forgotten, and a later end shows nothing", async () => {
    const a = await spawn("a");
    const b = await spawn("b");
    await call(a, "read_file", { path: "x" });
    await call(b, "read_file", { path: "y" });
    await commit(a.childSessionKey, { outcome: "answered" });
    await commit(PARENT, { trigger: "user", outcome: "answered" }); // a person's turn is no wake
    await commit(PARENT, { trigger: "subagent", outcome: "answered" });
    expect(progress.size).toBe(1); // b still runs
    await call(b, "read_file", { path: "y2" });
    expect(last()).toEqual(["b:running:read_file y2:1"]);
    await commit(b.childSessionKey, { outcome: "answered" });
    await commit(PARENT, { trigger: "subagent", outcome: "answered" });
    expect(progress.size).toBe(0);
    const before = channel.shown.length;
    await commit(b.childSessionKey, { outcome: "answered" });
    expect(channel.shown.length).toBe(before);
    expect(channel.discarded).toEqual([]);
  });

  it("helpers all stopped (no wake will come) and /stop discard the display", async () => {
    const a = await spawn("a");
    await call(a, "read_file", { path: "x" });
    await commit(a.childSessionKey, { outcome: "aborted" });
    expect(channel.discarded).toEqual([{ ...CHAT, inboxIds: [] }]);
    expect(progress.size).toBe(0);
    const b = await spawn("b");
    await call(b, "read_file", { path: "y" });
    progress.stopped(PARENT);
    progress.stopped(PARENT); // nothing left: nothing more
    expect(channel.discarded).toHaveLength(2);
    await commit(b.childSessionKey, { outcome: "aborted" });
    expect(progress.size).toBe(0);
  });

  it("a helper whose turn ended without a commit gets its end from its row", async () => {
    const a = await spawn("a");
    const b = await spawn("b");
    await call(a, "read_file", { path: "x" });
    await call(b, "read_file", { path: "y" });
    await store.subagents.cancel(a.id, "stopped", 2, { silent: true });
    events.emit({ type: "turn_ended", sessionKey: a.childSessionKey });
    await until(() => last()?.[0] === "a:stopped:read_file x:1", "the end read from the row");
    expect(last()).toEqual(["a:stopped:read_file x:1", "b:running:read_file y:1"]);
  });
});

describe("callSummary", () => {
  it("names the tool and its main argument on one line, a URL without its scheme, cut to 60 characters", () => {
    expect(
      callSummary({ name: "web_fetch", argumentsJson: '{"url":"https://www.example.com/pricing"}' }),
    ).toBe("web_fetch example.com/pricing");
    expect(callSummary({ name: "exec", argumentsJson: '{"timeoutSec":5,"command":"ls\\n  -la"}' })).toBe(
      "exec ls -la",
    );
    expect(callSummary({ name: "x", argumentsJson: '{"n":1,"other":"first text"}' })).toBe("x first text");
    const long = callSummary({ name: "read_file", argumentsJson: JSON.stringify({ path: "a".repeat(100) }) });
    expect(long).toBe(`read_file ${"a".repeat(59)}…`);
    for (const bad of ["not json", "[1]", "{}", '{"path":"  "}'])
      expect(callSummary({ name: "t", argumentsJson: bad })).toBe("t");
  });
});
