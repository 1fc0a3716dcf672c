import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { modeCommands } from "../../../src/capabilities/modes/mode-commands.js";
import type { CommandFrom, ExtraCommand } from "../../../src/gateway/commands.js";
import { openSqliteStore } from "../../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../../src/store/types.js";
import { ManualClock } from "../../../src/util/clock.js";
import { assignmentFixture } from "../../helpers/assignment-fixture.js";

const ws = mkdtempSync(join(tmpdir(), "sy-mode-cmd-"));
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const DM = "agent:main:telegram:dm:42";
const GROUP = "agent:main:telegram:group:-100";
const dm: CommandFrom = {
  chat: { channel: "telegram", accountId: "default", chatId: "42" },
  senderId: "42",
  isDirect: true,
};
const group: CommandFrom = {
  chat: { channel: "telegram", accountId: "default", chatId: "-100" },
  senderId: "42",
  isDirect: false,
};

let store: Store;
let commands: Record<string, ExtraCommand>;
const run = (name: string, args: string, key: string, from: CommandFrom | undefined) =>
  (commands[name] as ExtraCommand).run(args, key, from);
const modeOf = async (key: string) => (await store.sessions.get(key))?.mode;

beforeEach(() => {
  store = openSqliteStore({ path: ":memory:" });
  const list = modeCommands({ store, agentId: "main", workspaceDir: ws, clock: new ManualClock(1_000) });
  commands = Object.fromEntries(list.map((c) => [c.name, c]));
});
afterEach(async () => {
  await store.close();
});

describe("/plan, /execute and /mode", () => {
  it("are three commands, lower-case", () => {
    expect(Object.keys(commands)).toEqual(["plan", "execute", "mode"]);
  });

  it("/plan in a direct chat starts plan mode (making the session), /mode shows it with the plan file", async () => {
    expect(await run("mode", "", DM, dm)).toBe("Mode: normal — /plan plans first.");
    expect(await run("plan", "", DM, dm)).toBe(
      "📝 Plan mode: I look around and write the plan into PLAN.md, changing nothing else; /execute when you approve it.",
    );
    expect(await modeOf(DM)).toBe("plan");
    expect(await run("plan", "", DM, dm)).toBe(
      "This chat is already in plan mode; the plan goes into PLAN.md.",
    );
    expect(await run("mode", "", DM, dm)).toBe(
      "Mode: plan — read-only tools; the plan goes into PLAN.md (in the workspace, not written yet); /execute follows it.",
    );
  });

  it("/execute leaves plan mode for execute; outside plan mode it answers in one line", async () => {
    expect(await run("execute", "", DM, dm)).toBe(
      "This chat is not in plan mode (it is normal): /plan starts planning.",
    );
    expect(await modeOf(DM)).toBeUndefined();
    await run("plan", "", DM, dm);
    writeFileSync(join(ws, "PLAN.md"), "1. do it\n");
    expect(await run("execute", "", DM, dm)).toBe(
      "▶️ Execute mode: I follow the plan in PLAN.md, with every tool again; /mode normal ends it.",
    );
    expect(await modeOf(DM)).toBe("execute");
    expect(await run("execute", "", DM, dm)).toBe("This chat is already in execute mode, following PLAN.md.");
    expect(await run("mode", "", DM, dm)).toBe(
      "Mode: execute — following the plan in PLAN.md (in the workspace); /mode normal ends it.",
    );
    expect(await run("mode", "normal", DM, dm)).toBe(
      "This chat is back in normal mode: every tool again, and the plan no longer rides in the context.",
    );
    expect(await modeOf(DM)).toBe("normal");
    expect(await run("mode", "normal", DM, dm)).toBe("This chat is already in normal mode.");
    expect(await run("mode", "plan", DM, dm)).toContain("Usage: /mode shows the mode");
  });

  it("refuses a mode change in a group (one line), but shows the mode there", async () => {
    for (const name of ["plan", "execute"]) {
      const answer = await run(name, "", GROUP, group);
      expect(answer).toBe(
        `Cannot use /${name} here: only a direct chat, or the owner of a task (/${name} <task id>), may change modes.`,
      );
    }
    expect(await run("mode", "normal", GROUP, group)).toContain("Cannot use /mode normal here");
    expect(await run("plan", "", GROUP, undefined)).toContain("Cannot use /plan here");
    expect(await modeOf(GROUP)).toBeUndefined();
    expect(await run("mode", "", GROUP, group)).toBe("Mode: normal — /plan plans first.");
  });

  it("lets a task's owner change its mode from the chat it was started in, in a group too", async () => {
    const a = assignmentFixture({ owner: group.chat, requestedBy: "42" });
    await store.assignments.create(a);
    expect(await run("plan", a.id, GROUP, group)).toBe(
      `📝 Task ${a.id} is in plan mode: its next run writes projects/${a.id}/PLAN.md and asks you to approve it; your yes switches it to execute.`,
    );
    expect(await modeOf(a.sessionKey)).toBe("plan");
    expect(await run("mode", a.id, GROUP, group)).toBe(
      `Mode of task ${a.id}: plan — read-only tools; the plan goes into projects/${a.id}/PLAN.md (in the workspace, not written yet); the owner's yes to it follows it.`,
    );
    expect(await run("execute", a.id, GROUP, group)).toContain(
      `▶️ Execute mode: task ${a.id} follows the plan`,
    );
    expect(await modeOf(a.sessionKey)).toBe("execute");
    // Someone else in that chat, another chat, an unknown id: refused, nothing changes.
    const bob = { ...group, senderId: "43" };
    const refusal = `Cannot do that: no task "${a.id}" of yours in this chat (/tasks lists them).`;
    expect(await run("plan", a.id, GROUP, bob)).toBe(refusal);
    expect(await run("plan", a.id, DM, dm)).toBe(refusal);
    expect(await run("mode", a.id, DM, dm)).toBe(refusal);
    expect(await run("plan", "tnope", GROUP, group)).toBe(
      'Cannot do that: no task "tnope" of yours in this chat (/tasks lists them).',
    );
    expect(await run("plan", "a b", GROUP, group)).toBe("Usage: /plan [task id] — one task id at most.");
    expect(await modeOf(a.sessionKey)).toBe("execute");
  });
});
