/**
 * Store contract, assignments: an assignment read back as written, listing (newest first, open
 * ones only when asked), the chat an assignment waits on and the message that answered it, work
 * saved apart from the state, conditional state moves, the run log, a run's end with its state,
 * work and next wake in one step; and the learnings agents report, once per source.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { ChatTarget } from "../../../src/channels/types.js";
import { NEW_CHECKPOINT } from "../../../src/harness/assignments/assignments.js";
import type {
  Assignment,
  AssignmentState,
  Checkpoint,
  PendingQuestion,
  RunFinish,
  WorkItem,
} from "../../../src/store/repos/assignment-repo.js";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, T0 } from "./fixtures.js";
import { learningsContract } from "./learnings.contract.js";

const ANN: ChatTarget = { channel: "telegram", accountId: "default", chatId: "42" };

function assignment(id: string, over: Partial<Assignment> = {}): Assignment {
  return {
    id,
    agentId: "main",
    goal: `Goal of ${id}`,
    owner: ANN,
    requestedBy: null,
    privateChat: true,
    sessionKey: `agent:${over.agentId ?? "main"}:task:${id}`,
    state: "active",
    stateReason: null,
    limits: { maxTurnsPerRun: 10, maxRunMinutes: 30, maxRuns: 20, maxTokens: 100_000, maxCostUsd: null },
    contract: [{ kind: "file_contains", path: "out/report.md", pattern: "^## Summary" }],
    items: [],
    checkpoint: { ...NEW_CHECKPOINT, unreported: [] },
    question: null,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}

function question(over: Partial<PendingQuestion> = {}): PendingQuestion {
  return {
    tool: "ask_owner",
    toolCallId: "call_1",
    sessionId: "ses_1",
    text: "Which format?",
    options: ["PDF", "Markdown"],
    askedAt: T0,
    remindAt: T0 + 3_600_000,
    expiresAt: T0 + 7_200_000,
    reminded: false,
    ...over,
  };
}

/** A run's end moving an active assignment to sleeping, without a next wake. */
function end(id: string, runNo: number): RunFinish {
  return {
    assignmentId: id,
    runNo,
    log: {
      endedAt: T0 + 1_500,
      directive: "sleep",
      reason: "the agent sleeps",
      turns: 1,
      tokens: 10,
      costUsd: 0,
    },
    state: "sleeping",
    reason: "the agent sleeps",
    from: ["active"],
    work: { items: [], checkpoint: { ...NEW_CHECKPOINT }, question: null },
  };
}

