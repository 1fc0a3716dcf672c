/**
 * OwnerMessages against a real SQLite store: only the person who started an assignment answers
 * its question in the owner chat (anyone there for one started without a sender); the answer
 * moves it to active with a wake queued; a second answer finds nothing waiting; the answering
 * message routed again (a crash before its verdict) gets the same reply.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OwnerMessages } from "../../src/capabilities/assignments/assignment-owner.js";
import type { ChatTarget } from "../../src/channels/types.js";
import { ChannelDirectory } from "../../src/gateway/channel-directory.js";
import {
  assignmentDefaults,
  newAssignment,
  startAssignment,
} from "../../src/harness/assignments/assignments.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { ManualClock } from "../../src/util/clock.js";

const root = mkdtempSync(join(tmpdir(), "switchyard-owner-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const GROUP: ChatTarget = { channel: "telegram", accountId: "default", chatId: "-100" };
const defaults = assignmentDefaults("main", {
  maxTurnsPerRun: 5,
  maxRunMinutes: 5,
  maxRuns: 5,
  commandChecks: false,
});

async function waitingAssignment(requestedBy: string | null) {
  const store = openSqliteStore({ path: join(root, `${Math.random()}`, "switchyard.db") });
  const clock = new ManualClock(1_700_000_000_000);
  const a = newAssignment(
    { goal: "Plan the offsite", owner: GROUP, requestedBy, privateChat: false },
    defaults,
    clock.now(),
  );
  await startAssignment(store, a, clock.now());
  for (const w of await store.wakes.list(a.sessionKey)) await store.wakes.cancel(w.id, a.sessionKey);
  const question = {
    tool: "request_approval",
    toolCallId: "c1",
    sessionId: "s1",
    text: "Book the venue?",
    askedAt: clock.now(),
    remindAt: clock.now() + 1,
    expiresAt: clock.now() + 2,
    reminded: false,
  };
  await store.assignments.setState(a.id, "requires_action", "waiting", clock.now(), { work: { question } });
  const owner = new OwnerMessages({
    store,
    channels: new ChannelDirectory(),
    clock,
    reportEveryMinutes: 10,
    events: () => undefined,
    poke: () => {},
  });
  return { store, owner, a };
}

describe("the owner's answers", () => {
  it("only the starter answers in a group; the answer resumes the assignment", async () => {
    const { store, owner, a } = await waitingAssignment("ann");
    expect(await owner.waiting(GROUP, "mallory")).toBe(false);
    expect(await owner.answer(GROUP, "mallory", "yes, book it")).toBeUndefined();
    expect((await store.assignments.get(a.id))?.state).toBe("requires_action");
    expect(await owner.waiting(GROUP, "ann")).toBe(true);
    expect(await owner.answer(GROUP, "ann", "no, wait")).toBe(`↪️ Passed to task ${a.id}; it goes on now.`);
    expect(await store.assignments.get(a.id)).toMatchObject({
      state: "active",
      question: { answer: "no, wait" },
    });
    expect(await store.wakes.list(a.sessionKey)).toHaveLength(1);
    expect(await owner.answer(GROUP, "ann", "again")).toBeUndefined();
    await store.close();
  });

  it("a message routed again after a crash, once it answered, gets the same reply and is not taken twice", async () => {
    const { store, owner, a } = await waitingAssignment("ann");
    const reply = await owner.answer(GROUP, "ann", "yes", 7);
    expect(reply).toBe(`↪️ Passed to task ${a.id}; it goes on now.`);
    expect(await owner.answer(GROUP, "ann", "yes", 7)).toBe(reply);
    expect(await owner.answer(GROUP, "ann", "another message", 8)).toBeUndefined();
    expect(await store.wakes.list(a.sessionKey)).toHaveLength(1);
    await store.close();
  });

  it("one started without a sender (the CLI) takes anyone's answer in its chat", async () => {
    const { store, owner } = await waitingAssignment(null);
    expect(await owner.waiting(GROUP, "bob")).toBe(true);
    await store.close();
  });
});
