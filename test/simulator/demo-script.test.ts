/**
 * The simulator's demo script, pure: its recognisers, and the step it picks from a request body
 * of either protocol (the newest ask, the calls after it and their results).
 */
import { describe, expect, it } from "vitest";
import { handoffText } from "../../src/harness/assignments/handoff.js";
import { readConversation } from "../../src/simulator/conversation.js";
import {
  demoTurn,
  recogniseAssignment,
  recogniseMemory,
  recogniseReminder,
  recogniseReminderRun,
} from "../../src/simulator/demo-script.js";
import { defaultResponder, type ScriptedTurn, type SimulatedRequest } from "../fakes/model-simulator.js";
import { assignmentFixture } from "../helpers/assignment-fixture.js";

const ALL_TOOLS = [
  "cron_add",
  "memory_write",
  "work_item_add",
  "work_item_update",
  "write_file",
  "work_complete",
];

/** One step of a conversation: the person's text, or a tool call with its result. */
type Step = string | { call: string; args: unknown; result?: string; isError?: boolean };

function openaiBody(steps: Step[], tools = ALL_TOOLS) {
  const messages: unknown[] = [{ role: "system", content: "You are helpful." }];
  for (const [i, s] of steps.entries()) {
    if (typeof s === "string") {
      messages.push({ role: "user", content: s });
      continue;
    }
    const id = `call_${i}`;
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: s.call, arguments: JSON.stringify(s.args) } }],
    });
    if (s.result !== undefined)
      messages.push({
        role: "tool",
        tool_call_id: id,
        content: s.isError ? `error (failed): ${s.result}` : s.result,
      });
  }
  return {
    model: "gpt-test",
    messages,
    tools: tools.map((name) => ({ type: "function", function: { name, parameters: {} } })),
  };
}

function anthropicBody(steps: Step[], tools = ALL_TOOLS) {
  const messages: Array<{ role: string; content: unknown[] }> = [];
  for (const [i, s] of steps.entries()) {
    if (typeof s === "string") {
      messages.push({ role: "user", content: [{ type: "text", text: s }] });
      continue;
    }
    const id = `toolu_${i}`;
    messages.push({ role: "assistant", content: [{ type: "tool_use", id, name: s.call, input: s.args }] });
    if (s.result !== undefined)
      messages.push({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: id, content: s.result, is_error: s.isError === true }],
      });
  }
  return { model: "claude-test", max_tokens: 100, messages, tools: tools.map((name) => ({ name })) };
}

const DIALECTS = [
  ["openai", openaiBody],
  ["anthropic", anthropicBody],
] as const;

const toolCall = (turn: ScriptedTurn | undefined) =>
  turn && "toolCalls" in turn ? turn.toolCalls[0] : undefined;
const textOf = (turn: ScriptedTurn | undefined) => (turn && "text" in turn ? turn.text : undefined);

describe("recognisers", () => {
  it("reads reminders with the time before or after what to do", () => {
    expect(recogniseReminder("remind me in 2 minutes to stretch")).toEqual({ minutes: 2, what: "stretch" });
    expect(recogniseReminder("Please remind me to call Bob in an hour!")).toEqual({
      minutes: 60,
      what: "call Bob",
    });
    expect(recogniseReminder("remind me in 5m")).toEqual({ minutes: 5 });
    expect(recogniseReminder("remind me in two mins to drink water.")).toEqual({
      minutes: 2,
      what: "drink water",
    });
    expect(recogniseReminder("remind me in 2 months")).toBeUndefined();
    expect(recogniseReminder("remind me in 0 minutes")).toBeUndefined();
    expect(recogniseReminder("what did I ask you to remind me of?")).toBeUndefined();
  });

  it("reads 'remember that …' at the start only", () => {
    expect(recogniseMemory("remember that my cat is called Tom")).toBe("My cat is called Tom.");
    expect(recogniseMemory("Please remember that\nI take the 8:15 train.")).toBe("I take the 8:15 train.");
    expect(recogniseMemory("do you remember that song?")).toBeUndefined();
  });

  it("reads an assignment's goal and file from the real handoff text", () => {
    const handoff = (goal: string) =>
      handoffText(assignmentFixture({ goal }), 1, { sessionState: "", workingBuffer: "", notes: "" }, []);
    expect(recogniseAssignment(handoff("Write a two-line poem into poem.md"))).toEqual({
      goal: "Write a two-line poem into poem.md",
      file: "poem.md",
      lines: 2,
    });
    expect(recogniseAssignment(handoff("Summarise the week, e.g. in notes/week.txt."))).toMatchObject({
      file: "notes/week.txt",
    });
    expect(recogniseAssignment(handoff("Plan a trip to Rome"))).toEqual({
      goal: "Plan a trip to Rome",
      file: "projects/t0000001/result.md",
    });
    expect(recogniseAssignment("Write a two-line poem into poem.md")).toBeUndefined();
  });

  it("reads the run of a reminder the demo set", () => {
    const trigger =
      'Scheduled job "reminder-stretch" (not a message from the person): Remind the person to stretch.';
    expect(recogniseReminderRun(trigger)).toBe("stretch");
    expect(
      recogniseReminderRun('Scheduled job "digest" (not a message from the person): Summarise'),
    ).toBeUndefined();
  });
});