/** Assignment cases: every AssignmentRepo method, and the learnings (LearningRepo) as a nested part. */
export function assignmentsContract(ctx: StoreContext): void {
  describe("assignments", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("creates and reads back an assignment as given, by id and by session", async () => {
      const a = assignment("t0000001", {
        owner: { ...ANN, threadId: "7" },
        items: [{ id: 1, title: "Outline", status: "open", notes: "", updatedAt: T0 }],
        question: question(),
      });
      await store.assignments.create(a);
      expect(await store.assignments.get("t0000001")).toEqual(a);
      expect(await store.assignments.bySession("agent:main:task:t0000001")).toEqual(a);
      expect(await store.assignments.get("t0000002")).toBeUndefined();
      expect(await store.assignments.bySession("agent:main:task:t0000002")).toBeUndefined();
      const none = assignment("t0000003", { owner: null });
      await store.assignments.create(none);
      expect(await store.assignments.get("t0000003")).toEqual(none);
    });

    it("refuses a second assignment with the same id or session", async () => {
      await store.assignments.create(assignment("t0000001"));
      await expect(store.assignments.create(assignment("t0000001"))).rejects.toThrow();
      await expect(
        store.assignments.create(assignment("t0000002", { sessionKey: "agent:main:task:t0000001" })),
      ).rejects.toThrow();
    });

    it("lists the agent's assignments newest first; open ones only when asked; a limit", async () => {
      await store.assignments.create(assignment("t0000001", { createdAt: T0 }));
      await store.assignments.create(assignment("t0000002", { createdAt: T0 + 2, state: "done" }));
      await store.assignments.create(assignment("t0000003", { createdAt: T0 + 1, state: "sleeping" }));
      await store.assignments.create(assignment("t0000004", { createdAt: T0 + 3, state: "requires_action" }));
      await store.assignments.create(assignment("t0000005", { createdAt: T0 + 4, state: "cancelled" }));
      await store.assignments.create(assignment("t0000006", { createdAt: T0 + 5, agentId: "ops" }));
      const ids = (as: Assignment[]) => as.map((a) => a.id);
      expect(ids(await store.assignments.list("main"))).toEqual([
        "t0000005",
        "t0000004",
        "t0000002",
        "t0000003",
        "t0000001",
      ]);
      expect(ids(await store.assignments.list("main", { open: true }))).toEqual([
        "t0000004",
        "t0000003",
        "t0000001",
      ]);
      expect(ids(await store.assignments.list("main", { limit: 2 }))).toEqual(["t0000005", "t0000004"]);
      expect(ids(await store.assignments.list("ops"))).toEqual(["t0000006"]);
      expect(await store.assignments.list("nobody")).toEqual([]);
    });

    it("lists assignments made in the same millisecond in the order they were made, the last first", async () => {
      // Not by id: ids are random.
      await store.assignments.create(assignment("tbbbbbbb"));
      await store.assignments.create(assignment("taaaaaaa"));
      await store.assignments.create(assignment("tccccccc"));
      expect((await store.assignments.list("main")).map((a) => a.id)).toEqual([
        "tccccccc",
        "taaaaaaa",
        "tbbbbbbb",
      ]);
    });

    it("saveWork writes only the parts given, and the time", async () => {
      const a = assignment("t0000001", { question: question() });
      await store.assignments.create(a);
      const items: WorkItem[] = [{ id: 1, title: "Outline", status: "done", notes: "x", updatedAt: T0 + 5 }];
      await store.assignments.saveWork("t0000001", { items }, T0 + 10);
      expect(await store.assignments.get("t0000001")).toEqual({ ...a, items, updatedAt: T0 + 10 });
      const checkpoint: Checkpoint = { ...NEW_CHECKPOINT, runs: 2, tokens: 500, unreported: ["Outline"] };
      await store.assignments.saveWork("t0000001", { checkpoint, question: null }, T0 + 20);
      expect(await store.assignments.get("t0000001")).toEqual({
        ...a,
        items,
        checkpoint,
        question: null,
        updatedAt: T0 + 20,
      });
      // Nothing given: nothing written, not even the time.
      await store.assignments.saveWork("t0000001", {}, T0 + 30);
      expect((await store.assignments.get("t0000001"))?.updatedAt).toBe(T0 + 20);
      // The state is never saveWork's.
      expect((await store.assignments.get("t0000001"))?.state).toBe("active");
    });

    describe("setState", () => {
      it("moves from any state without `from`, with the reason and time", async () => {
        await store.assignments.create(assignment("t0000001", { state: "done" }));
        expect(await store.assignments.setState("t0000001", "active", "reopened", T0 + 1)).toBe(true);
        expect(await store.assignments.get("t0000001")).toMatchObject({
          state: "active",
          stateReason: "reopened",
          updatedAt: T0 + 1,
        });
        expect(await store.assignments.setState("t0000009", "active", null, T0 + 1)).toBe(false);
      });

      it("moves only from one of `from`, and is refused (changing nothing) when it is elsewhere", async () => {
        const a = assignment("t0000001", { state: "cancelled", stateReason: "cancelled by the owner" });
        await store.assignments.create(a);
        const items: WorkItem[] = [{ id: 1, title: "Outline", status: "done", notes: "", updatedAt: T0 }];
        const open: AssignmentState[] = ["active", "sleeping", "requires_action"];
        expect(
          await store.assignments.setState("t0000001", "sleeping", "the agent sleeps", T0 + 1, {
            from: open,
            work: { items },
          }),
        ).toBe(false);
        expect(await store.assignments.get("t0000001")).toEqual(a);
      });

      it("writes the work given in the same step", async () => {
        await store.assignments.create(
          assignment("t0000001", { state: "requires_action", question: question() }),
        );
        const answered = question({ answer: "PDF" });
        const checkpoint: Checkpoint = { ...NEW_CHECKPOINT, runs: 3, unreported: [] };
        expect(
          await store.assignments.setState("t0000001", "active", "the owner answered", T0 + 5, {
            from: ["requires_action"],
            work: { question: answered, checkpoint },
          }),
        ).toBe(true);
        expect(await store.assignments.get("t0000001")).toMatchObject({
          state: "active",
          stateReason: "the owner answered",
          question: answered,
          checkpoint,
          items: [],
          updatedAt: T0 + 5,
        });
        // A second answer finds it no longer waiting.
        expect(
          await store.assignments.setState("t0000001", "active", "again", T0 + 6, {
            from: ["requires_action"],
          }),
        ).toBe(false);
      });
    });

    describe("waitingOn", () => {
      it("finds assignments requiring action whose owner is exactly this chat", async () => {
        await store.assignments.create(
          assignment("t0000001", { state: "requires_action", updatedAt: T0 + 2 }),
        );
        await store.assignments.create(
          assignment("t0000002", { state: "requires_action", updatedAt: T0 + 1 }),
        );
        await store.assignments.create(assignment("t0000003", { state: "active" }));
        await store.assignments.create(
          assignment("t0000004", { state: "requires_action", owner: { ...ANN, accountId: "other" } }),
        );
        await store.assignments.create(
          assignment("t0000005", { state: "requires_action", owner: { ...ANN, channel: "slack" } }),
        );
        await store.assignments.create(
          assignment("t0000006", { state: "requires_action", owner: { ...ANN, chatId: "43" } }),
        );
        await store.assignments.create(assignment("t0000007", { state: "requires_action", owner: null }));
        expect((await store.assignments.waitingOn(ANN)).map((a) => a.id)).toEqual(["t0000002", "t0000001"]);
        expect(await store.assignments.waitingOn({ ...ANN, chatId: "44" })).toEqual([]);
      });

      it("tells apart two chats that differ only by thread", async () => {
        await store.assignments.create(assignment("t0000001", { state: "requires_action", owner: ANN }));
        await store.assignments.create(
          assignment("t0000002", { state: "requires_action", owner: { ...ANN, threadId: "7" } }),
        );
        await store.assignments.create(
          assignment("t0000003", { state: "requires_action", owner: { ...ANN, threadId: "8" } }),
        );
        expect((await store.assignments.waitingOn(ANN)).map((a) => a.id)).toEqual(["t0000001"]);
        expect((await store.assignments.waitingOn({ ...ANN, threadId: "7" })).map((a) => a.id)).toEqual([
          "t0000002",
        ]);
        expect((await store.assignments.waitingOn({ ...ANN, threadId: "8" })).map((a) => a.id)).toEqual([
          "t0000003",
        ]);
        expect(await store.assignments.waitingOn({ ...ANN, threadId: "9" })).toEqual([]);
      });

      it("answeredBy finds the assignment whose question the inbox row answered", async () => {
        await store.assignments.create(assignment("t0000001", { question: question({ answeredBy: 7 }) }));
        await store.assignments.create(assignment("t0000002", { question: question({ answeredBy: 70 }) }));
        await store.assignments.create(assignment("t0000003", { question: question() }));
        await store.assignments.create(assignment("t0000004"));
        expect((await store.assignments.answeredBy(7))?.id).toBe("t0000001");
        expect((await store.assignments.answeredBy(70))?.id).toBe("t0000002");
        expect(await store.assignments.answeredBy(8)).toBeUndefined();
      });
    });

    describe("the run log", () => {
      it("starts and ends runs; runs lists the last ones newest first", async () => {
        await store.assignments.create(assignment("t0000001"));
        await store.assignments.create(assignment("t0000002"));
        for (const runNo of [1, 2, 3])
          await store.assignments.startRun({
            assignmentId: "t0000001",
            runNo,
            runId: `run_${runNo}`,
            startedAt: T0 + runNo * 1_000,
            turns: 0,
            tokens: 0,
            costUsd: 0,
          });
        await store.assignments.startRun({
          assignmentId: "t0000002",
          runNo: 1,
          runId: "run_x",
          startedAt: T0,
          turns: 0,
          tokens: 0,
          costUsd: 0,
        });
        const log = {
          endedAt: T0 + 1_500,
          directive: "sleep" as const,
          reason: "the agent sleeps 30 min",
          turns: 4,
          tokens: 1_200,
          costUsd: 0.01,
        };
        await store.assignments.finishRun({ ...end("t0000001", 1), log }, T0 + 1_500);
        const runs = await store.assignments.runs("t0000001", 10);
        expect(runs.map((r) => r.runNo)).toEqual([3, 2, 1]);
        expect(runs[2]).toEqual({
          assignmentId: "t0000001",
          runNo: 1,
          runId: "run_1",
          startedAt: T0 + 1_000,
          ...log,
        });
        expect(runs[0]).toMatchObject({
          runId: "run_3",
          endedAt: null,
          directive: null,
          reason: null,
          turns: 0,
        });
        expect((await store.assignments.runs("t0000001", 2)).map((r) => r.runNo)).toEqual([3, 2]);
        expect((await store.assignments.runs("t0000002", 10)).map((r) => r.runId)).toEqual(["run_x"]);
        expect(await store.assignments.runs("t0000009", 10)).toEqual([]);
      });

      it("finishRun writes the log, the state, the work and the next wake in one step", async () => {
        const a = assignment("t0000001");
        await store.assignments.create(a);
        await store.wakes.add(
          { sessionKey: a.sessionKey, dueAt: T0 + 60_000, reason: "retry", target: ANN },
          { maxPending: 5, minGapMs: 0 },
          T0,
        );
        const start = { assignmentId: "t0000001", runNo: 1, runId: "run_1", turns: 0, tokens: 0, costUsd: 0 };
        await store.assignments.startRun({ ...start, startedAt: T0 });
        const item = { id: 1, title: "Survey pool 1", status: "done" as const, notes: "", updatedAt: T0 };
        const moved = await store.assignments.finishRun(
          {
            ...end("t0000001", 1),
            work: { items: [item], checkpoint: { ...NEW_CHECKPOINT, runs: 1 }, question: null },
            next: { sessionKey: a.sessionKey, dueAt: T0 + 2_000, reason: "the agent continues", target: ANN },
          },
          T0 + 1_000,
        );
        expect(moved).toBe(true);
        const after = await store.assignments.get("t0000001");
        expect(after).toMatchObject({ state: "sleeping", stateReason: "the agent sleeps", items: [item] });
        expect(after?.checkpoint.runs).toBe(1);
        // The retry gave way: one waiting wake, the directive's.
        expect(await store.wakes.list(a.sessionKey)).toMatchObject([
          { dueAt: T0 + 2_000, reason: "the agent continues", target: ANN },
        ]);
        expect((await store.assignments.runs("t0000001", 1))[0]).toMatchObject({ endedAt: T0 + 1_500 });
      });

      it("finishRun after a cancel keeps the work only: no state, no wake, false", async () => {
        const a = assignment("t0000001", { state: "cancelled", stateReason: "cancelled by the owner" });
        await store.assignments.create(a);
        const item = { id: 1, title: "Survey pool 1", status: "done" as const, notes: "", updatedAt: T0 };
        const moved = await store.assignments.finishRun(
          {
            ...end("t0000001", 1),
            work: { items: [item], checkpoint: { ...NEW_CHECKPOINT, runs: 1 }, question: question() },
            next: { sessionKey: a.sessionKey, dueAt: T0 + 2_000, reason: "the agent continues", target: ANN },
          },
          T0 + 1_000,
        );
        expect(moved).toBe(false);
        expect(await store.assignments.get("t0000001")).toMatchObject({
          state: "cancelled",
          stateReason: "cancelled by the owner",
          items: [item],
          question: null,
        });
        expect(await store.wakes.list(a.sessionKey)).toEqual([]);
      });

      it("a run started again under the same number takes the new run id and start", async () => {
        await store.assignments.create(assignment("t0000001"));
        const start = { assignmentId: "t0000001", runNo: 1, turns: 0, tokens: 0, costUsd: 0 };
        await store.assignments.startRun({ ...start, runId: "run_a", startedAt: T0 });
        await store.assignments.startRun({ ...start, runId: "run_b", startedAt: T0 + 5 });
        expect(await store.assignments.runs("t0000001", 10)).toMatchObject([
          { runNo: 1, runId: "run_b", startedAt: T0 + 5 },
        ]);
      });
    });

    learningsContract(ctx);
  });
}
