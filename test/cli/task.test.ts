/**
 * `switchyard task`: add (with a chat and a contract), list, show, cancel and answer against the
 * database in a home folder; every bad input is one line naming the field, exit 2, nothing
 * stored; a new assignment and an answered one each have a wake queued in their session.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Assignment } from "../../src/store/repos/assignment-repo.js";
import type { Store } from "../../src/store/types.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

/** A home and a config with a Telegram bot, so `telegram:default:…` is a known target. */
function setup(extraYaml = ""): { cwd: string; home: string } {
  const cwd = tempDir();
  writeFileSync(
    join(cwd, "switchyard.yaml"),
    `channels:\n  telegram:\n    token: "123456:AAexample-token-for-the-task-test-00"\n${extraYaml}`,
  );
  return { cwd, home: join(cwd, "home") };
}

const task = (s: { cwd: string; home: string }, ...args: string[]) =>
  runCli(["task", ...args, "--home", s.home], { cwd: s.cwd });

async function withStore<T>(home: string, use: (store: Store) => Promise<T>): Promise<T> {
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

const all = (home: string): Promise<Assignment[]> => withStore(home, (s) => s.assignments.list("main"));

/** Adds an assignment without a chat; returns its id. */
async function addOne(s: { cwd: string; home: string }, goal: string): Promise<string> {
  const r = await task(s, "add", goal);
  expect([r.code, r.err]).toEqual([0, ""]);
  const id = /^started assignment (t[a-z0-9]+):/m.exec(r.out)?.[1];
  expect(id).toBeDefined();
  return id as string;
}

describe("switchyard task", () => {
  it("adds an assignment with a chat and a contract; list and show print it; a wake is queued", async () => {
    const s = setup();
    const add = await task(
      s,
      "add",
      "Compare three fish markets and write a report",
      "--deliver",
      "telegram:default:123456",
      "--require-file",
      "out/report.md",
      "--require-match",
      "out/report.md=~^# Fish markets",
      "--max-runs",
      "7",
    );
    expect(add.err).toBe("");
    expect(add.code).toBe(0);
    const id = /^started assignment (t[a-z0-9]+): Compare three fish markets and write a report$/m.exec(
      add.out,
    )?.[1] as string;
    expect(id).toMatch(/^t[a-z0-9]+$/);
    expect(add.out).toContain("owner: telegram:default:123456");
    expect(add.out).toContain(`follow it with: switchyard task show ${id}`);
    expect(add.out).toMatch(/starts it within a few seconds/);

    const [a] = await all(s.home);
    expect(a).toMatchObject({
      id,
      state: "active",
      owner: { channel: "telegram", accountId: "default", chatId: "123456" },
      contract: [
        { kind: "file_exists", path: "out/report.md" },
        { kind: "file_contains", path: "out/report.md", pattern: "^# Fish markets" },
      ],
    });
    expect(a?.limits.maxRuns).toBe(7);
    expect(a?.limits.maxTurnsPerRun).toBe(40);
    const wakes = await withStore(s.home, (st) => st.wakes.list(a?.sessionKey ?? ""));
    expect(wakes).toHaveLength(1);
    expect(wakes[0]?.target).toEqual({ channel: "telegram", accountId: "default", chatId: "123456" });

    const list = await task(s, "list");
    expect(list.out).toMatch(/^ID +STATE +ITEMS +RUNS +GOAL$/m);
    expect(list.out).toMatch(new RegExp(`^${id} +active +0/0 +0 +Compare three fish markets`, "m"));

    const show = await task(s, "show", id);
    expect(show.code).toBe(0);
    expect(show.out).toContain(`assignment ${id}: active`);
    expect(show.out).toContain("goal: Compare three fish markets and write a report");
    expect(show.out).toContain("owner: telegram:default:123456");
    expect(show.out).toContain("file out/report.md exists");
    expect(show.out).toContain("file out/report.md contains /^# Fish markets/");
    expect(show.out).toContain("totals: 0/7 runs, 0 turns, 0 tokens, $0.0000");
    expect(show.out).toContain(`next wake: ${new Date(wakes[0]?.dueAt ?? 0).toISOString()}`);
    expect(show.out).toContain(`project folder: ${join(s.home, "workspace", "projects", id)}/`);

    const json = JSON.parse((await task(s, "show", id, "--json")).out);
    expect(json.assignment.id).toBe(id);
    expect(json.nextWake).toBe(new Date(wakes[0]?.dueAt ?? 0).toISOString());
  });

  it("shows items, the question, the last runs and the totals", async () => {
    const s = setup();
    const id = await addOne(s, "Tidy the notes");
    const now = Date.now();
    await withStore(s.home, async (st) => {
      await st.assignments.startRun({
        assignmentId: id,
        runNo: 1,
        runId: "run-1",
        startedAt: now,
        turns: 0,
        tokens: 0,
        costUsd: 0,
      });
      const a = (await st.assignments.get(id)) as Assignment;
      await st.assignments.finishRun(
        {
          assignmentId: id,
          runNo: 1,
          log: {
            endedAt: now + 1_000,
            directive: "pause",
            reason: "asked the owner",
            turns: 3,
            tokens: 1_234,
            costUsd: 0.01,
          },
          state: "requires_action",
          reason: "asked: which folder?",
          from: ["active"],
          work: {
            items: [{ id: 1, title: "Read the notes", status: "done", notes: "12 files", updatedAt: now }],
            checkpoint: { ...a.checkpoint, runs: 1, turns: 3, tokens: 1_234, costUsd: 0.01 },
            question: question("Which folder?", now),
          },
        },
        now,
      );
    });
    const show = await task(s, "show", id);
    expect(show.out).toContain(`assignment ${id}: requires_action (asked: which folder?)`);
    expect(show.out).toContain("#1 [done] Read the notes — 12 files");
    expect(show.out).toContain("): Which folder?");
    expect(show.out).toContain(`answer with: switchyard task answer ${id} "<text>"`);
    expect(show.out).toMatch(/#1 {2}\S+Z {2}pause — asked the owner {2}\(3 turns, 1,234 tokens\)/);
    expect(show.out).toContain("totals: 1/100 runs, 3 turns, 1,234 tokens, $0.0100");
    expect((await task(s, "list")).out).toMatch(
      new RegExp(`^${id} +requires_action +1/1 +1 +Tidy the notes$`, "m"),
    );
  });

  it("without --deliver it has no owner and says no messages are sent", async () => {
    const s = setup();
    const r = await task(s, "add", "Sort", "the", "photos", "--json");
    expect(r.code).toBe(0);
    const a = JSON.parse(r.out) as Assignment;
    expect(a.goal).toBe("Sort the photos");
    expect(a.owner).toBeNull();
    const text = await task(s, "add", "Sort the music");
    expect(text.out).toMatch(/owner: none: no messages are sent/);
    const wakes = await withStore(s.home, (st) => st.wakes.list(a.sessionKey));
    expect(wakes.map((w) => w.target)).toEqual([null]);
  });

  it("--plan starts the assignment's session in plan mode, before its first run; without it, no session", async () => {
    const s = setup();
    const r = await task(s, "add", "Plan", "the", "move", "--plan");
    expect([r.code, r.err]).toEqual([0, ""]);
    const id = /^started assignment (t[a-z0-9]+):/m.exec(r.out)?.[1] ?? "";
    expect(r.out).toContain(
      `  plan mode: it writes projects/${id}/PLAN.md and asks for approval before it changes anything\n`,
    );
    const [a] = await all(s.home);
    expect(a?.goal).toBe("Plan the move");
    expect(await withStore(s.home, async (st) => (await st.sessions.get(a?.sessionKey ?? ""))?.mode)).toBe(
      "plan",
    );
    const plain = await addOne(s, "Just do it");
    const b = (await all(s.home)).find((x) => x.id === plain);
    expect(await withStore(s.home, (st) => st.sessions.get(b?.sessionKey ?? ""))).toBeUndefined();
  });

  it("names the field of every bad input, exits 2 and stores nothing", async () => {
    const s = setup();
    const bad: Array<[string[], RegExp]> = [
      [["add", ""], /^switchyard task: goal: expected a goal, got an empty one$/],
      [["add"], /^switchyard task: goal: expected a goal, got an empty one$/],
      [
        ["add", "x".repeat(100_000)],
        /^switchyard task: goal: 100000 characters is too long \(at most 4000\)/,
      ],
      [
        ["add", "g", "--require-match", "out.md=~(unclosed"],
        /^switchyard task: contract\.0\.pattern: not a valid regular expression/,
      ],
      [
        ["add", "g", "--require-match", "out.md"],
        /^switchyard task: require-match: "out\.md" is not PATH=~REGEX$/,
      ],
      [
        ["add", "g", "--require-file", "../outside.md"],
        /^switchyard task: contract\.0\.path: "\.\.\/outside\.md" is outside the workspace$/,
      ],
      [
        ["add", "g", "--require-file", "a.md", "--require-command", "make test"],
        /^switchyard task: contract\.1\.command: command checks are off/,
      ],
      [
        ["add", "g", "--deliver", "discord:default:1"],
        /^switchyard task: deliver: unknown delivery target "discord:default:1": no channel discord:default is configured/,
      ],
      [["add", "g", "--deliver", "telegram"], /^switchyard task: deliver: "telegram" is not a target/],
      [["add", "g", "--deliver", "last"], /^switchyard task: deliver: "last" is not a chat/],
      [
        ["add", "g", "--max-runs", "0"],
        /^switchyard task: max-runs: found "0", expected a whole number of at least 1$/,
      ],
      [["add", "g", "--max-runs", "2.5"], /^switchyard task: max-runs: found "2\.5"/],
      [["show", "tnothere"], /^switchyard task: id: no assignment "tnothere" \(see task list\)$/],
      [["cancel", "tnothere"], /^switchyard task: id: no assignment "tnothere"/],
      [["answer", "tnothere", "yes"], /^switchyard task: id: no assignment "tnothere"/],
      [["show"], /^switchyard task: show needs an assignment id/],
    ];
    // The database exists first, so the runs that open it do not race to create it.
    await withStore(s.home, async () => {});
    // Four processes at a time: sixteen at once starved a loaded 2-core machine past the timeout.
    const results: Awaited<ReturnType<typeof task>>[] = [];
    for (let i = 0; i < bad.length; i += 4)
      results.push(...(await Promise.all(bad.slice(i, i + 4).map(([args]) => task(s, ...args)))));
    results.forEach((r, i) => {
      const [args, expected] = bad[i] as [string[], RegExp];
      const what = args.join(" ").slice(0, 80);
      expect(r.code, what).toBe(2);
      expect(r.err.endsWith("\n") && r.err.trim().split("\n").length, what).toBe(1);
      expect(r.err.trim(), what).toMatch(expected);
      expect(r.out, what).toBe("");
    });
    expect(await all(s.home)).toEqual([]);
  }, 120_000);

  it("takes command checks when the config allows them", async () => {
    const s = setup("assignments:\n  commandChecks: true\n");
    const r = await task(s, "add", "Make the tests pass", "--require-command", "npm test", "--json");
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as Assignment).contract).toEqual([{ kind: "command", command: "npm test" }]);
  });

  it("cancels an assignment: its wakes go, list hides it, a second cancel is refused", async () => {
    const s = setup();
    const id = await addOne(s, "Water the plants");
    const keep = await addOne(s, "Feed the cat");
    const cancel = await task(s, "cancel", id);
    expect([cancel.code, cancel.out]).toEqual([0, `cancelled ${id}\n`]);
    const [a] = (await all(s.home)).filter((x) => x.id === id);
    expect(a?.state).toBe("cancelled");
    expect(await withStore(s.home, (st) => st.wakes.list(a?.sessionKey ?? ""))).toEqual([]);
    const list = await task(s, "list");
    expect(list.out).toContain(keep);
    expect(list.out).not.toContain(id);
    expect((await task(s, "list", "--all")).out).toMatch(new RegExp(`^${id} +cancelled`, "m"));
    const again = await task(s, "cancel", id);
    expect([again.code, again.err]).toEqual([2, `switchyard task: assignment ${id} is already cancelled\n`]);
  });

  it("answers an assignment waiting on a question, and refuses one that is not waiting", async () => {
    const s = setup();
    const id = await addOne(s, "Plan the trip");
    const notWaiting = await task(s, "answer", id, "Lisbon");
    expect(notWaiting.code).toBe(2);
    expect(notWaiting.err).toBe(
      `switchyard task: assignment ${id} is not waiting for an answer (it is active; nothing was asked)\n`,
    );
    const sessionKey = await withStore(s.home, async (st) => {
      const a = (await st.assignments.get(id)) as Assignment;
      // The run that asked consumed the start wake; now nothing is queued.
      for (const w of await st.wakes.list(a.sessionKey)) await st.wakes.cancel(w.id, a.sessionKey);
      const now = Date.now();
      await st.assignments.setState(id, "requires_action", "asked: where to?", now, {
        work: { question: question("Where to?", now) },
      });
      return a.sessionKey;
    });
    const empty = await task(s, "answer", id, "   ");
    expect([empty.code, empty.err]).toEqual([2, "switchyard task: answer: expected some text, got none\n"]);
    const answer = await task(s, "answer", id, "Lisbon, in May");
    expect(answer.err).toBe("");
    expect(answer.code).toBe(0);
    expect(answer.out).toMatch(/answer passed on .*resumes it within a few seconds/);
    const a = await withStore(s.home, (st) => st.assignments.get(id));
    expect(a?.state).toBe("active");
    expect(a?.question?.answer).toBe("Lisbon, in May");
    expect(await withStore(s.home, (st) => st.wakes.list(sessionKey))).toHaveLength(1);
    const twice = await task(s, "answer", id, "Porto");
    expect(twice.code).toBe(2);
  });

  it("prints its usage for help, and for no action with exit 2", async () => {
    const s = setup();
    const help = await task(s, "help");
    expect([help.code, help.out]).toEqual([0, expect.stringMatching(/^usage: switchyard task <action>/)]);
    expect((await task(s)).code).toBe(2);
    const unknown = await task(s, "frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^switchyard task: unknown action "frobnicate"/);
  });
});

function question(text: string, now: number) {
  return {
    tool: "ask_owner",
    toolCallId: "call-1",
    sessionId: "ses-1",
    text,
    askedAt: now,
    remindAt: now + 3_600_000,
    expiresAt: now + 86_400_000,
    reminded: false,
  };
}
