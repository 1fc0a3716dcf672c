/**
 * How an assignment's loop is controlled, end to end over the fake Telegram Bot API with the
 * simulator's script as the model: a stop without work_complete gets a continuation prompt; a
 * work_complete with an item open is refused naming it; a model repeating one call is warned,
 * then stopped as stalled and the owner told; ask_owner pauses (with a reminder) until the
 * owner's reply resumes it, or the question expires and it goes on; a learning seen in 3 assignments lands in MEMORY.md; a person's
 * message during a running assignment is answered first.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CONTINUATION_PROMPT } from "../../src/harness/assignments/live-run.js";
import type { Assignment } from "../../src/store/repos/assignment-repo.js";
import { ManualClock } from "../../src/util/clock.js";
import { AssignmentChat, call, done } from "../helpers/assignment-chat.js";
import { until, untilAdvancing } from "../helpers/until.js";

let chat = new AssignmentChat();

afterEach(async () => {
  await chat.close();
  chat = new AssignmentChat();
});

/** Starts the gateway, sends `/task <goal>`, and returns the new assignment once it is stored. */
async function task(goal: string, clock = new ManualClock(Date.now())): Promise<Assignment> {
  if (!chat.gw) await chat.start(clock);
  const before = chat.texts().length;
  chat.say(`/task ${goal}`);
  await until(() => chat.texts().length > before, "the /task reply");
  const id = /^🗂 Task (t[0-9a-z]+) started: /.exec(chat.texts()[before] ?? "")?.[1];
  const a = id ? await store().assignments.get(id) : undefined;
  if (!a) throw new Error(`no assignment stored: ${chat.texts()[before]}`);
  return a;
}

const store = () => {
  if (!chat.gw) throw new Error("not started");
  return chat.gw.running.store;
};
const stateOf = async (id: string) => (await store().assignments.get(id))?.state;
const body = (i: number) => JSON.stringify(chat.sim?.requests[i]?.body ?? null);

