/**
 * Plan mode for assignments and in groups, end to end over the fake Telegram Bot API (an owner is
 * a person on a chat platform): `/task --plan` starts an assignment whose first run is in plan
 * mode — only read-only tools, write_file only to projects/<id>/PLAN.md — and asks for approval;
 * the owner's yes switches it to execute, so the resumed run has every tool and the plan in its
 * context. In a group, `/plan` is refused in one line: only direct chats and a task's owner may
 * change modes.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator, type SimulatedRequest } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { ANN, AssignmentChat, call } from "../helpers/assignment-chat.js";
import { simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

let chat = new AssignmentChat();
afterEach(async () => {
  await chat.close();
  chat = new AssignmentChat();
});

const PLAN = "1. Write out.md\n2. Finish\n";
const toolsOf = (r: SimulatedRequest | undefined): string[] =>
  ((r?.body as { tools?: Array<{ name: string }> } | undefined)?.tools ?? []).map((t) => t.name);
const lastUser = (r: SimulatedRequest | undefined): string =>
  JSON.stringify(
    (r?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages
      ?.filter((m) => m.role === "user")
      .at(-1) ?? "",
  );

describe("plan mode in an assignment", () => {
  it("/task --plan plans first; the owner's yes to request_approval switches it to execute", async () => {
    await chat.start(new ManualClock(Date.now()));
    const sim = chat.sim as ModelSimulator;
    let step = 0;
    // The assignment's id is known only once it started: each step reads it from the request.
    sim.setDefault((req) => {
      const id = /projects\/(t[0-9a-z]+)\//.exec(JSON.stringify(req.body))?.[1] ?? "unknown";
      step++;
      if (step === 1)
        return {
          toolCalls: [
            call("write_file", { path: "PLAN.md", content: "wrong place" }),
            call("work_item_add", { title: "Too early" }),
            call("write_file", { path: `projects/${id}/PLAN.md`, content: PLAN }),
            call("request_approval", { action: `Follow the plan in projects/${id}/PLAN.md` }),
          ],
        };
      if (step === 2)
        return {
          toolCalls: [
            call("write_file", { path: `projects/${id}/out.md`, content: "done" }),
            call("work_item_add", { title: "Write out.md" }),
            call("work_item_update", { id: 1, status: "done" }),
          ],
        };
      if (step === 3) return { toolCalls: [call("work_complete", { summary: "out.md is written." })] };
      return { text: "ok" };
    });
    chat.say("/task --plan Write out.md");
    await until(() => chat.texts().length > 0, "the /task reply");
    const reply = chat.texts()[0] ?? "";
    const id = /^🗂 Task (t[0-9a-z]+) started: Write out\.md\n/.exec(reply)?.[1] ?? "";
    expect(id).not.toBe("");
    expect(reply).toContain(`I write a plan first (projects/${id}/PLAN.md) and ask you to approve it`);
    const store = chat.gw?.running.store;
    const ws = chat.gw?.running.workspaceDir ?? "";
    const a = await store?.assignments.get(id);
    await until(async () => (await store?.assignments.get(id))?.state === "requires_action", "the approval");
    expect((await store?.sessions.get(a?.sessionKey ?? ""))?.mode).toBe("plan");

    // Run 1: plan mode. Offered read-only tools, write_file and request_approval; told where the plan goes.
    const first = sim.requests[0];
    expect(toolsOf(first)).toEqual(expect.arrayContaining(["read_file", "write_file", "request_approval"]));
    for (const hidden of ["work_item_add", "edit_file", "work_complete"])
      expect(toolsOf(first)).not.toContain(hidden);
    expect(lastUser(first)).toContain("# Mode: plan");
    expect(lastUser(first)).toContain(`Write the plan into projects/${id}/PLAN.md`);
    expect(readFileSync(join(ws, "projects", id, "PLAN.md"), "utf8")).toBe(PLAN);
    expect(existsSync(join(ws, "PLAN.md"))).toBe(false);
    expect((await store?.assignments.get(id))?.items).toEqual([]);
    await until(() => chat.texts().some((t) => t.startsWith("❓")), "the question");

    chat.say("yes, go ahead", ANN);
    await until(async () => (await store?.assignments.get(id))?.state === "done", "done");
    expect((await store?.sessions.get(a?.sessionKey ?? ""))?.mode).toBe("execute");
    // Run 1's refusals, as the resumed run's conversation holds them.
    const resumed = sim.requests[1];
    const seen = JSON.stringify(resumed?.body);
    expect(seen).toContain(
      `write_file to PLAN.md was not run — plan mode: only read-only tools and write_file to projects/${id}/PLAN.md; the owner approving the plan (request_approval) leaves plan mode`,
    );
    expect(seen).toContain("work_item_add was not run — plan mode");
    // Run 2: execute mode, every tool again, the plan in its context.
    expect(toolsOf(resumed)).toEqual(expect.arrayContaining(["work_item_add", "edit_file", "write_file"]));
    // The volatile part rides on the run's newest user message (the handoff), not on a tool result.
    expect(seen).toContain("# Mode: execute");
    expect(seen).toContain("1. Write out.md\\n2. Finish");
    expect(seen).not.toContain("# Mode: plan");
    expect(readFileSync(join(ws, "projects", id, "out.md"), "utf8")).toBe("done");
  });
});

describe("mode changes in a group", () => {
  it("/plan in a group is refused in one line; the mode stays normal", async () => {
    const TOKEN = "123456:AAtest-token-for-the-fake-bot-api-000";
    const GROUP = { id: -1001, type: "supergroup" as const, title: "Team" };
    const sim = new ModelSimulator();
    await sim.start();
    const tg = new FakeTelegramBotApi();
    await tg.start();
    tg.addBot({ token: TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" });
    const gw = await startTestGateway({
      ...simulatorConfig(sim, "anthropic"),
      heartbeat: { everyMs: 0 },
      channels: { telegram: { token: TOKEN, apiRoot: tg.apiRoot, allowFrom: [ANN.id], groups: [GROUP.id] } },
    });
    try {
      tg.pushMessage(TOKEN, { chat: GROUP, from: ANN, text: "/plan@switchyard_bot" });
      await until(() => tg.sentMessages({ chatId: GROUP.id }).length > 0, "the answer");
      expect(tg.sentMessages({ chatId: GROUP.id }).map((m) => m.text)).toEqual([
        "Cannot use /plan here: only a direct chat, or the owner of a task (/plan <task id>), may change modes.",
      ]);
      expect(sim.requests).toEqual([]);
      const sessions = await gw.running.store.sessions.list(10);
      for (const s of sessions)
        expect((await gw.running.store.sessions.get(s.sessionKey))?.mode).toBe("normal");
    } finally {
      await gw.stop();
      await tg.close();
      await sim.close();
    }
  });
});
