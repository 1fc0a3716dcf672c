/** The agent's wake tools against the real store: validation, the per-session limits, list and cancel. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { wakeTools } from "../../src/capabilities/cron/wake-tools.js";
import { ToolError } from "../../src/harness/tools/tool-error.js";
import type { Tool, ToolContext } from "../../src/harness/tools/types.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { ManualClock } from "../../src/util/clock.js";

let store: Store;
let clock: ManualClock;
let tools: Map<string, Tool>;
const ctx: ToolContext = {
  workspaceDir: "/tmp",
  sessionKey: "agent:main:telegram:dm:42",
  runId: "run_1",
  signal: new AbortController().signal,
  replyTarget: { channel: "telegram", accountId: "default", chatId: "42" },
};

beforeEach(() => {
  store = openSqliteStore({ path: ":memory:" });
  clock = new ManualClock(Date.parse("2026-11-24T10:00:00Z"));
  tools = new Map(wakeTools({ store, clock, defaultTz: () => "UTC" }).map((t) => [t.name, t]));
});
afterEach(() => store.close());

const call = (name: string, args: unknown) => (tools.get(name) as Tool).run(args as never, ctx);
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return (err as ToolError).message;
};

describe("wake tools", () => {
  it("sets a wake for this conversation and its chat, lists it, and cancels it", async () => {
    expect((await call("schedule_wake", { when: "in 30m", why: "check the build" })).content).toBe(
      "wake #1 set for 2026-11-24T10:30:00.000Z: check the build",
    );
    expect(await store.wakes.list(ctx.sessionKey)).toMatchObject([
      { target: ctx.replyTarget, reason: "check the build" },
    ]);
    expect((await call("list_wakes", {})).content).toBe("#1 at 2026-11-24T10:30:00.000Z: check the build");
    expect((await call("cancel_wake", { id: 1 })).content).toBe("wake #1 cancelled");
    expect(await failure(call("cancel_wake", { id: 1 }))).toMatch(/no waiting wake #1/);
  });

  it("refuses a time in the past or unreadable, one within a minute of another, and a 21st", async () => {
    expect(await failure(call("schedule_wake", { when: "2020-01-01T00:00", why: "x" }))).toBe(
      'when: "2020-01-01T00:00" is in the past',
    );
    expect(await failure(call("schedule_wake", { when: "later", why: "x" }))).toMatch(
      /^when: cannot read "later"/,
    );
    await call("schedule_wake", { when: "in 10m", why: "a" });
    expect(await failure(call("schedule_wake", { when: "in 10m", why: "b" }))).toMatch(
      /^when: wake #1 is already set for .*less than a minute apart$/,
    );
    for (let i = 2; i <= 20; i++) await call("schedule_wake", { when: `in ${10 + i * 2}m`, why: `w${i}` });
    expect(await failure(call("schedule_wake", { when: "in 5h", why: "one too many" }))).toMatch(
      /already has 20 wakes waiting/,
    );
  });
});
