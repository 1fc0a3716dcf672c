/**
 * Helpers of an assignment's run, end to end over the fake Telegram Bot API: the run spawns two
 * helpers and sleeps for an hour; when both have ended, the assignment's next run is due at once
 * (not in an hour) and its context holds both results, claimed by the assignment's own runner.
 * Their tokens count against the assignment's budget (once), and a run that calls wait_agents
 * sleeps until the results or the wait's deadline, then is told what still runs.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/types.js";
import { ManualClock } from "../../src/util/clock.js";
import type { ModelSimulator, SimulatedRequest } from "../fakes/model-simulator.js";
import { AssignmentChat, call } from "../helpers/assignment-chat.js";
import { until } from "../helpers/until.js";

let chat = new AssignmentChat();
/** Lets a helper held in a test go (so the gateway stops). */
let release = () => {};
afterEach(async () => {
  release();
  await chat.close();
  chat = new AssignmentChat();
});

const textOf = (r: SimulatedRequest): string => JSON.stringify(r.body);
const isHelper = (r: SimulatedRequest): boolean => textOf(r).includes("You are a helper agent");
/** Every call of the assignment's own runs uses 110 tokens, every helper's call 5,000. */
const OWN = { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 };
const HELPER = { inputTokens: 4_990, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** Starts a gateway whose assignment's first run spawns two helpers, then `later(run)` for the runs after. */
async function startSpawning(
  clock: ManualClock,
  later: (run: number) => ReturnType<typeof call>,
  extra: Record<string, unknown> = {},
): Promise<{ store: Store; id: string; ownRuns: () => number }> {
  await chat.start(clock, extra);
  const sim = chat.sim as ModelSimulator;
  let runs = 0;
  sim.setDefault((req) => {
    if (isHelper(req)) return { text: "counted", usage: HELPER };
    runs++;
    if (runs === 1)
      return {
        toolCalls: [
          call("spawn_agent", { task: "Count the shops in the north.", label: "north" }),
          call("spawn_agent", { task: "Count the shops in the south.", label: "south" }),
          call("end_run", { next: "sleep", sleepMinutes: 60, state: "waiting for the counts" }),
        ],
        usage: OWN,
      };
    return { toolCalls: [later(runs)], usage: OWN };
  });
  chat.say("/task Count the shops");
  await until(() => chat.texts().length > 0, "the /task reply");
  const id = /Task (t[0-9a-z]+) started/.exec(chat.texts()[0] ?? "")?.[1] ?? "";
  return { store: chat.gw?.running.store as Store, id, ownRuns: () => runs };
}

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

describe("an assignment's budget", () => {
  it("counts its helpers' tokens in its checkpoint, once", async () => {
    const clock = new ManualClock(Date.now());
    const { store, id } = await startSpawning(clock, (run) =>
      run === 2
        ? call("end_run", { next: "continue", state: "have the counts" })
        : call("end_run", { next: "sleep", sleepMinutes: 60, state: "resting" }),
    );
    await until(
      async () => ((await store.assignments.get(id))?.checkpoint.runs ?? 0) >= 3,
      "three runs recorded",
    );
    const a = await store.assignments.get(id);
    const own = (await store.assignments.runs(id, 10)).reduce((sum, r) => sum + r.tokens, 0);
    expect(own).toBe(3 * 110);
    // Counted at the end of the run that saw them, and not again at the next run's end.
    expect(a?.checkpoint.tokens).toBe(own + 2 * 5_000);
    expect(a?.checkpoint.helpers?.tokens).toBe(2 * 5_000);
  });

  it("stops the assignment when only its helpers' tokens push it over", async () => {
    const clock = new ManualClock(Date.now());
    const { store, id, ownRuns } = await startSpawning(
      clock,
      () => call("end_run", { next: "sleep", sleepMinutes: 60, state: "have the counts" }),
      { assignments: { maxTokens: 5_000 } },
    );
    await until(async () => (await store.assignments.get(id))?.state === "failed", "the assignment stopped");
    const a = await store.assignments.get(id);
    expect(ownRuns() * 110).toBeLessThan(5_000);
    expect(a?.stateReason).toMatch(/^over its token budget \(\d+ of 5000 tokens used\)$/);
    expect(a?.checkpoint.tokens).toBeGreaterThanOrEqual(2 * 5_000);
  });
});

describe("wait_agents in an assignment's run", () => {
  it("sleeps until the deadline (not before), then tells the run which helper still runs", async () => {
    const clock = new ManualClock(Date.now());
    await chat.start(clock);
    const sim = chat.sim as ModelSimulator;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // The wait (60 s) ends before the slow helper's model call would time out (120 s).
    sim.setDefault(async (req) => {
      const body = textOf(req);
      if (isHelper(req)) {
        if (body.includes("slow task")) await gate;
        return { text: body.includes("slow task") ? "slow one done" : "quick one done" };
      }
      if (body.includes("Started helper") && !body.includes("Waiting for"))
        return { toolCalls: [call("wait_agents", { timeoutSec: 60 })] };
      if (body.includes("Waiting for") || body.includes("[helper "))
        return { toolCalls: [call("end_run", { next: "sleep", sleepMinutes: 60, state: "have some" })] };
      return {
        toolCalls: [
          call("spawn_agent", { task: "The slow task.", label: "slow" }),
          call("spawn_agent", { task: "The quick task.", label: "quick" }),
        ],
      };
    });
    chat.say("/task Do two things");
    await until(() => chat.texts().length > 0, "the /task reply");
    const id = /Task (t[0-9a-z]+) started/.exec(chat.texts()[0] ?? "")?.[1] ?? "";
    const key = `agent:main:task:${id}`;
    const store = chat.gw?.running.store as Store;
    const helpers = () => store.subagents.listForParent(key);
    await until(
      async () => (await store.assignments.runs(id, 10)).some((r) => r.endedAt !== null),
      "run 1 ended",
    );
    await until(async () => (await helpers()).some((c) => c.state === "done"), "the quick helper done");
    const deadline = (await helpers()).find((c) => c.label === "slow")?.waitDeadline ?? 0;
    expect(deadline).toBe(clock.now() + 60_000);
    // Run 1 ended waiting: asleep until the deadline, the quick result alone wakes nothing.
    let a = await store.assignments.get(id);
    expect(a?.state).toBe("sleeping");
    expect(a?.stateReason).toBe("waiting for its helpers (wait_agents)");
    expect((await store.wakes.list(key)).map((w) => w.dueAt)).toEqual([deadline]);
    await clock.advanceAsync(59_000);
    expect(await store.assignments.runs(id, 10)).toHaveLength(1);
    // The deadline: run 2 reads the quick result and the timeout naming the slow helper.
    const before = sim.requests.length;
    await clock.advanceAsync(1_000);
    await until(async () => (await store.assignments.runs(id, 10)).length === 2, "run 2 at the deadline");
    await until(
      () => sim.requests.slice(before).some((q) => !isHelper(q) && textOf(q).includes("timed out")),
      "run 2's model call",
    );
    const second = sim.requests.slice(before).find((q) => !isHelper(q)) as SimulatedRequest;
    expect(textOf(second)).toMatch(/Still running: sub_\w+ \\"slow\\"/);
    expect(textOf(second)).toContain("quick one done");
    // The slow helper's end wakes run 3 at once (its run 2 slept an hour).
    release();
    await until(
      async () => (await store.assignments.runs(id, 10)).length === 3,
      "run 3 with the slow result",
    );
    await until(
      () => sim.requests.some((q) => !isHelper(q) && textOf(q).includes("slow one done")),
      "the slow result read",
    );
    a = await store.assignments.get(id);
    expect(a?.checkpoint.runs ?? 0).toBeGreaterThanOrEqual(2);
  });
});
