/**
 * The tools of an assignment's runs: work items (`work_item_add`, `work_item_update`,
 * `work_item_list`), `work_complete` (accepted only when every item is finished and the
 * contract's checks pass), the owner's tools (`ask_owner`, `request_approval`: requiresHuman,
 * so the run pauses for the answer), `end_run` (end this run: continue now or sleep), and
 * `learn`. Each change is saved at once (`saved`), so a crash keeps it.
 */
import { z } from "zod";
import type { WorkItem, WorkItemStatus } from "../../store/repos/assignment-repo.js";
import type { Clock } from "../../util/clock.js";
import { ToolError } from "../tools/tool-error.js";
import type { Tool, ToolContext } from "../tools/types.js";
import { type CheckOptions, contractGaps, gapReport } from "./contract.js";
import { cleanLearning } from "../memory/learnings.js";
import { AssignmentInputError } from "./errors.js";
import { type LiveRun, type LiveRuns, describeItems, itemLine, openItems } from "./live-run.js";

/** Tools an assignment's runs are not offered: its wakes are the runner's, and it cannot start another. */
export const NOT_IN_RUNS: ReadonlySet<string> = new Set([
  "schedule_wake",
  "list_wakes",
  "cancel_wake",
  "task_start",
]);

/**
 * The tools only an assignment's runs are offered (every tool assignmentTools builds but
 * `learn`, which every turn gets): `switchyard tools list` reads them without building any.
 */
export const RUN_ONLY_TOOLS: ReadonlySet<string> = new Set([
  "work_item_add",
  "work_item_update",
  "work_item_list",
  "work_complete",
  "ask_owner",
  "request_approval",
  "end_run",
]);

/** Work items per assignment. */
export const MAX_WORK_ITEMS = 100;

/** What the tools need. */
export interface AssignmentToolOptions {
  runs: LiveRuns;
  clock: Clock;
  checks: Omit<CheckOptions, "signal">;
  /** Saves the run's items and checkpoint and mirrors them into the project files. */
  saved(live: LiveRun): Promise<void>;
  /** A work item was finished (reported to the owner, batched). */
  itemDone(live: LiveRun, item: WorkItem): Promise<void>;
  /** Replaces the project's session-state.md. */
  writeSessionState(id: string, text: string): Promise<void>;
  /** Records a learning (source: the assignment); returns a line for the model. */
  learn(text: string, scope: string | null, source: string): Promise<string>;
}

const STATUSES = [
  "open",
  "in_progress",
  "blocked",
  "done",
  "dropped",
] as const satisfies readonly WorkItemStatus[];

const addParameters = z.strictObject({
  title: z.string().min(1).max(300).describe("The step, in a few words"),
  notes: z.string().max(2_000).optional().describe("Details, where things are"),
});
const updateParameters = z.strictObject({
  id: z.int().describe("The item's id (see work_item_list)"),
  status: z.enum(STATUSES).optional(),
  notes: z.string().max(2_000).optional().describe("Replaces the item's notes"),
});
const completeParameters = z.strictObject({
  summary: z.string().min(1).max(4_000).describe("What was done and where the outputs are, for the owner"),
});
const askParameters = z.strictObject({
  question: z.string().min(1).max(2_000),
  options: z
    .array(z.string().min(1).max(200))
    .max(10)
    .optional()
    .describe("Answers to offer, if it is a choice"),
});
const approvalParameters = z.strictObject({
  action: z.string().min(1).max(2_000).describe("What you want to do and why it needs the owner's approval"),
});
const endParameters = z.strictObject({
  next: z
    .enum(["continue", "sleep"])
    .describe("continue: the next run starts right away, fresh; sleep: wait sleepMinutes first"),
  sleepMinutes: z.int().min(1).max(10_080).optional().describe("With sleep: how long (default 60)"),
  state: z
    .string()
    .max(8_000)
    .optional()
    .describe("Replaces session-state.md: where the work stands and what the next run should do"),
  learnings: z.array(z.string().min(1).max(500)).max(5).optional().describe("Lessons worth remembering"),
});
const learnParameters = z.strictObject({
  text: z.string().min(1).max(500).describe("The lesson, in one line, general enough to reuse"),
  scope: z.string().max(100).optional().describe("What it applies to (a project, a tool, a person)"),
});

