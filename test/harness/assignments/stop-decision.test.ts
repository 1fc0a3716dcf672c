/**
 * The stop decision at the end of an assignment's run (decide: each layer, first match wins)
 * and the hooks that make it inside the loop (yield at the bounds, continuation prompts,
 * completion refusals, a pause for a human tool).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { HookTurn, ToolOutcome, TurnHooks } from "../../../src/harness/hooks.js";
import {
  COMPLETION_REFUSALS,
  CONTINUATION_PROMPT,
  type LiveRun,
  LiveRuns,
  WAITING_FOR_OWNER,
  assignmentHooks,
} from "../../../src/harness/assignments/live-run.js";
import {
  FAILED_RUN_RETRY_MS,
  MAX_FAILED_RUNS,
  type RunFacts,
  decide,
  overBudget,
} from "../../../src/harness/assignments/stop-decision.js";
import type { Assignment, WorkItem, WorkItemStatus } from "../../../src/store/repos/assignment-repo.js";
import { ManualClock } from "../../../src/util/clock.js";
import { assignmentFixture } from "../../helpers/assignment-fixture.js";

const NOW = 1_700_000_000_000;
const MIN = 60_000;

const assignment = assignmentFixture;

function item(id: number, status: WorkItemStatus, title = `Part ${id}`): WorkItem {
  return { id, title, status, notes: "", updatedAt: NOW };
}

function liveRun(a: Assignment = assignment(), over: Partial<LiveRun> = {}): LiveRun {
  return {
    assignment: a,
    runNo: 1,
    runId: "run_1",
    sessionId: "ses_1",
    startedAt: NOW,
    nudgesInRow: 0,
    calls: new Set(),
    ...over,
  };
}

function facts(over: Partial<RunFacts> = {}): RunFacts {
  return {
    outcome: "answered",
    errorKind: null,
    error: null,
    fingerprint: "fp-1",
    gaps: [],
    stallThreshold: 3,
    now: NOW,
    ...over,
  };
}

describe("decide", () => {
  describe("a failed run", () => {
    it("stalls for a tool loop at once", () => {
      const live = liveRun();
      const d = decide(
        live,
        facts({ outcome: "failed", errorKind: "tool_loop", error: "same call 5 times" }),
      );
      expect(d).toEqual({
        directive: "done",
        state: "stalled",
        reason: "it was going round in circles: same call 5 times",
      });
      expect(live.assignment.checkpoint.failuresInRow).toBe(0);
    });

    it("sleeps with a doubling wait, and fails at the third failure in a row", () => {
      expect(MAX_FAILED_RUNS).toBe(3);
      const live = liveRun();
      const failed = (now: number) =>
        decide(live, facts({ outcome: "failed", errorKind: "provider", error: "503 overloaded", now }));
      expect(failed(NOW)).toEqual({
        directive: "sleep",
        state: "sleeping",
        at: NOW + FAILED_RUN_RETRY_MS,
        reason: "the run failed (provider: 503 overloaded); retrying in 5 min",
      });
      expect(failed(NOW + 1)).toEqual({
        directive: "sleep",
        state: "sleeping",
        at: NOW + 1 + 2 * FAILED_RUN_RETRY_MS,
        reason: "the run failed (provider: 503 overloaded); retrying in 10 min",
      });
      expect(failed(NOW + 2)).toEqual({
        directive: "done",
        state: "failed",
        reason: "3 runs in a row failed (provider: 503 overloaded)",
      });
    });

    it("names the outcome when there is no error kind", () => {
      const d = decide(liveRun(), facts({ outcome: "timeout" }));
      expect(d.reason).toBe("the run failed (timeout); retrying in 5 min");
    });

    it("starts counting again after a run that did not fail", () => {
      const live = liveRun();
      const fail = () => decide(live, facts({ outcome: "failed", errorKind: "provider" }));
      fail();
      fail();
      expect(live.assignment.checkpoint.failuresInRow).toBe(2);
      expect(decide(live, facts({ outcome: "answered", fingerprint: "a" })).directive).toBe("continue");
      expect(live.assignment.checkpoint.failuresInRow).toBe(0);
      expect(fail()).toMatchObject({ directive: "sleep", at: NOW + FAILED_RUN_RETRY_MS });
    });

    it("is not a failure when the run had asked to end (work_complete, a question)", () => {
      const live = liveRun();
      live.end = { kind: "complete", summary: "all done" };
      expect(decide(live, facts({ outcome: "failed", errorKind: "provider" }))).toMatchObject({
        directive: "done",
        state: "done",
      });
    });
  });

  it("fails an assignment over its token or spend budget", () => {
    const a = assignment({ limits: { ...assignment().limits, maxTokens: 1_000 } });
    a.checkpoint.tokens = 1_000;
    expect(decide(liveRun(a), facts())).toEqual({
      directive: "done",
      state: "failed",
      reason: "over its token budget (1000 of 1000 tokens used)",
    });
    const b = assignment({ limits: { ...assignment().limits, maxCostUsd: 0.5 } });
    b.checkpoint.costUsd = 0.75;
    expect(overBudget(b)).toBe("over its spend budget ($0.7500 of $0.5 used)");
    b.checkpoint.costUsd = 0.25;
    expect(overBudget(b)).toBeUndefined();
  });

  it("finished work is done even over budget; anything else stops at the budget", () => {
    const a = assignment({ limits: { ...assignment().limits, maxTokens: 10 } });
    a.checkpoint.tokens = 11;
    const live = liveRun(a);
    live.end = { kind: "complete", summary: "all done" };
    expect(decide(live, facts())).toMatchObject({ state: "done" });
    const paused = liveRun(a);
    paused.end = { kind: "pause", tool: "ask_owner", toolCallId: "c", question: "?" };
    expect(decide(paused, facts())).toMatchObject({ state: "failed" });
  });

  it("is done with the summary when work_complete was accepted", () => {
    const live = liveRun(assignment({ items: [item(1, "done")] }));
    live.end = { kind: "complete", summary: "The report is in out/report.md" };
    expect(decide(live, facts())).toEqual({
      directive: "done",
      state: "done",
      reason: "work_complete accepted",
      summary: "The report is in out/report.md",
    });
  });

  it("pauses for the owner while a question is pending", () => {
    const live = liveRun();
    live.end = { kind: "pause", tool: "ask_owner", toolCallId: "call_1", question: "Which format?" };
    expect(decide(live, facts({ outcome: "yielded" }))).toEqual({
      directive: "pause",
      state: "requires_action",
      reason: "waiting for the owner (ask_owner)",
    });
  });

  describe("a stop accepted without work_complete", () => {
    it("is done when a contract is met and every item is finished", () => {
      const live = liveRun(
        assignment({
          items: [item(1, "done"), item(2, "dropped")],
          contract: [{ kind: "file_exists", path: "out.md" }],
        }),
      );
      live.acceptedStop = "I think I am finished.";
      expect(decide(live, facts())).toEqual({
        directive: "done",
        state: "done",
        reason: "its contract is met, without work_complete (accepted after 3 refusals)",
        summary: "I think I am finished.",
      });
    });

    it("stalls without a contract, even with every item finished: nothing shows the work was done", () => {
      const live = liveRun(assignment({ items: [item(1, "done"), item(2, "dropped")] }));
      live.acceptedStop = "I think I am finished.";
      expect(decide(live, facts())).toEqual({
        directive: "done",
        state: "stalled",
        reason:
          "it stopped without finishing, 3 times (no work_complete call and no contract to check; 1 of 2 work items done)",
      });
    });

    it("stalls with no work items and no contract (a model that only talked)", () => {
      const live = liveRun(assignment({ items: [] }));
      live.acceptedStop = "Here is your poem: roses are red.";
      expect(decide(live, facts()).state).toBe("stalled");
      expect(decide(live, facts()).reason).toBe(
        "it stopped without finishing, 3 times (no work_complete call and no contract to check; no work items)",
      );
    });

    it("stalls naming the open items and the gaps", () => {
      const live = liveRun(
        assignment({
          items: [item(1, "done"), item(2, "open", "Write part 2"), item(3, "blocked", "Ask Bob")],
          contract: [{ kind: "file_exists", path: "out.md" }],
        }),
      );
      live.acceptedStop = "done?";
      expect(decide(live, facts({ gaps: ["out.md: the file does not exist yet"] }))).toEqual({
        directive: "done",
        state: "stalled",
        reason:
          'it stopped without finishing, 3 times (open: #2 "Write part 2" (open), #3 "Ask Bob" (blocked); out.md: the file does not exist yet)',
      });
    });

    it("stalls for gaps alone, with every item done", () => {
      const live = liveRun(
        assignment({ items: [item(1, "in_progress")], contract: [{ kind: "file_exists", path: "a.md" }] }),
      );
      live.assignment.items[0]!.status = "done";
      live.acceptedStop = "done";
      expect(decide(live, facts({ gaps: ["a.md: the file does not exist yet"] })).reason).toBe(
        "it stopped without finishing, 3 times (a.md: the file does not exist yet)",
      );
    });
  });

  describe("a stall", () => {
    it("stops after stallThreshold runs in a row with the fingerprint unchanged", () => {
      const live = liveRun();
      const cp = live.assignment.checkpoint;
      expect(decide(live, facts({ fingerprint: "same" })).directive).toBe("continue"); // first: new
      expect(cp.unchangedRuns).toBe(0);
      expect(decide(live, facts({ fingerprint: "same" })).directive).toBe("continue");
      expect(decide(live, facts({ fingerprint: "same" })).directive).toBe("continue");
      expect(cp.unchangedRuns).toBe(2);
      expect(decide(live, facts({ fingerprint: "same" }))).toEqual({
        directive: "done",
        state: "stalled",
        reason: "no progress in 3 runs in a row (work items, project files and tool results unchanged)",
      });
    });

    it("starts counting again when the fingerprint changes", () => {
      const live = liveRun();
      const cp = live.assignment.checkpoint;
      decide(live, facts({ fingerprint: "a" }));
      decide(live, facts({ fingerprint: "a" }));
      decide(live, facts({ fingerprint: "a" }));
      expect(cp.unchangedRuns).toBe(2);
      decide(live, facts({ fingerprint: "b" }));
      expect(cp.unchangedRuns).toBe(0);
      expect(cp.fingerprint).toBe("b");
    });

    it("does not count a run the agent ended with end_run sleep (waiting is not stalling)", () => {
      const a = assignment();
      const cp = a.checkpoint;
      const run = (sleep: boolean) => {
        const live = liveRun(a);
        if (sleep)
          live.end = {
            kind: "end_run",
            directive: "sleep",
            sleepMs: 30 * MIN,
            note: "the agent sleeps 30 min",
          };
        return decide(live, facts({ fingerprint: "same" }));
      };
      run(false);
      run(false);
      expect(cp.unchangedRuns).toBe(1);
      for (let i = 0; i < 5; i++) expect(run(true).directive).toBe("sleep");
      expect(cp.unchangedRuns).toBe(1);
      run(false);
      expect(cp.unchangedRuns).toBe(2);
      expect(run(false).state).toBe("stalled");
    });

    it("does count an end_run continue", () => {
      const a = assignment();
      for (let i = 0; i < 3; i++) {
        const live = liveRun(a);
        live.end = { kind: "end_run", directive: "continue", sleepMs: 0, note: "the agent ended the run" };
        expect(decide(live, facts({ fingerprint: "same" })).directive).toBe("continue");
      }
      const live = liveRun(a);
      live.end = { kind: "end_run", directive: "continue", sleepMs: 0, note: "the agent ended the run" };
      expect(decide(live, facts({ fingerprint: "same" })).state).toBe("stalled");
    });
  });

  it("fails when every run is used", () => {
    const a = assignment();
    a.checkpoint.runs = 20;
    expect(decide(liveRun(a), facts())).toEqual({
      directive: "done",
      state: "failed",
      reason: "used all 20 runs without finishing",
    });
    a.checkpoint.runs = 19;
    expect(decide(liveRun(a), facts({ fingerprint: "other" })).directive).toBe("continue");
  });

  it("follows end_run: continue now, or sleep for its time", () => {
    const cont = liveRun();
    cont.end = { kind: "end_run", directive: "continue", sleepMs: 0, note: "the agent ended the run" };
    expect(decide(cont, facts())).toEqual({
      directive: "continue",
      state: "active",
      at: NOW,
      reason: "the agent ended the run",
    });
    const sleep = liveRun();
    sleep.end = { kind: "end_run", directive: "sleep", sleepMs: 30 * MIN, note: "the agent sleeps 30 min" };
    expect(decide(sleep, facts())).toEqual({
      directive: "sleep",
      state: "sleeping",
      at: NOW + 30 * MIN,
      reason: "the agent sleeps 30 min",
    });
  });

  it("sleeps until a wait_agents deadline (a bound or end_run continue does not cut it short), unchanged runs not counted", () => {
    const a = assignment();
    const live = liveRun(a, { waitUntil: NOW + 5 * MIN, bound: "reached 10 model calls in this run" });
    live.end = { kind: "end_run", directive: "continue", sleepMs: 0, note: "the agent ended the run" };
    expect(decide(live, facts({ fingerprint: "same" }))).toEqual({
      directive: "sleep",
      state: "sleeping",
      at: NOW + 5 * MIN,
      reason: "waiting for its helpers (wait_agents)",
    });
    expect(decide(liveRun(a, { waitUntil: NOW - 1 }), facts({ fingerprint: "same" })).at).toBe(NOW);
    expect(a.checkpoint.unchangedRuns).toBe(0);
  });

  it("continues by default, giving the bound reached as the reason", () => {
    const live = liveRun(undefined, { bound: "reached 10 model calls in this run" });
    expect(decide(live, facts({ outcome: "yielded" }))).toEqual({
      directive: "continue",
      state: "active",
      at: NOW,
      reason: "reached 10 model calls in this run",
    });
    expect(decide(liveRun(), facts()).reason).toBe(
      "the model stopped before finishing (continuation prompts used up)",
    );
  });

  it("records the last directive in the checkpoint", () => {
    const live = liveRun();
    decide(live, facts({ now: NOW + 5 }));
    expect(live.assignment.checkpoint.lastDirective).toEqual({
      directive: "continue",
      reason: "the model stopped before finishing (continuation prompts used up)",
      at: NOW + 5,
    });
  });
});

describe("assignmentHooks", () => {
  const root = mkdtempSync(path.join(tmpdir(), "switchyard-stop-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  function setup(o: { maxContinuationPrompts?: number; live?: LiveRun } = {}) {
    const clock = new ManualClock(NOW);
    const runs = new LiveRuns();
    const live = o.live ?? liveRun();
    runs.begin(live);
    const hooks: TurnHooks = assignmentHooks({
      runs,
      clock,
      maxContinuationPrompts: o.maxContinuationPrompts ?? 2,
      humanTools: new Set(["ask_owner", "request_approval"]),
      checks: { workspaceDir: root, allowCommands: false },
    });
    return { clock, runs, live, hooks };
  }

  const turn = (runId = "run_1"): HookTurn => ({
    sessionKey: "agent:main:task:t0000001",
    sessionId: "ses_1",
    runId,
    trigger: "assignment",
    signal: new AbortController().signal,
  });

  describe("yieldBefore", () => {
    it("yields at maxTurnsPerRun model calls, recording the bound", () => {
      const { hooks, live } = setup();
      expect(hooks.yieldBefore?.(turn(), 9)).toBeUndefined();
      expect(live.bound).toBeUndefined();
      expect(hooks.yieldBefore?.(turn(), 10)).toBe("reached 10 model calls in this run");
      expect(live.bound).toBe("reached 10 model calls in this run");
    });

    it("yields at maxRunMinutes on the clock", () => {
      const { hooks, live, clock } = setup();
      clock.advance(30 * MIN - 1);
      expect(hooks.yieldBefore?.(turn(), 1)).toBeUndefined();
      clock.advance(1);
      expect(hooks.yieldBefore?.(turn(), 1)).toBe("reached 30 minutes in this run");
      expect(live.bound).toBe("reached 30 minutes in this run");
    });

    it("yields when the run asked to end, and leaves other runs alone", () => {
      const { hooks, live } = setup();
      expect(hooks.yieldBefore?.(turn("run_other"), 1_000)).toBeUndefined();
      live.end = { kind: "complete", summary: "x" };
      expect(hooks.yieldBefore?.(turn(), 0)).toBe("run end requested (complete)");
    });
  });

  describe("beforeStop", () => {
    it("sends the continuation prompt with the open items at most maxContinuationPrompts times in a row", async () => {
      const { hooks, live } = setup({
        live: liveRun(assignment({ items: [item(1, "done"), item(2, "open", "Write part 2")] })),
      });
      const first = await hooks.beforeStop?.("I'm done", turn());
      expect(first).toEqual({
        continueWith: `${CONTINUATION_PROMPT}\nOpen work items: #2 "Write part 2" (open).`,
      });
      expect(await hooks.beforeStop?.("I'm done", turn())).toEqual(first);
      expect(await hooks.beforeStop?.("I'm done", turn())).toBeUndefined();
      expect(live.nudgesInRow).toBe(2);
      expect(live.acceptedStop).toBeUndefined();
    });

    it("counts again after a tool call", async () => {
      const { hooks, live } = setup({ maxContinuationPrompts: 1 });
      expect(await hooks.beforeStop?.("stop", turn())).toBeDefined();
      expect(await hooks.beforeStop?.("stop", turn())).toBeUndefined();
      await hooks.afterToolCall?.(
        { id: "c1", name: "read_file", argumentsJson: "{}" },
        { content: "ok", isError: false },
        turn(),
      );
      expect(live.nudgesInRow).toBe(0);
      // Refusals are not reset by a tool call: 2 so far, the third is the last refusal.
      expect(await hooks.beforeStop?.("stop", turn())).toBeDefined();
    });

    it("asks for work items when there are none yet, and adds the gap report when all are done", async () => {
      const none = setup();
      expect(await none.hooks.beforeStop?.("stop", turn())).toEqual({
        continueWith: `${CONTINUATION_PROMPT}\nThere are no work items yet: break the goal down with work_item_add first.`,
      });
      const gaps = setup({
        live: liveRun(
          assignment({
            items: [item(1, "done")],
            contract: [{ kind: "file_exists", path: "out/report.md" }],
          }),
        ),
      });
      expect(await gaps.hooks.beforeStop?.("stop", turn())).toEqual({
        continueWith: `${CONTINUATION_PROMPT}\nThe contract is not met yet (checked by the gateway):\n- out/report.md: the file does not exist yet`,
      });
    });

    it(`accepts the stop after ${COMPLETION_REFUSALS} refusals (counted over runs), setting acceptedStop`, async () => {
      const a = assignment({ items: [item(1, "open")] });
      const first = setup({ live: liveRun(a), maxContinuationPrompts: 2 });
      expect(await first.hooks.beforeStop?.("one", turn())).toBeDefined();
      expect(await first.hooks.beforeStop?.("two", turn())).toBeDefined();
      expect(await first.hooks.beforeStop?.("three", turn())).toBeUndefined(); // prompts used up
      expect(a.checkpoint.completionRefusals).toBe(COMPLETION_REFUSALS);
      expect(first.live.acceptedStop).toBeUndefined();
      // The next run: the stop is accepted, with the answer as the summary.
      const next = setup({ live: liveRun(a, { runId: "run_2", runNo: 2 }) });
      expect(await next.hooks.beforeStop?.("It is finished.", turn("run_2"))).toBeUndefined();
      expect(next.live.acceptedStop).toBe("It is finished.");
      expect(a.checkpoint.completionRefusals).toBe(COMPLETION_REFUSALS);
    });

    it("accepts within a run when prompts outnumber the refusals", async () => {
      const { hooks, live } = setup({ maxContinuationPrompts: 10 });
      for (let i = 0; i < COMPLETION_REFUSALS; i++)
        expect(await hooks.beforeStop?.(`stop ${i}`, turn())).toBeDefined();
      expect(await hooks.beforeStop?.("final", turn())).toBeUndefined();
      expect(live.acceptedStop).toBe("final");
    });

    it("does nothing once the run asked to end, nor for a run that is not an assignment's", async () => {
      const { hooks, live } = setup();
      expect(await hooks.beforeStop?.("stop", turn("run_other"))).toBeUndefined();
      live.end = { kind: "complete", summary: "done" };
      expect(await hooks.beforeStop?.("stop", turn())).toBeUndefined();
      expect(live.assignment.checkpoint.completionRefusals).toBe(0);
      expect(live.acceptedStop).toBeUndefined();
    });
  });

  describe("afterToolCall", () => {
    const ask = { id: "call_7", name: "ask_owner", argumentsJson: '{"question":"Which format?"}' };

    it("pauses the run on a human tool: live.end is the question, the result says the owner was asked", async () => {
      const { hooks, live } = setup();
      const out = await hooks.afterToolCall?.(ask, { content: "Which format?", isError: false }, turn());
      expect(out).toEqual({ content: WAITING_FOR_OWNER, isError: false });
      expect(live.end).toEqual({
        kind: "pause",
        tool: "ask_owner",
        toolCallId: "call_7",
        question: "Which format?",
      });
      expect(live.calls.size).toBe(1);
      expect(hooks.yieldBefore?.(turn(), 1)).toBe("run end requested (pause)");
    });

    it("does not pause for a failed human tool call, or a second one", async () => {
      const { hooks, live } = setup();
      const failed: ToolOutcome = { content: "error (failed): no owner", isError: true };
      expect(await hooks.afterToolCall?.(ask, failed, turn())).toBe(failed);
      expect(live.end).toBeUndefined();
      await hooks.afterToolCall?.(ask, { content: "Q1", isError: false }, turn());
      const second: ToolOutcome = { content: "Q2", isError: false };
      expect(
        await hooks.afterToolCall?.({ ...ask, id: "call_8", name: "request_approval" }, second, turn()),
      ).toMatchObject({ isError: true, content: expect.stringContaining("not sent") });
      expect(live.end).toMatchObject({ kind: "pause", toolCallId: "call_7", question: "Q1" });
    });

    it("records a digest per distinct call and leaves other tools' results alone", async () => {
      const { hooks, live } = setup();
      await hooks.afterToolCall?.(
        { id: "c0", name: "read_file", argumentsJson: "{}" },
        { content: "x", isError: false },
        turn(),
      );
      expect(live.calls.size).toBe(0); // reading is not progress
      const read = { id: "c1", name: "write_file", argumentsJson: '{"path":"a"}' };
      const outcome: ToolOutcome = { content: "text", isError: false };
      expect(await hooks.afterToolCall?.(read, outcome, turn())).toBe(outcome);
      await hooks.afterToolCall?.({ ...read, id: "c2" }, outcome, turn());
      expect(live.calls.size).toBe(1); // same name, arguments and result
      await hooks.afterToolCall?.(read, { content: "changed", isError: false }, turn());
      expect(live.calls.size).toBe(2);
      expect(live.end).toBeUndefined();
    });

    it("leaves a run that is not an assignment's alone", async () => {
      const { hooks, live } = setup();
      const outcome: ToolOutcome = { content: "Which format?", isError: false };
      expect(await hooks.afterToolCall?.(ask, outcome, turn("run_chat"))).toBe(outcome);
      expect(live.end).toBeUndefined();
      expect(live.calls.size).toBe(0);
    });
  });
});