describe.each(DIALECTS)("steps over the %s dialect", (_name, body) => {
  const turn = (steps: Step[], tools?: string[]) => demoTurn(readConversation(body(steps, tools)));

  it("a reminder: cron_add, then a line saying when", () => {
    const ask = "<context>\nnow: Sunday\n</context>\n\nremind me in 2 minutes to stretch";
    expect(toolCall(turn([ask]))).toEqual({
      name: "cron_add",
      args: { name: "reminder-stretch", message: "Remind the person to stretch.", at: "in 2m" },
    });
    const added =
      'scheduled "reminder-stretch": at 2026-11-29T07:02:00.000Z; next run 2026-11-29T07:02:00.000Z; delivers to x';
    expect(textOf(turn([ask, { call: "cron_add", args: {}, result: added }]))).toBe(
      "Simulated reply (no model API key is configured): reminder set with cron_add — in 2 minutes (2026-11-29T07:02:00.000Z), to stretch.",
    );
  });

  it("a reminder whose name is taken tries -2, and a failure ends it with one line", () => {
    const ask = "remind me in 2 minutes to stretch";
    const taken = {
      call: "cron_add",
      args: {},
      result: 'name: a job named "x" already exists',
      isError: true,
    };
    expect(toolCall(turn([ask, taken]))?.args).toMatchObject({ name: "reminder-stretch-2" });
    expect(toolCall(turn([ask, taken, taken]))?.args).toMatchObject({ name: "reminder-stretch-3" });
    expect(textOf(turn([ask, taken, taken, taken]))).toMatch(
      /^Simulated reply .*: cron_add failed — .*already exists$/,
    );
    const bad = { call: "cron_add", args: {}, result: "at: in the past", isError: true };
    expect(textOf(turn([ask, bad]))).toMatch(/cron_add failed — .*at: in the past$/);
  });

  it("remember that …: memory_write to MEMORY.md, then a confirming line", () => {
    const ask = "remember that my cat is called Tom";
    expect(toolCall(turn([ask]))).toEqual({
      name: "memory_write",
      args: { target: "memory", text: "My cat is called Tom." },
    });
    const wrote = { call: "memory_write", args: {}, result: "appended 21 characters to MEMORY.md" };
    expect(textOf(turn([ask, wrote]))).toBe(
      'Simulated reply (no model API key is configured): noted in MEMORY.md with memory_write — "My cat is called Tom."',
    );
  });

  it("an assignment run: work item, the file, the item done, work_complete", () => {
    const ask = handoffText(
      assignmentFixture({ goal: "Write a two-line poem into poem.md" }),
      1,
      { sessionState: "", workingBuffer: "", notes: "" },
      [],
    );
    const steps: Step[] = [ask];
    const next = () => toolCall(turn(steps));
    expect(next()).toEqual({ name: "work_item_add", args: { title: "Write a two-line poem into poem.md" } });
    steps.push({ call: "work_item_add", args: {}, result: "work item #3 added: Write a two-line poem" });
    expect(next()).toEqual({
      name: "write_file",
      args: { path: "poem.md", content: "Simulated line 1 of 2.\nSimulated line 2 of 2.\n" },
    });
    steps.push({ call: "write_file", args: {}, result: "wrote 46 characters to poem.md (created)" });
    expect(next()).toEqual({
      name: "work_item_update",
      args: { id: 3, status: "done", notes: "wrote poem.md (simulated)" },
    });
    steps.push({ call: "work_item_update", args: {}, result: "work item #3 is done; 0 of 1 still open" });
    expect(next()?.name).toBe("work_complete");
    expect(next()?.args).toEqual({ summary: expect.stringMatching(/^Simulated reply .*wrote poem\.md/) });
    steps.push({ call: "work_complete", args: {}, result: "accepted: the assignment is done" });
    expect(textOf(turn(steps))).toMatch(/^Simulated reply .*: the assignment is done/);
  });

  it("calls only tools the request offers", () => {
    expect(textOf(turn(["remind me in 2 minutes"], ["memory_write"]))).toBe(
      "Simulated reply (no model API key is configured): the demo script would call cron_add here, but this request does not offer it.",
    );
  });

  it("anything else, and a new message after a demo, is not a demo step", () => {
    expect(turn(["hi"])).toBeUndefined();
    const wrote = { call: "memory_write", args: {}, result: "appended" };
    expect(turn(["remember that my cat is called Tom", wrote, "thanks"])).toBeUndefined();
  });
});

describe("defaultResponder", () => {
  const request = (body: unknown): SimulatedRequest => ({
    protocol: "openai",
    method: "POST",
    path: "/v1/chat/completions",
    headers: {},
    body,
    timeMs: 0,
  });

  it("follows the demo script, and echoes anything else", async () => {
    expect(toolCall(await defaultResponder(request(openaiBody(["remind me in 2 minutes"]))))?.name).toBe(
      "cron_add",
    );
    expect(await defaultResponder(request(openaiBody(["hi"])))).toEqual({
      text: 'Simulated reply (no model API key is configured): you said "hi".',
    });
  });
});
