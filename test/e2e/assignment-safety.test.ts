/**
 * Assignments where things go wrong, end to end over the fake Telegram Bot API: a run resumed
 * with the owner's answer that fails keeps the answer for the next run; an agent that only
 * reads and rewrites the same state is stopped as stalled; a chat sees and cancels only its own
 * assignments.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Assignment } from "../../src/store/repos/assignment-repo.js";
import { ManualClock } from "../../src/util/clock.js";
import { ANN, AssignmentChat, BOB, call, done } from "../helpers/assignment-chat.js";
import { until } from "../helpers/until.js";

let chat = new AssignmentChat();

afterEach(async () => {
  await chat.close();
  chat = new AssignmentChat();
});

const store = () => {
  if (!chat.gw) throw new Error("not started");
  return chat.gw.running.store;
};
const stateOf = async (id: string) => (await store().assignments.get(id))?.state;

/** `/task <goal>` as `who`; the assignment it started. */
async function task(goal: string, who = ANN): Promise<Assignment> {
  const before = chat.texts(who).length;
  chat.say(`/task ${goal}`, who);
  await until(() => chat.texts(who).length > before, "the /task reply");
  const id = /^🗂 Task (t[0-9a-z]+) started: /.exec(chat.texts(who)[before] ?? "")?.[1];
  const a = id ? await store().assignments.get(id) : undefined;
  if (!a) throw new Error(`no assignment: ${chat.texts(who)[before]}`);
  return a;
}

describe("assignments when things go wrong", () => {
  it("a resumed run that fails keeps the owner's answer, and the next run resumes with it", async () => {
    const clock = new ManualClock(Date.now());
    await chat.start(clock);
    chat.sim?.script(
      { toolCalls: [call("ask_owner", { question: "Which colour?" })] },
      { error: { status: 400, message: "bad request" } },
      { toolCalls: [call("work_item_add", { title: "Paint it" }), done(1)] },
      { toolCalls: [call("work_complete", { summary: "Painted." })] },
    );
    const a = await task("Paint the shed");
    await until(async () => (await stateOf(a.id)) === "requires_action", "the question");
    chat.say("BLUE-42");
    await until(async () => (await stateOf(a.id)) === "sleeping", "the failed run's retry wait");
    expect((await store().assignments.get(a.id))?.question).toMatchObject({ answer: "BLUE-42" });
    clock.advance(5 * 60_000 + 1);
    await chat.gw?.running.cron?.tick();
    await until(async () => (await stateOf(a.id)) === "done", "done");
    expect(JSON.stringify(chat.sim?.requests[2]?.body)).toContain("The owner answered: BLUE-42");
    expect((await store().assignments.get(a.id))?.checkpoint.lastAnswer).toEqual({
      question: "Which colour?",
      answer: "BLUE-42",
    });
  });

  it("an agent that only reads and rewrites the same state is stopped as stalled", async () => {
    await chat.start(new ManualClock(Date.now()));
    const idle = (id: string) => ({
      toolCalls: [
        call("read_file", { path: `projects/${id}/PROGRESS.md` }),
        call("end_run", { next: "continue", state: "Still looking." }),
      ],
    });
    chat.sim?.script({ toolCalls: [call("work_item_add", { title: "Look" })] }, { text: "stop" });
    const a = await task("Look around");
    // Run 1 adds an item (progress); then every run reads and writes the same state.
    chat.sim?.script(...Array.from({ length: 8 }, () => idle(a.id)));
    await until(async () => (await stateOf(a.id)) === "stalled", "stalled", 20_000);
    const end = await store().assignments.get(a.id);
    expect(end?.stateReason).toMatch(/^no progress in 3 runs in a row/);
    expect(end?.checkpoint.runs).toBeLessThanOrEqual(6);
  });

  it("a chat sees and cancels only its own assignments", async () => {
    await chat.start(new ManualClock(Date.now()));
    chat.sim?.script({ toolCalls: [call("ask_owner", { question: "Which client?" })] });
    const a = await task("Write the ACME memo");
    await until(async () => (await stateOf(a.id)) === "requires_action", "the question");
    chat.say("/tasks", BOB);
    await until(() => chat.texts(BOB).length === 1, "Bob's /tasks");
    expect(chat.texts(BOB)[0]).toBe("No tasks running in this chat. /task <goal> starts one.");
    chat.say(`/task cancel ${a.id}`, BOB);
    await until(() => chat.texts(BOB).length === 2, "Bob's cancel");
    expect(chat.texts(BOB)[1]).toMatch(/^Cannot do that: id: no assignment ".+" started in this chat/);
    chat.say("/task cancel", ANN);
    await until(() => chat.texts(ANN).some((t) => t.startsWith("Cannot do that: id: expected")), "usage");
    expect(await stateOf(a.id)).toBe("requires_action");
    chat.say("/tasks", ANN);
    await until(() => chat.texts(ANN).some((t) => t.startsWith("Tasks:")), "Ann's /tasks");
    expect(chat.texts(ANN).find((t) => t.startsWith("Tasks:"))).toContain(`${a.id} — requires_action`);
  });
});
