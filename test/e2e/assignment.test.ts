/**
 * Multi-day assignments end to end over the fake Telegram Bot API, on the gateway's manual
 * clock, with the simulator's script as the model: the agent starts one with task_start; five
 * work items over three runs joined by wakes, with a gateway restart between runs; done with
 * the contract met, the owner told of progress and the end; each run starts fresh from the
 * project files.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { ANN, AssignmentChat, call, done } from "../helpers/assignment-chat.js";
import { simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

let chat = new AssignmentChat();

afterEach(async () => {
  await chat.close();
  chat = new AssignmentChat();
});

describe("multi-day assignments", () => {
  it("five work items over three runs joined by wakes, a restart between runs: done, contract met, owner told", async () => {
    const clock = new ManualClock(Date.now());
    const gw = await chat.start(clock);
    const sim = chat.sim!;
    sim.script(
      // The chat turn: the agent sees a long request and starts an assignment.
      {
        toolCalls: [
          call("task_start", {
            goal: "Write a five-part report on tide pools",
            requiredFiles: ["projects/tides.md"],
          }),
        ],
      },
      { text: "That is a longer job: I started it as a task and will report here." },
      // Run 1: plan, do the first part, then sleep 30 minutes.
      { toolCalls: [1, 2, 3, 4, 5].map((n) => call("work_item_add", { title: `Part ${n}` })) },
      {
        toolCalls: [
          call("write_file", { path: "projects/tides.md", content: "# Tide pools\n\n## Part 1\n" }),
          done(1),
        ],
      },
      {
        toolCalls: [
          call("end_run", { next: "sleep", sleepMinutes: 30, state: "Part 1 written; next: parts 2 and 3." }),
        ],
      },
      // Run 2 (after the restart): two parts, then continue at once.
      { toolCalls: [done(2), done(3)] },
      { toolCalls: [call("end_run", { next: "continue", state: "Parts 1-3 done; next: 4 and 5." })] },
      // Run 3: the last two parts, then work_complete.
      { toolCalls: [done(4), done(5)] },
      { toolCalls: [call("work_complete", { summary: "The report is in projects/tides.md, five parts." })] },
    );
    chat.say("please write me a five-part report on tide pools");
    await until(() => chat.texts().length >= 2, "the answer and the first progress report");
    expect(chat.texts()[0]).toBe("That is a longer job: I started it as a task and will report here.");
    const store = gw.running.store;
    await until(
      async () => (await store.assignments.list("main"))[0]?.state === "sleeping",
      "run 1 to sleep",
    );
    const [a] = await store.assignments.list("main");
    if (!a) throw new Error("no assignment");
    expect(a).toMatchObject({
      owner: { channel: "telegram", chatId: String(ANN.id) },
      contract: [{ kind: "file_exists", path: "projects/tides.md" }],
      checkpoint: { runs: 1, lastDirective: { directive: "sleep" } },
    });
    expect(a.items.map((i) => i.status)).toEqual(["done", "open", "open", "open", "open"]);
    expect(chat.texts()[1]).toBe(`📋 Task ${a.id}: done "Part 1" — 1 of 5 work items finished.`);
    const ws = gw.running.workspaceDir;
    const dir = path.join(ws, "projects", a.id);
    expect(readFileSync(path.join(dir, "session-state.md"), "utf8")).toContain("next: parts 2 and 3");
    // The mirror files are written last at a run's end, after the state, the wake and the messages.
    await until(
      () => readFileSync(path.join(dir, "checkpoint.json"), "utf8").includes('"state": "sleeping"'),
      "checkpoint.json",
    );
    expect(readFileSync(path.join(dir, "PROGRESS.md"), "utf8")).toContain("[x] #1 Part 1");

    const home = gw.home;
    await gw.running.stop();
    // A crash in the middle of rewriting a mirror: the next start writes it again.
    writeFileSync(path.join(dir, "checkpoint.json"), '{"id": "torn');
    const second = await chat.start(clock, {}, home);
    await until(
      () => readFileSync(path.join(dir, "checkpoint.json"), "utf8").includes('"state": "sleeping"'),
      "checkpoint.json rewritten at start",
    );
    clock.advance(31 * 60_000);
    const store2 = second.running.store;
    await until(
      async () => (await store2.assignments.get(a.id))?.state === "done",
      "the assignment to finish",
      20_000,
    );
    const end = await store2.assignments.get(a.id);
    expect(end?.items.every((i) => i.status === "done")).toBe(true);
    expect(end?.checkpoint).toMatchObject({
      runs: 3,
      summary: "The report is in projects/tides.md, five parts.",
    });
    const runs = await store2.assignments.runs(a.id, 10);
    expect(runs.map((r) => r.directive)).toEqual(["done", "continue", "sleep"]);
    await until(() => chat.texts().some((t) => t.startsWith("✅")), "the end message");
    const finalText = chat.texts().find((t) => t.startsWith("✅")) ?? "";
    expect(finalText).toContain(`Task ${a.id} is done`);
    expect(finalText).toContain("projects/tides.md, five parts");
    expect(finalText).toContain(`projects/${a.id}/`);
    // Runs 2 and 3 start from the handoff, not from the transcript of run 1.
    const run2 = JSON.stringify(sim.requests.find((r) => JSON.stringify(r.body).includes("run 2 of"))?.body);
    expect(run2).toContain("Part 1 written; next: parts 2 and 3.");
    expect(run2).not.toContain("please write me a five-part report");
    expect(existsSync(path.join(ws, "projects", "tides.md"))).toBe(true);
    await chat.close();
    chat = new AssignmentChat();
    rmSync(home, { recursive: true, force: true });
  });

  it("over the HTTP API: /task starts one, and its reports reach the sender's mailbox", async () => {
    const sim = new ModelSimulator();
    await sim.start();
    const gw = await startTestGateway(simulatorConfig(sim, "anthropic"));
    try {
      sim.script(
        { toolCalls: [call("work_item_add", { title: "Say hello" }), done(1)] },
        { toolCalls: [call("work_complete", { summary: "Said hello." })] },
      );
      const res = await gw.chat("bob", "/task Say hello to the world");
      expect(res.body.replies?.[0]?.text).toMatch(/^🗂 Task t[0-9a-z]+ started: Say hello to the world/);
      const mailbox = async () => {
        const r = await fetch(`${gw.url}/v1/chat/replies?sender=bob&after=0`);
        return ((await r.json()) as { replies: Array<{ text: string }> }).replies.map((x) => x.text);
      };
      await until(async () => (await mailbox()).some((t) => t.startsWith("✅")), "the end in bob's mailbox");
      expect((await mailbox()).filter((t) => !t.startsWith("🗂"))).toEqual([
        expect.stringMatching(/^📋 Task t[0-9a-z]+: done "Say hello" — 1 of 1 work items finished\.$/),
        expect.stringMatching(/^✅ Task t[0-9a-z]+ is done: Say hello to the world\nSaid hello\./),
      ]);
    } finally {
      await gw.stop();
      await sim.close();
    }
  });

  it("a model that only talks (no work item, no work_complete, no file) ends stalled, and the owner is told so", async () => {
    const sim = new ModelSimulator();
    await sim.start();
    // Like the simulator's echo before it had a demo script: text, never a tool call.
    sim.setDefault(() => ({ text: "Roses are red, the sea is wide;\nthat is the poem." }));
    const gw = await startTestGateway(simulatorConfig(sim, "anthropic"));
    try {
      const res = await gw.chat("bob", "/task Write a two-line poem into poem.md");
      expect(res.body.replies?.[0]?.text).toMatch(/^🗂 Task t[0-9a-z]+ started/);
      const store = gw.running.store;
      const ended = async () => {
        const [a] = await store.assignments.list("main");
        return a && ["done", "stalled", "failed"].includes(a.state) ? a : undefined;
      };
      await until(async () => (await ended()) !== undefined, "the assignment to end");
      const a = await ended();
      expect(a).toMatchObject({ state: "stalled", items: [] });
      expect(a?.stateReason).toContain("no work_complete call and no contract to check; no work items");
      expect(existsSync(path.join(gw.running.workspaceDir, "poem.md"))).toBe(false);
      const mailbox = async () => {
        const r = await fetch(`${gw.url}/v1/chat/replies?sender=bob&after=0`);
        return ((await r.json()) as { replies: Array<{ text: string }> }).replies.map((x) => x.text);
      };
      await until(async () => (await mailbox()).some((t) => t.startsWith("⚠️")), "the end in bob's mailbox");
      const end = (await mailbox()).find((t) => t.startsWith("⚠️"));
      expect(end).toMatch(/^⚠️ Task t[0-9a-z]+ stopped \(stalled\): it stopped without finishing/);
      expect((await mailbox()).some((t) => t.startsWith("✅"))).toBe(false);
    } finally {
      await gw.stop();
      await sim.close();
    }
  });
});
