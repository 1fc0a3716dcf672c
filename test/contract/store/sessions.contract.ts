/**
 * Store contract, sessions and transcript: session ids, `/new`, the summaries `switchyard
 * sessions` lists, and the transcript tail.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { TranscriptPayload } from "../../../src/store/repos/transcript-repo.js";
import type { Store } from "../../../src/store/types.js";
import {
  appendLeased,
  chat,
  claimLeased,
  commitLeased,
  enqueue,
  type StoreContext,
  T0,
  type TurnDraft,
  turn,
} from "./fixtures.js";
/** Session cases: ensure, reset, latest target and list. */
export function sessionsContract(ctx: StoreContext): void {
  describe("sessions", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("ensure creates once and keeps the session id", async () => {
      expect(await store.sessions.get("k")).toBeUndefined();
      const created = await store.sessions.ensure("k", "ses-1", chat("c1"), T0);
      expect(created).toEqual({
        sessionKey: "k",
        sessionId: "ses-1",
        lastTarget: chat("c1"),
        model: null,
        mode: "normal",
        createdAt: T0,
        updatedAt: T0,
      });
      const again = await store.sessions.ensure("k", "ses-2", null, T0 + 1);
      expect(again).toEqual(created);
      const moved = await store.sessions.ensure("k", "ses-3", chat("c2", "t"), T0 + 2);
      expect(moved).toMatchObject({ sessionId: "ses-1", lastTarget: chat("c2", "t"), createdAt: T0 });
      expect(await store.sessions.get("k")).toEqual(moved);
      expect(await store.sessions.count()).toBe(1);
    });

    it("reset starts a fresh session id under the same key", async () => {
      await store.sessions.ensure("k", "ses-1", chat("c1"), T0);
      const reset = await store.sessions.reset("k", "ses-2", T0 + 5);
      expect(reset).toMatchObject({
        sessionKey: "k",
        sessionId: "ses-2",
        lastTarget: chat("c1"),
        createdAt: T0,
      });
      expect((await store.sessions.get("k"))?.sessionId).toBe("ses-2");
      const fresh = await store.sessions.reset("other", "ses-9", T0 + 6);
      expect(fresh).toMatchObject({ sessionKey: "other", sessionId: "ses-9", lastTarget: null });
      expect(await store.sessions.count()).toBe(2);
    });

    it("setModel sets and clears a session's model; ensure and reset keep it; it creates no session", async () => {
      expect(await store.sessions.setModel("k", "anthropic/claude-x", T0)).toBe(false);
      expect(await store.sessions.get("k")).toBeUndefined();
      await store.sessions.ensure("k", "ses-1", chat("c1"), T0);
      expect(await store.sessions.setModel("k", "openai/gpt-x", T0 + 1)).toBe(true);
      expect(await store.sessions.get("k")).toMatchObject({ model: "openai/gpt-x", updatedAt: T0 + 1 });
      await store.sessions.ensure("k", "ses-2", chat("c2"), T0 + 2);
      expect((await store.sessions.reset("k", "ses-3", T0 + 3)).model).toBe("openai/gpt-x");
      expect(await store.sessions.setModel("k", null, T0 + 4)).toBe(true);
      expect(await store.sessions.get("k")).toMatchObject({
        sessionId: "ses-3",
        model: null,
        updatedAt: T0 + 4,
      });
      expect(await store.sessions.count()).toBe(1);
    });

    it("setMode sets a session's mode; new sessions are normal; ensure, reset and setModel keep it; it creates no session", async () => {
      expect(await store.sessions.setMode("k", "plan", T0)).toBe(false);
      expect(await store.sessions.get("k")).toBeUndefined();
      expect((await store.sessions.ensure("k", "ses-1", chat("c1"), T0)).mode).toBe("normal");
      expect((await store.sessions.reset("fresh", "ses-f", T0)).mode).toBe("normal");
      expect(await store.sessions.setMode("k", "plan", T0 + 1)).toBe(true);
      expect(await store.sessions.get("k")).toMatchObject({ mode: "plan", updatedAt: T0 + 1 });
      expect((await store.sessions.ensure("k", "ses-2", chat("c2"), T0 + 2)).mode).toBe("plan");
      // `/new` (and each fresh assignment run) keeps the mode: it is the session's, not the transcript's.
      expect((await store.sessions.reset("k", "ses-3", T0 + 3)).mode).toBe("plan");
      await store.sessions.setModel("k", "openai/gpt-x", T0 + 4);
      expect(await store.sessions.setMode("k", "execute", T0 + 5)).toBe(true);
      expect(await store.sessions.get("k")).toMatchObject({
        sessionId: "ses-3",
        model: "openai/gpt-x",
        mode: "execute",
        updatedAt: T0 + 5,
      });
      expect(await store.sessions.setMode("k", "normal", T0 + 6)).toBe(true);
      expect((await store.sessions.get("k"))?.mode).toBe("normal");
      expect((await store.sessions.get("fresh"))?.mode).toBe("normal");
      expect(await store.sessions.count()).toBe(2);
    });

    it("list summarises each key: channel, last activity, messages, running; most recent first", async () => {
      expect(await store.sessions.list(10)).toEqual([]);
      // A DM with a direct chat: messages count user and assistant events of the current id only.
      const dm = "agent:main:telegram:dm:42";
      await store.sessions.ensure(dm, "ses-old", chat("c1"), T0);
      await appendLeased(store, dm, "ses-old", null, [{ type: "notice", text: "old" }], T0 + 1);
      await store.sessions.reset(dm, "ses-1", T0 + 2);
      await appendLeased(
        store,
        dm,
        "ses-1",
        "run-1",
        [
          { type: "user", inboxId: 9_001, text: "hi", senderName: "Ada" },
          { type: "assistant", text: "", toolCalls: [{ id: "c1", name: "exec", argumentsJson: "{}" }] },
          { type: "tool_result", toolCallId: "c1", name: "exec", content: "ok", isError: false },
          { type: "assistant", text: "done", toolCalls: [] },
          { type: "notice", text: "n" },
        ],
        T0 + 30,
      );
      // The heartbeat key: no target, channel from the key.
      const heartbeat = "agent:main:heartbeat";
      await store.sessions.ensure(heartbeat, "ses-h", null, T0);
      await appendLeased(
        store,
        heartbeat,
        "ses-h",
        "run-h",
        [
          { type: "trigger", origin: "heartbeat", text: "check" },
          { type: "assistant", text: "HEARTBEAT_OK", toolCalls: [] },
        ],
        T0 + 10,
      );
      // A key with a turn in progress: its inbox row is newer than its events.
      const main = "agent:main:main";
      await store.sessions.ensure(main, "ses-m", null, T0);
      await enqueue(store, main, T0 + 40);
      await claimLeased(store, main, "ses-m", "run-m", { all: false }, T0 + 50);
      // A session with nothing in it yet: its own update time.
      const quiet = "agent:ops:slack:default:group:C1";
      await store.sessions.ensure(quiet, "ses-q", null, T0 + 5);

      const all = await store.sessions.list(10);
      expect(all.map((s) => s.sessionKey)).toEqual([main, dm, heartbeat, quiet]);
      expect(all[0]).toEqual({
        sessionKey: main,
        sessionId: "ses-m",
        channel: "main",
        lastTarget: null,
        lastActivityAt: T0 + 50,
        messages: 1,
        running: true,
      });
      expect(all[1]).toEqual({
        sessionKey: dm,
        sessionId: "ses-1",
        channel: "telegram",
        lastTarget: chat("c1"),
        lastActivityAt: T0 + 30,
        messages: 3,
        running: false,
      });
      expect(all[2]).toMatchObject({ channel: "heartbeat", lastActivityAt: T0 + 10, messages: 1 });
      expect(all[3]).toMatchObject({
        channel: "slack",
        lastActivityAt: T0 + 5,
        messages: 0,
        running: false,
      });

      expect((await store.sessions.list(2)).map((s) => s.sessionKey)).toEqual([main, dm]);
      expect(await store.sessions.list(0)).toEqual([]);
    });

    it("list follows the turn: running until committed, activity from the inbox and the transcript", async () => {
      const key = "agent:main:telegram:dm:7";
      await store.sessions.ensure(key, "ses-1", null, T0);
      await store.sessions.ensure("agent:main:telegram:dm:8", "ses-2", null, T0 + 20);
      const record = await enqueue(store, key, T0 + 10);
      let [summary] = await store.sessions.list(1);
      expect(summary).toMatchObject({ sessionKey: "agent:main:telegram:dm:8", running: false });
      await claimLeased(store, key, "ses-1", "run-1", { all: false }, T0 + 30);
      [summary] = await store.sessions.list(1);
      expect(summary).toMatchObject({
        sessionKey: key,
        running: true,
        messages: 1,
        lastActivityAt: T0 + 30,
      });
      const committed = await commitLeased(
        store,
        turn("run-1", [record.id], { sessionKey: key, lastTarget: chat("c7") }),
        T0 + 40,
      );
      expect(committed).toBe(true);
      [summary] = await store.sessions.list(1);
      expect(summary).toMatchObject({
        sessionKey: key,
        channel: "telegram",
        lastTarget: chat("c7"),
        running: false,
        messages: 2,
        lastActivityAt: T0 + 40,
      });
      // Ties are broken by key.
      await store.sessions.ensure("a", "ses-a", null, T0 + 40);
      expect((await store.sessions.list(2)).map((s) => s.sessionKey)).toEqual(["a", key]);
      expect((await store.sessions.list(2))[0]?.channel).toBe("a");
    });
  });
}

