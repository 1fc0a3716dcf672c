/**
 * `switchyard sessions`: the list (most recent first, running or idle, cut at 200) and one
 * session's transcript, read from the database while another connection holds it open (as a
 * running gateway does) and with a real gateway running.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { appendLeased } from "../contract/store/fixtures.js";
import { spawnGateway } from "../helpers/gateway-process.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const DM = "agent:main:telegram:dm:42";
const MIN = 60_000;

function open(home: string): Store {
  return openSqliteStore({ path: join(home, "switchyard.db") });
}

/** A Telegram DM with a finished turn (tool call and result) 5 minutes ago, a heartbeat 3 hours ago, and a turn running now. */
async function seed(store: Store, now: number): Promise<void> {
  await store.sessions.ensure(DM, "ses-1", { channel: "telegram", accountId: "default", chatId: "42" }, now);
  await appendLeased(
    store,
    DM,
    "ses-1",
    "run-1",
    [
      { type: "user", inboxId: 9_001, text: "what is in notes.md?\nthanks", senderName: "Ann" },
      {
        type: "assistant",
        text: "",
        toolCalls: [
          {
            id: "c1",
            name: "read_file",
            argumentsJson: `{\n  "path": "notes.md",\n  "pad": "${"x".repeat(300)}"\n}`,
          },
        ],
      },
      {
        type: "tool_result",
        toolCallId: "c1",
        name: "read_file",
        content: `first\nsecond ${"y".repeat(400)}`,
        isError: false,
      },
      { type: "tool_result", toolCallId: "c2", name: "exec", content: "exit 1: not found", isError: true },
      { type: "assistant", text: "It lists two things.", toolCalls: [] },
      { type: "notice", text: "could not send the typing indicator" },
    ],
    now - 5 * MIN,
  );
  await store.sessions.ensure("agent:main:heartbeat", "ses-h", null, now);
  await appendLeased(
    store,
    "agent:main:heartbeat",
    "ses-h",
    "run-h",
    [
      { type: "trigger", origin: "heartbeat", text: "Read HEARTBEAT.md and follow it." },
      { type: "assistant", text: "HEARTBEAT_OK", toolCalls: [] },
    ],
    now - 180 * MIN,
  );
  const busy = "agent:main:main";
  await store.sessions.ensure(busy, "ses-m", null, now);
  const { record } = await store.inbox.receive(
    {
      channel: "console",
      accountId: "default",
      chatId: "local",
      senderId: "me",
      senderName: "Me",
      isDirect: true,
      mentionsBot: true,
      text: "long job",
      attachments: [],
      platformMessageId: "pm-1",
      receivedAt: now - 2 * MIN,
    },
    busy,
    now - 2 * MIN,
  );
  await store.inbox.markQueued(record.id, now - 2 * MIN);
  const lease = await store.leases.acquireSession(busy, "gw_cli_test", now - MIN, 10 * MIN);
  if (!lease) throw new Error("no lease");
  await store.inbox.claim(
    busy,
    "ses-m",
    "run-m",
    { all: false, lease: { owner: "gw_cli_test", fence: lease.fence } },
    now - MIN,
  );
}