/** The assignment's run of this call, or a tool error saying these tools belong to assignments. */
function liveOf(o: AssignmentToolOptions, ctx: ToolContext): LiveRun {
  const live = o.runs.get(ctx.runId);
  if (!live)
    throw new ToolError(
      "failed",
      "this tool works only inside an assignment's run (start one with task_start)",
    );
  return live;
}

/** Refuses to end a run that already waits for the owner (their answer must not be lost). */
function notPaused(live: LiveRun): void {
  if (live.end?.kind === "pause")
    throw new ToolError(
      "failed",
      `not done: this run already waits for the owner's answer to ${live.end.tool}; it ends now and resumes with their answer`,
    );
}

/** work_item_*, work_complete, ask_owner, request_approval, end_run. */
export function assignmentTools(o: AssignmentToolOptions): Tool[] {
  const add: Tool<typeof addParameters> = {
    name: "work_item_add",
    groups: ["assignment"],
    description: "Add a work item (a step of the assignment) to track. Returns its id.",
    parameters: addParameters,
    async run(args, ctx) {
      const live = liveOf(o, ctx);
      const a = live.assignment;
      if (a.items.length >= MAX_WORK_ITEMS)
        throw new ToolError("failed", `at most ${MAX_WORK_ITEMS} work items; update or drop existing ones`);
      const id = a.items.reduce((max, i) => Math.max(max, i.id), 0) + 1;
      const item: WorkItem = {
        id,
        title: args.title.trim(),
        status: "open",
        notes: args.notes ?? "",
        updatedAt: o.clock.now(),
      };
      a.items.push(item);
      await o.saved(live);
      return { content: `work item #${id} added: ${item.title}` };
    },
  };
  const update: Tool<typeof updateParameters> = {
    name: "work_item_update",
    groups: ["assignment"],
    description: "Change a work item's status (open, in_progress, blocked, done, dropped) or notes.",
    parameters: updateParameters,
    async run(args, ctx) {
      const live = liveOf(o, ctx);
      const a = live.assignment;
      const item = a.items.find((i) => i.id === args.id);
      if (!item)
        throw new ToolError(
          "not_found",
          a.items.length === 0
            ? `no work item #${args.id}: there are none yet (work_item_add)`
            : `no work item #${args.id} (items: ${a.items.map((i) => `#${i.id}`).join(", ")})`,
        );
      if (args.status === undefined && args.notes === undefined)
        throw new ToolError("invalid_arguments", "give status, notes or both");
      const finished = args.status === "done" && item.status !== "done";
      if (args.status) item.status = args.status;
      if (args.notes !== undefined) item.notes = args.notes;
      item.updatedAt = o.clock.now();
      // Real progress: earlier stops without work_complete no longer count towards accepting one.
      if (args.status) a.checkpoint.completionRefusals = 0;
      await o.saved(live);
      if (finished) await o.itemDone(live, item);
      const open = openItems(a.items).length;
      return { content: `work item #${item.id} is ${item.status}; ${open} of ${a.items.length} still open` };
    },
  };
  const list: Tool = {
    name: "work_item_list",
    groups: ["assignment"],
    description: "List the assignment's work items: id, status, title, notes.",
    parameters: z.strictObject({}),
    async run(_args, ctx) {
      const { items } = liveOf(o, ctx).assignment;
      if (items.length === 0) return { content: "no work items yet" };
      return { content: items.map((i) => itemLine(i)).join("\n") };
    },
  };
  const complete: Tool<typeof completeParameters> = {
    name: "work_complete",
    groups: ["assignment"],
    description:
      "Declare the assignment done, with a summary for the owner. Refused while a work item is open or the contract's checks fail.",
    parameters: completeParameters,
    async run(args, ctx) {
      const live = liveOf(o, ctx);
      notPaused(live);
      const a = live.assignment;
      const open = openItems(a.items);
      if (open.length > 0)
        throw new ToolError(
          "failed",
          `refused: not every work item is finished — open: ${describeItems(open)}. Finish them (or mark them dropped with a note saying why), then call work_complete again.`,
        );
      const gaps = await contractGaps(a.contract, { ...o.checks, signal: ctx.signal });
      if (gaps.length > 0) throw new ToolError("failed", `refused: ${gapReport(gaps)}`);
      live.end = { kind: "complete", summary: args.summary.trim() };
      a.checkpoint.summary = args.summary.trim();
      return {
        content: "accepted: the assignment is done; this run ends now and the owner gets your summary.",
      };
    },
  };
  const ask: Tool<typeof askParameters> = {
    name: "ask_owner",
    groups: ["assignment"],
    description:
      "Ask the assignment's owner a question you cannot answer yourself. The run pauses; their reply comes back as this call's result (it may take hours).",
    parameters: askParameters,
    requiresHuman: true,
    async run(args, ctx) {
      ownerOf(liveOf(o, ctx));
      const options = args.options?.length ? `\nOptions: ${args.options.join(" / ")}` : "";
      return { content: `${args.question.trim()}${options}` };
    },
  };
  const approval: Tool<typeof approvalParameters> = {
    name: "request_approval",
    groups: ["assignment"],
    description:
      "Ask the owner to approve an action before you take it (spending money, contacting people, deleting things). The run pauses until they answer.",
    parameters: approvalParameters,
    requiresHuman: true,
    async run(args, ctx) {
      ownerOf(liveOf(o, ctx));
      return { content: `Approval needed: ${args.action.trim()}\nReply yes or no (or say what to change).` };
    },
  };
  const end: Tool<typeof endParameters> = {
    name: "end_run",
    groups: ["assignment"],
    description:
      "End this run now. next=continue: the next run starts right away with a fresh context from the project files; next=sleep: after sleepMinutes (waiting for something). Write `state` so the next run knows where you are.",
    parameters: endParameters,
    async run(args, ctx) {
      const live = liveOf(o, ctx);
      notPaused(live);
      for (const [i, text] of (args.learnings ?? []).entries()) {
        const clean = cleanLearning(text);
        if (typeof clean !== "string")
          throw new ToolError("invalid_arguments", `learnings.${i}.${clean.error}`);
      }
      if (args.state !== undefined) await o.writeSessionState(live.assignment.id, args.state);
      const learned: string[] = [];
      for (const text of args.learnings ?? []) learned.push(await o.learn(text, null, live.assignment.id));
      const sleepMs = (args.sleepMinutes ?? 60) * 60_000;
      live.end = {
        kind: "end_run",
        directive: args.next,
        sleepMs: args.next === "sleep" ? sleepMs : 0,
        note:
          args.next === "sleep"
            ? `the agent sleeps ${Math.round(sleepMs / 60_000)} min`
            : "the agent ended the run",
      };
      return {
        content: [
          args.next === "sleep"
            ? `this run ends; the next starts in ${Math.round(sleepMs / 60_000)} min`
            : "this run ends; the next starts now",
          ...learned,
        ].join("\n"),
      };
    },
  };
  return [add, update, list, complete, ask, approval, end, learnTool(o)];
}

/** `learn`: offered in every turn; inside an assignment its source is the assignment. */
export function learnTool(o: Pick<AssignmentToolOptions, "runs" | "learn">): Tool<typeof learnParameters> {
  return {
    name: "learn",
    groups: ["assignment"],
    description:
      "Record a lesson worth keeping (how something works, what to avoid). A lesson reported in 3 assignments is added to MEMORY.md.",
    parameters: learnParameters,
    async run(args, ctx) {
      const source = o.runs.get(ctx.runId)?.assignment.id ?? ctx.sessionKey;
      try {
        return { content: await o.learn(args.text, args.scope ?? null, source) };
      } catch (err) {
        if (err instanceof AssignmentInputError) throw new ToolError("invalid_arguments", err.message);
        throw err;
      }
    },
  };
}

function ownerOf(live: LiveRun): void {
  if (!live.assignment.owner)
    throw new ToolError(
      "failed",
      "this assignment has no owner chat to ask (it was started without --deliver); decide yourself and write the assumption in notes.md",
    );
}