describe("assignment loop control", () => {
  it("a model that stops early gets a continuation prompt, and finishes", async () => {
    await chat.start(new ManualClock(Date.now()));
    chat.sim?.script(
      { toolCalls: [call("work_item_add", { title: "Draft the plan" })] },
      { text: "I think that is all for now." },
      { toolCalls: [done(1)] },
      { toolCalls: [call("work_complete", { summary: "Plan drafted." })] },
    );
    const a = await task("Draft a plan");
    await until(async () => (await stateOf(a.id)) === "done", "done");
    expect(body(2)).toContain(CONTINUATION_PROMPT);
    expect(body(2)).toContain('Open work items: #1 \\"Draft the plan\\" (open)');
    expect(chat.sim?.requests).toHaveLength(4);
  });

  it("work_complete with an item open is refused and told which", async () => {
    await chat.start(new ManualClock(Date.now()));
    chat.sim?.script(
      {
        toolCalls: [
          call("work_item_add", { title: "Buy paint" }),
          call("work_item_add", { title: "Paint the fence" }),
        ],
      },
      { toolCalls: [done(1), call("work_complete", { summary: "Done." })] },
      { toolCalls: [done(2), call("work_complete", { summary: "Fence painted." })] },
    );
    const a = await task("Paint the fence");
    await until(async () => (await stateOf(a.id)) === "done", "done");
    expect(body(2)).toContain(
      'refused: not every work item is finished — open: #2 \\"Paint the fence\\" (open)',
    );
    expect((await store().assignments.get(a.id))?.checkpoint.summary).toBe("Fence painted.");
  });

  it("a model repeating one call is warned, then stopped as stalled, and the owner is told", async () => {
    await chat.start(new ManualClock(Date.now()));
    const loop = { toolCalls: [call("read_file", { path: "missing.md" })] };
    chat.sim?.script(...Array.from({ length: 12 }, () => loop));
    const a = await task("Find the missing file");
    await until(async () => (await stateOf(a.id)) === "stalled", "stalled");
    expect(body(5)).toContain("[loop warning: you called read_file with these arguments 5 times");
    expect(chat.sim?.requests).toHaveLength(10);
    await until(() => chat.texts().some((t) => t.startsWith("⚠️")), "the owner told");
    expect(chat.texts().filter((t) => t.startsWith("⚠️"))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^⚠️ Task ${a.id} stopped \\(stalled\\): it was going round in circles: called read_file 10 times`,
        ),
      ),
    ]);
    expect(await store().wakes.list(a.sessionKey)).toEqual([]);
  });

  it("ask_owner pauses the assignment, reminds once, and the owner's reply resumes it as the tool's result", async () => {
    const clock = new ManualClock(Date.now());
    await chat.start(clock);
    chat.sim?.script(
      { toolCalls: [call("ask_owner", { question: "Which colour?", options: ["red", "blue"] })] },
      { toolCalls: [call("work_item_add", { title: "Paint it blue" }), done(1)] },
      { toolCalls: [call("work_complete", { summary: "Painted blue." })] },
    );
    const a = await task("Paint the shed");
    await until(async () => (await stateOf(a.id)) === "requires_action", "the pause");
    await until(() => chat.texts().some((t) => t.startsWith("❓")), "the question");
    expect(chat.texts().at(-1)).toBe(
      `❓ Task ${a.id} needs you: Which colour?\nOptions: red / blue\n(Your next message here is the answer; or: switchyard task answer ${a.id} "…")`,
    );
    // Half the expiry (24 h) later: one reminder.
    clock.advance(12 * 3_600_000 + 1);
    await chat.gw?.running.cron?.tick();
    await until(() => chat.texts().some((t) => t.startsWith("🔔 Reminder")), "the reminder");
    expect(chat.sim?.requests).toHaveLength(1);
    chat.say("blue, please");
    await until(async () => (await stateOf(a.id)) === "done", "done");
    expect(chat.texts()).toContain(`↪️ Passed to task ${a.id}; it goes on now.`);
    // The answer is the ask_owner call's result, in the same session.
    const resumed = chat.sim?.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(resumed.messages.at(-1))).toContain("The owner answered: blue, please");
    expect(JSON.stringify(resumed.messages)).toContain("Which colour?");
  });

  it("an unanswered question expires after its reminder, and the run goes on without an answer", async () => {
    const clock = new ManualClock(Date.now());
    await chat.start(clock);
    chat.sim?.script(
      { toolCalls: [call("request_approval", { action: "Order 40 litres of paint" })] },
      { toolCalls: [call("work_item_add", { title: "Use the paint we have" }), done(1)] },
      { toolCalls: [call("work_complete", { summary: "Used what we had." })] },
    );
    const a = await task("Paint the barn");
    await until(() => chat.texts().some((t) => t.startsWith("❓")), "the question");
    for (const [hours, what] of [
      [12, "🔔 Reminder"],
      [12, "⌛ Task"],
    ] as const) {
      clock.advance(hours * 3_600_000 + 1);
      await chat.gw?.running.cron?.tick();
      await until(() => chat.texts().some((t) => t.startsWith(what)), what);
    }
    await until(async () => (await stateOf(a.id)) === "done", "done");
    expect(JSON.stringify(chat.sim?.requests[1]?.body)).toContain("No answer from the owner within 24 h");
  });

  it("a learning seen in 3 assignments lands in MEMORY.md", async () => {
    await chat.start(new ManualClock(Date.now()));
    const phrasings = ["Tide tables are in UTC.", "tide tables are in  UTC", "Tide tables are in UTC!"];
    for (const [i, text] of phrasings.entries()) {
      chat.sim?.script(
        { toolCalls: [call("learn", { text }), call("work_item_add", { title: `Check ${i}` }), done(1)] },
        { toolCalls: [call("work_complete", { summary: "Checked." })] },
      );
      const a = await task(`Check the tides, day ${i + 1}`);
      await until(
        () => chat.texts().some((t) => t.startsWith(`✅ Task ${a.id}`)),
        `assignment ${i + 1} done`,
      );
      const memory = readFileSync(path.join(chat.gw?.running.workspaceDir ?? "", "MEMORY.md"), "utf8");
      expect(memory.includes("## Learned")).toBe(i === 2);
    }
    const memory = readFileSync(path.join(chat.gw?.running.workspaceDir ?? "", "MEMORY.md"), "utf8");
    expect(memory).toMatch(/## Learned\n\n- Tide tables are in UTC\.\n/);
    expect(memory.match(/Tide tables/gi)).toHaveLength(1);
    expect(await store().learnings.list("main")).toMatchObject([
      { state: "promoted", sources: [expect.any(String), expect.any(String), expect.any(String)] },
    ]);
  });

  it("a person's message during a running assignment is answered first", async () => {
    const clock = new ManualClock(Date.now());
    await chat.start(clock);
    chat.sim?.script({ hang: true }, { text: "Hello Ann!" });
    const a = await task("Read every tide table");
    await until(() => chat.sim?.requests.length === 1, "the assignment's model call");
    chat.say("hi there");
    await until(() => chat.texts().includes("Hello Ann!"), "Ann's answer");
    // The assignment's run is still in flight: Ann did not wait behind it.
    const now = await store().assignments.get(a.id);
    expect(now).toMatchObject({ state: "active", checkpoint: { runs: 0 } });
    expect((await store().assignments.runs(a.id, 1))[0]).toMatchObject({ runNo: 1, endedAt: null });
    // Shutdown drains on the manual clock, then aborts the hanging run.
    let stopped = false;
    const stopping = chat.gw?.stop().then(() => {
      stopped = true;
    });
    await untilAdvancing(clock, () => stopped, "shutdown");
    await stopping;
    chat.gw = undefined;
  });
});
