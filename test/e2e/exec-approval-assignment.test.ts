/**
 * `tools.exec.approval: ask` inside an assignment, end to end over the fake Telegram Bot API (an
 * owner is a person on a chat platform; HTTP API senders own no assignment): a flagged exec call
 * goes to the owner like request_approval, the run pauses, and the owner's answer decides it —
 * "yes" runs the exact command once when the run resumes, "no" runs nothing. The flagged command
 * deletes a folder outside the workspace (unsandboxed): whether it ran is whether it is gone.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Assignment } from "../../src/store/repos/assignment-repo.js";
import { ManualClock } from "../../src/util/clock.js";
import { ANN, AssignmentChat, call, done } from "../helpers/assignment-chat.js";
import { until } from "../helpers/until.js";

let chat = new AssignmentChat();
const made: string[] = [];
afterEach(async () => {
  await chat.close();
  chat = new AssignmentChat();
});
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const EXEC = { tools: { exec: { enabled: true, sandbox: "none", approval: "ask" } } };

const stateOf = async (id: string) => (await chat.gw?.running.store.assignments.get(id))?.state;

async function task(goal: string): Promise<Assignment> {
  const before = chat.texts().length;
  chat.say(`/task ${goal}`);
  await until(() => chat.texts().length > before, "the /task reply");
  const id = /^🗂 Task (t[0-9a-z]+) started: /.exec(chat.texts()[before] ?? "")?.[1];
  const a = id ? await chat.gw?.running.store.assignments.get(id) : undefined;
  if (!a) throw new Error(`no assignment: ${chat.texts()[before]}`);
  return a;
}

/** A folder outside the workspace, and the flagged command that deletes it. */
function victim(): { dir: string; command: string } {
  const dir = mkdtempSync("/var/tmp/switchyard-victim-");
  made.push(dir);
  return { dir, command: `/bin/rm -rf ${dir}` };
}

/** What the resumed run's first request showed as the paused exec call's result. */
function resumedResult(): string {
  const body = chat.sim?.requests[1]?.body as { messages: unknown[] };
  return JSON.stringify(body.messages.at(-1));
}

describe("exec approval by asking, in an assignment", () => {
  for (const [answer, runs] of [
    ["yes, go ahead", true],
    ["no, keep it", false],
  ] as const) {
    it(`a flagged command goes to the owner; "${answer}" ${runs ? "runs it once" : "runs nothing"}`, async () => {
      await chat.start(new ManualClock(Date.now()), EXEC);
      const v = victim();
      chat.sim?.script(
        { toolCalls: [call("exec", { command: v.command })] },
        { toolCalls: [call("work_item_add", { title: "Clean up" }), done(1)] },
        { toolCalls: [call("work_complete", { summary: "Cleaned up." })] },
      );
      const a = await task("Clean up the old folder");
      await until(async () => (await stateOf(a.id)) === "requires_action", "the pause");
      await until(() => chat.texts().some((t) => t.startsWith("❓")), "the question");
      // Telegram shows the backticks as code formatting.
      const question = chat.texts().find((t) => t.startsWith("❓")) ?? "";
      expect(question).toContain(
        `Approval needed: run ${v.command}? The command guard flagged it (rm-recursive-outside-workspace).`,
      );
      expect(question).toContain("Reply yes to run it once as it is, or no.");
      expect(existsSync(v.dir)).toBe(true);

      chat.say(answer, ANN);
      await until(async () => (await stateOf(a.id)) === "done", "done");
      expect(existsSync(v.dir)).toBe(!runs);
      const shown = resumedResult();
      expect(shown).toContain(`The owner answered: ${answer}`);
      expect(shown).toContain(
        runs
          ? `The owner approved it, and \`${v.command}\` ran once. Its result:`
          : `The owner did not approve it: \`${v.command}\` did not run.`,
      );
    });
  }
});
