/**
 * The assignment tools through a real ToolRegistry (the boundary formats their errors), over a
 * LiveRuns registry holding one assignment's run.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import {
  RUN_ONLY_TOOLS,
  type AssignmentToolOptions,
  assignmentTools,
  learnTool,
} from "../../../src/harness/assignments/assignment-tools.js";
import { AssignmentInputError } from "../../../src/harness/assignments/errors.js";
import { type LiveRun, LiveRuns } from "../../../src/harness/assignments/live-run.js";
import { ToolRegistry, type ToolResult } from "../../../src/harness/tools/registry.js";
import type { ToolContext } from "../../../src/harness/tools/types.js";
import type { Assignment, WorkItem } from "../../../src/store/repos/assignment-repo.js";
import { ManualClock } from "../../../src/util/clock.js";
import { assignmentFixture } from "../../helpers/assignment-fixture.js";

const NOW = 1_700_000_000_000;
const ws = mkdtempSync(path.join(tmpdir(), "switchyard-assignment-tools-"));
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const assignment = assignmentFixture;

let clock: ManualClock;
let runs: LiveRuns;
let live: LiveRun;
let registry: ToolRegistry;
let saved: number;
let done: WorkItem[];
let states: Array<[string, string]>;
let learned: Array<[string, string | null, string]>;

function setup(a: Assignment = assignment()): void {
  clock = new ManualClock(NOW);
  runs = new LiveRuns();
  live = {
    assignment: a,
    runNo: 1,
    runId: "run_1",
    sessionId: "ses_1",
    startedAt: NOW,
    nudgesInRow: 0,
    calls: new Set(),
  };
  runs.begin(live);
  saved = 0;
  done = [];
  states = [];
  learned = [];
  const options: AssignmentToolOptions = {
    runs,
    clock,
    checks: { workspaceDir: ws, allowCommands: false },
    saved: async (l) => {
      expect(l).toBe(live);
      saved++;
    },
    itemDone: async (_l, item) => {
      done.push({ ...item });
    },
    writeSessionState: async (id, text) => {
      states.push([id, text]);
    },
    learn: async (text, scope, source) => {
      if (text === "x") throw new AssignmentInputError("text: expected a lesson of at least a few words");
      learned.push([text, scope, source]);
      return `noted: ${text}`;
    },
  };
  registry = new ToolRegistry();
  for (const tool of assignmentTools(options)) registry.register(tool);
}

const ctx = (runId = "run_1"): ToolContext => ({
  workspaceDir: ws,
  sessionKey: runId === "run_1" ? "agent:main:task:t0000001" : "agent:main:telegram:dm:42",
  runId,
  signal: new AbortController().signal,
});

const call = (name: string, args: unknown, runId?: string): Promise<ToolResult> =>
  registry.execute(name, JSON.stringify(args), ctx(runId));

async function ok(name: string, args: unknown): Promise<string> {
  const r = await call(name, args);
  expect(r, r.content).toMatchObject({ isError: false });
  return r.content;
}

const add = (title: string) => ok("work_item_add", { title });

beforeEach(() => setup());

describe("assignment tools", () => {
  it("registers the eight tools, the owner's tools as requiresHuman", () => {
    // RUN_ONLY_TOOLS (what `tools list` leaves out of a chat) is every one of them but learn.
    expect(registry.list().map((t) => t.name)).toEqual([...RUN_ONLY_TOOLS, "learn"]);
    expect(
      registry
        .list()
        .filter((t) => t.requiresHuman)
        .map((t) => t.name),
    ).toEqual(["ask_owner", "request_approval"]);
  });

  describe("work_item_add", () => {
    it("numbers items 1..n, open, saving after each", async () => {
      expect(await add("  Outline  ")).toBe("work item #1 added: Outline");
      expect(await add("Part 1")).toBe("work item #2 added: Part 1");
      expect(await add("Part 2")).toBe("work item #3 added: Part 2");
      expect(live.assignment.items.map((i) => [i.id, i.title, i.status])).toEqual([
        [1, "Outline", "open"],
        [2, "Part 1", "open"],
        [3, "Part 2", "open"],
      ]);
      expect(saved).toBe(3);
    });

    it("numbers after the highest id, so a gap is never reused", async () => {
      setup(assignment({ items: [{ id: 7, title: "Old", status: "done", notes: "", updatedAt: NOW }] }));
      expect(await add("New")).toBe("work item #8 added: New");
    });

    it("refuses a 101st item", async () => {
      const items = Array.from(
        { length: 100 },
        (_, i): WorkItem => ({
          id: i + 1,
          title: `Step ${i + 1}`,
          status: "open",
          notes: "",
          updatedAt: NOW,
        }),
      );
      setup(assignment({ items }));
      expect((await call("work_item_add", { title: "One more" })).content).toBe(
        "error (failed): at most 100 work items; update or drop existing ones",
      );
      expect(saved).toBe(0);
    });

    it("refuses an empty title at the boundary", async () => {
      expect((await call("work_item_add", { title: "" })).content).toMatch(/^error \(invalid_arguments\)/);
      expect(live.assignment.items).toEqual([]);
    });
  });

  describe("work_item_update", () => {
    beforeEach(async () => {
      await add("Outline");
      await add("Write part 2");
      saved = 0;
    });

    it("reports an unknown id as not_found, naming the ids there are", async () => {
      expect((await call("work_item_update", { id: 9, status: "done" })).content).toBe(
        "error (not_found): no work item #9 (items: #1, #2)",
      );
      setup();
      expect((await call("work_item_update", { id: 1, status: "done" })).content).toBe(
        "error (not_found): no work item #1: there are none yet (work_item_add)",
      );
    });

    it("refuses an update with neither status nor notes", async () => {
      expect((await call("work_item_update", { id: 1 })).content).toBe(
        "error (invalid_arguments): give status, notes or both",
      );
      expect(saved).toBe(0);
    });

    it("changes status and notes, and reports the item done once", async () => {
      clock.advance(1_000);
      expect(await ok("work_item_update", { id: 1, status: "done", notes: "in out/outline.md" })).toBe(
        "work item #1 is done; 1 of 2 still open",
      );
      expect(live.assignment.items[0]).toEqual({
        id: 1,
        title: "Outline",
        status: "done",
        notes: "in out/outline.md",
        updatedAt: NOW + 1_000,
      });
      expect(done.map((i) => i.id)).toEqual([1]);
      await ok("work_item_update", { id: 1, status: "done" });
      await ok("work_item_update", { id: 1, notes: "moved to out/o.md" });
      expect(done.map((i) => i.id)).toEqual([1]);
      expect(saved).toBe(3);
      expect(await ok("work_item_update", { id: 2, status: "dropped" })).toBe(
        "work item #2 is dropped; 0 of 2 still open",
      );
      expect(done.map((i) => i.id)).toEqual([1]);
    });

    it("resets completion refusals on a status change, not on notes alone", async () => {
      live.assignment.checkpoint.completionRefusals = 2;
      await ok("work_item_update", { id: 1, notes: "progress" });
      expect(live.assignment.checkpoint.completionRefusals).toBe(2);
      await ok("work_item_update", { id: 1, status: "in_progress" });
      expect(live.assignment.checkpoint.completionRefusals).toBe(0);
    });

    it("refuses an unknown status at the boundary", async () => {
      expect((await call("work_item_update", { id: 1, status: "finished" })).content).toMatch(
        /^error \(invalid_arguments\)/,
      );
    });
  });

  it("work_item_list lists the items with status and notes", async () => {
    expect(await ok("work_item_list", {})).toBe("no work items yet");
    await add("Outline");
    await add("Part 1");
    await ok("work_item_update", { id: 1, status: "done", notes: "out/outline.md" });
    expect(await ok("work_item_list", {})).toBe("#1 [done] Outline — out/outline.md\n#2 [open] Part 1");
  });

  describe("work_complete", () => {
    it("refuses while an item is open, naming it", async () => {
      await add("Outline");
      await add("Write part 2");
      await ok("work_item_update", { id: 1, status: "done" });
      const r = await call("work_complete", { summary: "All done" });
      expect(r.isError).toBe(true);
      expect(r.content).toContain(
        'refused: not every work item is finished — open: #2 "Write part 2" (open).',
      );
      expect(r.content).toMatch(/^error \(failed\): /);
      expect(live.end).toBeUndefined();
      await ok("work_item_update", { id: 2, status: "in_progress" });
      expect((await call("work_complete", { summary: "All done" })).content).toContain(
        '#2 "Write part 2" (in progress)',
      );
    });

    it("refuses while the contract has a gap, with the gap report", async () => {
      setup(
        assignment({ contract: [{ kind: "file_contains", path: "out/report.md", pattern: "^## Summary" }] }),
      );
      await add("Write");
      await ok("work_item_update", { id: 1, status: "done" });
      expect((await call("work_complete", { summary: "All done" })).content).toBe(
        "error (failed): refused: The contract is not met yet (checked by the gateway):\n- out/report.md: the file does not exist yet",
      );
      mkdirSync(path.join(ws, "out"), { recursive: true });
      writeFileSync(path.join(ws, "out", "report.md"), "# Report\n");
      expect((await call("work_complete", { summary: "All done" })).content).toBe(
        "error (failed): refused: The contract is not met yet (checked by the gateway):\n- out/report.md: does not contain /^## Summary/ yet",
      );
      expect(live.end).toBeUndefined();
      writeFileSync(path.join(ws, "out", "report.md"), "# Report\n## Summary\nok\n");
      await ok("work_complete", { summary: "All done" });
      expect(live.end).toEqual({ kind: "complete", summary: "All done" });
    });

    it("accepts when every item is finished: live.end is complete with the summary", async () => {
      await add("Outline");
      await add("Optional part");
      await ok("work_item_update", { id: 1, status: "done" });
      await ok("work_item_update", { id: 2, status: "dropped", notes: "not needed" });
      expect(await ok("work_complete", { summary: "  The report is in out/report.md  " })).toBe(
        "accepted: the assignment is done; this run ends now and the owner gets your summary.",
      );
      expect(live.end).toEqual({ kind: "complete", summary: "The report is in out/report.md" });
      expect(live.assignment.checkpoint.summary).toBe("The report is in out/report.md");
    });
  });

  describe("end_run", () => {
    it("sleeps for sleepMinutes, writing the state and recording learnings from the assignment", async () => {
      expect(
        await ok("end_run", {
          next: "sleep",
          sleepMinutes: 30,
          state: "Part 1 done",
          learnings: ["Run tests first"],
        }),
      ).toBe("this run ends; the next starts in 30 min\nnoted: Run tests first");
      expect(live.end).toEqual({
        kind: "end_run",
        directive: "sleep",
        sleepMs: 30 * 60_000,
        note: "the agent sleeps 30 min",
      });
      expect(states).toEqual([["t0000001", "Part 1 done"]]);
      expect(learned).toEqual([["Run tests first", null, "t0000001"]]);
    });

    it("sleeps 60 minutes by default; continue has no wait", async () => {
      await ok("end_run", { next: "sleep" });
      expect(live.end).toMatchObject({ directive: "sleep", sleepMs: 60 * 60_000 });
      setup();
      expect(await ok("end_run", { next: "continue", sleepMinutes: 15 })).toBe(
        "this run ends; the next starts now",
      );
      expect(live.end).toEqual({
        kind: "end_run",
        directive: "continue",
        sleepMs: 0,
        note: "the agent ended the run",
      });
      expect(states).toEqual([]);
    });

    it("refuses a sleep out of bounds at the boundary", async () => {
      expect((await call("end_run", { next: "sleep", sleepMinutes: 0 })).content).toMatch(
        /^error \(invalid_arguments\)/,
      );
      expect(live.end).toBeUndefined();
    });
  });

  describe("the owner's tools", () => {
    it("ask_owner returns the question (with options) for the hooks to send", async () => {
      expect(await ok("ask_owner", { question: " Which format? ", options: ["PDF", "Markdown"] })).toBe(
        "Which format?\nOptions: PDF / Markdown",
      );
      expect(await ok("request_approval", { action: "Buy a domain for $12" })).toBe(
        "Approval needed: Buy a domain for $12\nReply yes or no (or say what to change).",
      );
    });

    it("once a question is pending, end_run and work_complete in the same turn are refused", async () => {
      live.end = { kind: "pause", tool: "ask_owner", toolCallId: "c1", question: "Which format?" };
      for (const [name, args] of [
        ["end_run", { next: "sleep", sleepMinutes: 60 }],
        ["work_complete", { summary: "Done." }],
      ] as const) {
        const r = await call(name, args);
        expect(r.content).toMatch(
          /^error \(failed\): not done: this run already waits for the owner's answer/,
        );
      }
      expect(live.end).toMatchObject({ kind: "pause" });
    });

    it("ask_owner and request_approval fail for an assignment without an owner", async () => {
      setup(assignment({ owner: null }));
      for (const [name, args] of [
        ["ask_owner", { question: "Which format?" }],
        ["request_approval", { action: "Delete the old drafts" }],
      ] as const) {
        const r = await call(name, args);
        expect(r.isError).toBe(true);
        expect(r.content).toMatch(/^error \(failed\): this assignment has no owner chat to ask/);
      }
    });
  });

  it("every assignment tool outside an assignment's run: an error saying where it works", async () => {
    const args: Record<string, unknown> = {
      work_item_add: { title: "x" },
      work_item_update: { id: 1, status: "done" },
      work_item_list: {},
      work_complete: { summary: "done" },
      ask_owner: { question: "?" },
      request_approval: { action: "x" },
      end_run: { next: "continue" },
    };
    for (const [name, a] of Object.entries(args)) {
      const r = await call(name, a, "run_chat");
      expect(r.isError, name).toBe(true);
      expect(r.content, name).toBe(
        "error (failed): this tool works only inside an assignment's run (start one with task_start)",
      );
    }
    expect(live.assignment.items).toEqual([]);
    expect(live.end).toBeUndefined();
  });

  describe("learn", () => {
    it("records with the assignment as the source inside its run, the session outside", async () => {
      expect(await ok("learn", { text: "Run tests first", scope: "repo" })).toBe("noted: Run tests first");
      expect((await call("learn", { text: "Deploy after review" }, "run_chat")).content).toBe(
        "noted: Deploy after review",
      );
      expect(learned).toEqual([
        ["Run tests first", "repo", "t0000001"],
        ["Deploy after review", null, "agent:main:telegram:dm:42"],
      ]);
    });

    it("turns a refused lesson into invalid_arguments", async () => {
      expect((await call("learn", { text: "x" })).content).toBe(
        "error (invalid_arguments): text: expected a lesson of at least a few words",
      );
    });

    it("is also offered alone (learnTool)", () => {
      expect(learnTool({ runs, learn: async () => "" }).name).toBe("learn");
    });
  });
});
