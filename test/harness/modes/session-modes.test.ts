import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { approvePlanOnAnswer, startInPlanMode } from "../../../src/harness/modes/session-modes.js";
import { openSqliteStore } from "../../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../../src/store/types.js";

const KEY = "agent:main:task:t1";
let store: Store;
beforeEach(() => {
  store = openSqliteStore({ path: ":memory:" });
});
afterEach(async () => {
  await store.close();
});

const approval = (answer: string, over: { tool?: string; expired?: boolean } = {}) => ({
  tool: "request_approval",
  answer,
  ...over,
});

describe("mode changes outside the chat commands", () => {
  it("starts an assignment's session in plan mode before it exists, and its fresh runs keep it", async () => {
    await startInPlanMode(store.sessions, KEY, 1);
    expect((await store.sessions.get(KEY))?.mode).toBe("plan");
    await store.sessions.reset(KEY, "ses-run-1", 2);
    expect((await store.sessions.get(KEY))?.mode).toBe("plan");
  });

  it("switches to execute on a yes to request_approval asked in plan mode", async () => {
    await startInPlanMode(store.sessions, KEY, 1);
    expect(await approvePlanOnAnswer(store.sessions, KEY, approval("Yes, go ahead"), 2)).toBe(true);
    expect(await store.sessions.get(KEY)).toMatchObject({ mode: "execute", updatedAt: 2 });
  });

  it("keeps plan mode on a no, a change asked for, an expired question or another tool", async () => {
    await startInPlanMode(store.sessions, KEY, 1);
    for (const q of [
      approval("no"),
      approval("change step 2 first"),
      approval("not yet"),
      approval("(No answer from the owner within 48 h.)", { expired: true }),
      approval("yes", { expired: true }),
      approval("yes", { tool: "ask_owner" }),
      { tool: "request_approval" },
    ])
      expect(await approvePlanOnAnswer(store.sessions, KEY, q, 2), JSON.stringify(q)).toBe(false);
    expect((await store.sessions.get(KEY))?.mode).toBe("plan");
  });

  it("does nothing outside plan mode", async () => {
    expect(await approvePlanOnAnswer(store.sessions, KEY, approval("yes"), 2)).toBe(false);
    await store.sessions.ensure(KEY, "ses-1", null, 1);
    expect(await approvePlanOnAnswer(store.sessions, KEY, approval("yes"), 2)).toBe(false);
    expect((await store.sessions.get(KEY))?.mode).toBe("normal");
  });
});
