/**
 * Helpers of an assignment's run, end to end over the fake Telegram Bot API: the run spawns two
 * helpers and sleeps for an hour; when both have ended, the assignment's next run is due at once
 * (not in an hour) and its context holds both results, claimed by the assignment's own runner.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import type { ModelSimulator, SimulatedRequest } from "../fakes/model-simulator.js";
import { AssignmentChat, call } from "../helpers/assignment-chat.js";
import { until } from "../helpers/until.js";

let chat = new AssignmentChat();
afterEach(async () => {
  await chat.close();
  chat = new AssignmentChat();
});

const textOf = (r: SimulatedRequest): string => JSON.stringify(r.body);
const isHelper = (r: SimulatedRequest): boolean => textOf(r).includes("You are a helper agent");

describe("helpers of an assignment", () => {
  it("wake the assignment's next run at once with their results", async () => {
    const clock = new ManualClock(Date.now());
    await chat.start(clock);
    const sim = chat.sim as ModelSimulator;
    let runs = 0;
    sim.setDefault((req) => {
      const body = textOf(req);
      if (isHelper(req)) return { text: body.includes("north") ? "north: 3 shops" : "south: 5 shops" };
      if (body.includes('"role":"tool"') || body.includes("tool_result")) return { text: "ok" };
      runs++;
      if (runs === 1)
        return {
          toolCalls: [
            call("spawn_agent", { task: "Count the shops in the north.", label: "north" }),
            call("spawn_agent", { task: "Count the shops in the south.", label: "south" }),
            call("end_run", { next: "sleep", sleepMinutes: 60, state: "waiting for the counts" }),
          ],
        };
      return { toolCalls: [call("end_run", { next: "sleep", sleepMinutes: 60, state: "have the counts" })] };
    });
    chat.say("/task Count the shops");
    await until(() => chat.texts().length > 0, "the /task reply");
    const id = /Task (t[0-9a-z]+) started/.exec(chat.texts()[0] ?? "")?.[1] ?? "";
    const store = chat.gw?.running.store;
    await until(async () => {
      const rows = await store?.subagents.listForParent(`agent:main:task:${id}`);
      return rows?.length === 2 && rows.every((c) => c.deliveredRunId !== null);
    }, "both results claimed by the assignment's runner");
    // The second run came without the clock moving an hour: the results woke it.
    await until(() => runs >= 2, "the assignment's second run");
    const second = sim.requests.filter((r) => !isHelper(r) && textOf(r).includes("[helper ")).at(0);
    expect(second && textOf(second)).toContain("north: 3 shops");
    expect(second && textOf(second)).toContain("south: 5 shops");
    await until(
      async () => ((await store?.assignments.get(id))?.checkpoint.runs ?? 0) >= 2,
      "run 2 recorded",
    );
  });
});