/** Transcript cases: append and tail, including after appends of every kind. */
export function transcriptContract(ctx: StoreContext): void {
  describe("transcript", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("tail returns the last events of one session id, oldest first", async () => {
      const payloads: TranscriptPayload[] = [
        { type: "notice", text: "n0" },
        { type: "assistant", text: "a1", toolCalls: [{ id: "c1", name: "exec", argumentsJson: "{}" }] },
        {
          type: "tool_result",
          toolCallId: "c1",
          name: "exec",
          content: "x",
          isError: true,
          synthetic: true,
        },
        { type: "assistant", text: "a3", toolCalls: [] },
      ];
      await appendLeased(store, "k", "ses-1", "run-1", payloads.slice(0, 2), T0);
      await appendLeased(store, "k", "ses-2", null, [{ type: "notice", text: "other session" }], T0);
      await appendLeased(store, "other", "ses-1", null, [{ type: "notice", text: "other key" }], T0);
      await appendLeased(store, "k", "ses-1", null, payloads.slice(2), T0 + 1);

      const all = await store.transcript.tail("k", "ses-1", 100);
      expect(all.map((e) => e.payload)).toEqual(payloads);
      expect(all.map((e) => e.runId)).toEqual(["run-1", "run-1", null, null]);
      expect(all.every((e, i) => i === 0 || e.id > all[i - 1]!.id)).toBe(true);
      expect(all[3]).toMatchObject({ sessionKey: "k", sessionId: "ses-1", createdAt: T0 + 1 });
      expect((await store.transcript.tail("k", "ses-1", 2)).map((e) => e.payload)).toEqual(payloads.slice(2));
      expect(await store.transcript.tail("k", "ses-1", 0)).toEqual([]);
      expect(await store.transcript.tail("k", "ses-3", 10)).toEqual([]);
    });

    it("tail read again after appends of every kind sees exactly the committed events", async () => {
      const texts = async (limit: number) =>
        (await store.transcript.tail("k", "ses-1", limit)).map((e) => (e.payload as { text?: string }).text);
      expect(await texts(3)).toEqual([]);
      await appendLeased(store, "k", "ses-1", null, [{ type: "notice", text: "a" }], T0);
      expect(await texts(3)).toEqual(["a"]);
      await appendLeased(store, "k", "ses-1", null, [{ type: "notice", text: "b" }], T0);
      await appendLeased(store, "k", "ses-1", null, [{ type: "notice", text: "c" }], T0);
      await appendLeased(store, "k", "ses-1", null, [{ type: "notice", text: "d" }], T0);
      expect(await texts(3)).toEqual(["b", "c", "d"]);
      expect(await texts(2)).toEqual(["c", "d"]);
      expect(await texts(10)).toEqual(["a", "b", "c", "d"]);
      // Claim writes the user event; appending it again is skipped, not doubled.
      const record = await enqueue(store, "k");
      await claimLeased(store, "k", "ses-1", "run-t", { all: false }, T0);
      const user = { type: "user" as const, inboxId: record.id, text: "u", senderName: "Ada" };
      await appendLeased(store, "k", "ses-1", "run-t", [user], T0);
      const afterClaim = await store.transcript.tail("k", "ses-1", 10);
      expect(afterClaim.filter((e) => e.payload.type === "user")).toHaveLength(1);
      // A refused commitTurn leaves nothing behind.
      const ghost: TurnDraft = {
        ...turn("run-other", [record.id], { events: [{ type: "notice", text: "ghost" }] }),
        sessionKey: "k",
      };
      expect(await commitLeased(store, ghost, T0)).toBe(false);
      expect(await texts(10)).not.toContain("ghost");
      const real: TurnDraft = {
        ...turn("run-t", [record.id], { events: [{ type: "notice", text: "e" }] }),
        sessionKey: "k",
      };
      expect(await commitLeased(store, real, T0)).toBe(true);
      expect((await texts(2)).at(-1)).toBe("e");
    });
  });
}