describe("switchyard sessions", () => {
  it("lists sessions most recent first, with channel, age, message count and state, while the database is open elsewhere", async () => {
    const home = tempDir();
    const store = open(home);
    try {
      await seed(store, Date.now());
      const r = await runCli(["sessions", "--home", home]);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const lines = r.out.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^KEY\s+CHANNEL\s+LAST ACTIVITY\s+MESSAGES\s+STATE$/);
      expect(lines[1]).toMatch(
        /^agent:main:main\s+main\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \((1|2) min ago\)\s+1\s+running$/,
      );
      expect(lines[2]).toMatch(/^agent:main:telegram:dm:42\s+telegram\s+.*\((5|6) min ago\)\s+3\s+idle$/);
      expect(lines[3]).toMatch(/^agent:main:heartbeat\s+heartbeat\s+.*\(3 h ago\)\s+1\s+idle$/);
      expect(r.out).not.toContain("most recent of");

      const json = await runCli(["sessions", "list", "--json", "--home", home]);
      expect(json.code).toBe(0);
      const body = JSON.parse(json.out) as {
        sessions: Array<{ sessionKey: string; channel: string; messages: number; running: boolean }>;
        truncated: boolean;
      };
      expect(body.truncated).toBe(false);
      expect(body.sessions.map((s) => [s.sessionKey, s.channel, s.messages, s.running])).toEqual([
        ["agent:main:main", "main", 1, true],
        [DM, "telegram", 3, false],
        ["agent:main:heartbeat", "heartbeat", 1, false],
      ]);
    } finally {
      await store.close();
    }
  });

  it("says when the list is cut at 200", async () => {
    const home = tempDir();
    const store = open(home);
    const now = Date.now();
    for (let i = 0; i < 201; i++)
      await store.sessions.ensure(`agent:main:http:dm:u${i}`, `ses-${i}`, null, now + i);
    await store.close();
    const r = await runCli(["sessions", "--home", home]);
    expect(r.code).toBe(0);
    expect(r.out.split("\n").filter((l) => l.startsWith("agent:"))).toHaveLength(200);
    expect(r.out).toContain("(the 200 most recent of 201 sessions)");
    expect(r.out).toMatch(/^agent:main:http:dm:u200\s/m);
    expect(r.out).not.toMatch(/^agent:main:http:dm:u0\s/m);
  });

  it("shows a helper's session under its parent's, indented, with its label and state (and a grandchild under it)", async () => {
    const home = tempDir();
    const store = open(home);
    const now = Date.now();
    try {
      await seed(store, now);
      const spawn = async (parent: string, label: string, depth: number, at: number) => {
        const outcome = await store.subagents.spawn(
          {
            id: `sa-${label}`,
            parentSessionKey: parent,
            parentRunId: "run-1",
            childKeyPrefix: "agent:main:sub:",
            depth,
            label,
            task: "look it up",
            context: "",
            tools: [],
            model: null,
            origin: { target: null, privateChat: true, groupChat: false },
          },
          { maxActive: 8, maxPerRun: 20 },
          at,
        );
        if (outcome.status !== "spawned") throw new Error(outcome.status);
        // A helper's session is newer than its parent's: only the tree puts it under it.
        await store.sessions.ensure(outcome.child.childSessionKey, `ses-${label}`, null, now);
        return outcome.child;
      };
      const one = await spawn(DM, "vendors-1", 1, now - 3 * MIN);
      const two = await spawn(DM, "vendors-2", 1, now - 2 * MIN);
      await store.subagents.start(two.id, "run-2", now - MIN);
      const grand = await spawn(one.childSessionKey, "deep", 2, now - MIN);
      const r = await runCli(["sessions", "--home", home]);
      expect(r.code).toBe(0);
      const keys = r.out
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((l) => l.split(/(?<=\S)\s{2,}/)[0]);
      expect(keys).toEqual([
        "agent:main:main",
        DM,
        `└ vendors-1 (queued) ${one.childSessionKey}`,
        `  └ deep (queued) ${grand.childSessionKey}`,
        `└ vendors-2 (running) ${two.childSessionKey}`,
        "agent:main:heartbeat",
        "transcript of one: switchyard sessions show <key> [--last N]",
      ]);
      const json = await runCli(["sessions", "list", "--json", "--home", home]);
      const body = JSON.parse(json.out) as {
        sessions: Array<{
          sessionKey: string;
          subagent?: { label: string; state: string; parentSessionKey: string };
        }>;
      };
      expect(body.sessions.find((s) => s.sessionKey === two.childSessionKey)?.subagent).toMatchObject({
        label: "vendors-2",
        state: "running",
        parentSessionKey: DM,
      });
    } finally {
      await store.close();
    }
  });

  it("shows a transcript oldest first: messages, tool calls and results cut to one line, notices and triggers labeled", async () => {
    const home = tempDir();
    const store = open(home);
    await seed(store, Date.now());
    await store.close();
    const r = await runCli(["sessions", "show", DM, "--home", home]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const t = String.raw`\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]`;
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toBe(`session ${DM} (id ses-1): 6 events`);
    expect(lines[1]).toMatch(new RegExp(`^${t} user \\(Ann\\): what is in notes\\.md\\?$`));
    expect(lines[2]).toBe("  thanks");
    expect(lines[3]).toMatch(new RegExp(`^${t} → tool read_file\\(\\{"path":"notes\\.md","pad":"x+…\\)$`));
    expect(lines[4]).toMatch(new RegExp(`^${t} ← result read_file: first second y+…$`));
    expect(lines[5]).toMatch(new RegExp(`^${t} ← error exec: exit 1: not found$`));
    expect(lines[6]).toMatch(new RegExp(`^${t} assistant: It lists two things\\.$`));
    expect(lines[7]).toMatch(new RegExp(`^${t} notice: could not send the typing indicator$`));
    expect(lines).toHaveLength(8);
    // "about 120" and "about 200" characters: cut, on one line.
    expect((lines[3] ?? "").length).toBeLessThan(180);
    expect((lines[4] ?? "").length).toBeLessThan(260);

    const heartbeat = await runCli(["sessions", "show", "agent:main:heartbeat", "--home", home]);
    expect(heartbeat.out).toMatch(
      new RegExp(`${t} heartbeat trigger: Read HEARTBEAT\\.md and follow it\\.\\n`),
    );

    const last = await runCli(["sessions", "show", DM, "--last", "2", "--home", home]);
    expect(last.code).toBe(0);
    expect(last.out).toContain(
      `session ${DM} (id ses-1): 2 events; older events not shown (--last N for more)`,
    );
    expect(last.out).toMatch(/assistant: It lists two things\.\n.*notice: could not send/);
    expect(last.out).not.toContain("user (Ann)");

    const json = await runCli(["sessions", "show", DM, "--json", "--home", home]);
    const body = JSON.parse(json.out) as { sessionId: string; events: Array<{ payload: { type: string } }> };
    expect(body.sessionId).toBe("ses-1");
    expect(body.events.map((e) => e.payload.type)).toEqual([
      "user",
      "assistant",
      "tool_result",
      "tool_result",
      "assistant",
      "notice",
    ]);
  }, 120_000);

  it("an unknown key, a missing key and a missing database get plain answers", async () => {
    const home = tempDir();
    const store = open(home);
    await seed(store, Date.now());
    await store.close();
    const unknown = await runCli(["sessions", "show", "agent:main:nope", "--home", home]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('no session "agent:main:nope"');
    expect(unknown.err).toContain("switchyard sessions list");
    const missing = await runCli(["sessions", "show", "--home", home]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("usage: switchyard sessions show <key>");
    const badLast = await runCli(["sessions", "show", DM, "--last", "0", "--home", home]);
    expect(badLast.code).toBe(2);
    expect(badLast.err).toContain('--last: found "0", expected a whole number of at least 1');

    const empty = tempDir();
    const none = await runCli(["sessions", "--home", empty]);
    expect(none.code).toBe(0);
    expect(none.out).toContain(`no sessions yet: no database at ${join(empty, "switchyard.db")}`);
    const noneShow = await runCli(["sessions", "show", DM, "--home", empty]);
    expect(noneShow.code).toBe(2);
  }, 120_000);

  it("reads what a running gateway wrote", async () => {
    const home = tempDir();
    const gw = await spawnGateway(["--home", home, "--port", "0"]);
    try {
      const res = await fetch(`${gw.url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sender: "ann", text: "hello there" }),
      });
      expect(res.status).toBe(200);
      const r = await runCli(["sessions", "--home", home]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^agent:main:http:dm:ann\s+http\s+.*\(just now\)\s+2\s+idle$/m);
      const show = await runCli(["sessions", "show", "agent:main:http:dm:ann", "--home", home]);
      expect(show.out).toMatch(/user \(ann\): hello there\n.*assistant: \S/);
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });
});
