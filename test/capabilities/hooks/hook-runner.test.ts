/**
 * The hook runner against real programs: tiny shell scripts written to a temp workspace, one per
 * exit-code path. Timeouts are short real ones (as in run-command.test.ts); waits on process
 * state poll with a bound.
 */
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  HOOK_OUTPUT_MAX_CHARS,
  type HookInput,
  HookRunner,
} from "../../../src/capabilities/hooks/hook-runner.js";
import { type HookEntry, type HookEvent, hookSettings } from "../../../src/capabilities/hooks/settings.js";
import { CommandRunner } from "../../../src/harness/tools/exec/command-runner.js";
import { pidGone } from "../../helpers/pid-gone.js";

let ws: string;
const seenPids: number[] = [];

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-hooks-")));
  await mkdir(path.join(ws, "hooks"));
});
afterEach(async () => {
  for (const pid of seenPids.splice(0)) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  await rm(ws, { recursive: true, force: true });
});

/** Writes an executable `hooks/<name>` with `body` under a /bin/sh shebang; returns its relative path. */
async function script(name: string, body: string): Promise<string> {
  const file = path.join(ws, "hooks", name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return `./hooks/${name}`;
}

/** A hook entry with the schema's defaults applied. */
function entry(command: string, more: Partial<HookEntry> = {}): HookEntry {
  const parsed = hookSettings.parse({ beforeToolCall: [{ command, ...more }] });
  const hook = parsed.beforeToolCall[0];
  if (!hook) throw new Error("no entry parsed");
  return hook;
}

function input(event: HookEvent, more: Partial<HookInput> = {}): HookInput {
  return {
    event,
    sessionKey: "http:dm:alice",
    channel: "http",
    senderId: "alice",
    trigger: "message",
    ...more,
  };
}

function runner(): HookRunner {
  return new HookRunner({
    workspaceDir: ws,
    env: process.env,
    killGraceMs: 200,
    commands: new CommandRunner(),
  });
}

async function pidFile(name: string): Promise<number> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const text = await readFile(path.join(ws, name), "utf8").catch(() => "");
    if (text.endsWith("\n")) {
      const pid = Number(text.trim());
      seenPids.push(pid);
      return pid;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${name}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("HookRunner", () => {
  it("exit 0 with no output allows silently (no note: zero tokens)", async () => {
    const verdict = await runner().run(entry(await script("ok.sh", "exit 0")), input("beforeToolCall"));
    expect(verdict).toEqual({ type: "allow", durationMs: expect.any(Number) });
    expect(verdict.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("exit 0 with stdout allows with the trimmed stdout as a note", async () => {
    const cmd = await script("lint.sh", "echo '  2 lint warnings in a.ts  '; echo");
    const verdict = await runner().run(entry(cmd), input("afterToolCall"));
    expect(verdict).toMatchObject({ type: "allow", note: "2 lint warnings in a.ts" });
  });

  it("exit 2 blocks with stderr as the reason, before and after", async () => {
    const cmd = await script("guard.sh", "echo ignored; echo 'you have not run the tests' >&2; exit 2");
    for (const event of ["beforeStop", "afterToolCall"] as const) {
      expect(await runner().run(entry(cmd), input(event))).toMatchObject({
        type: "block",
        reason: "you have not run the tests",
        failed: false,
      });
    }
    const silent = await script("silent.sh", "exit 2");
    expect(await runner().run(entry(silent), input("beforeToolCall"))).toMatchObject({
      type: "block",
      reason: "hook ./hooks/silent.sh blocked this (exit 2, no reason given)",
    });
  });

  it("any other exit fails closed before and open after, naming the hook and why", async () => {
    const cmd = await script("broken.sh", "echo 'line one' >&2; echo 'line two' >&2; exit 1");
    expect(await runner().run(entry(cmd), input("beforeToolCall"))).toMatchObject({
      type: "block",
      failed: true,
      reason: "hook ./hooks/broken.sh failed: exit 1: line one",
    });
    expect(await runner().run(entry(cmd), input("afterReply"))).toMatchObject({
      type: "ignored",
      reason: "hook ./hooks/broken.sh failed: exit 1: line one",
    });
  });

  it("a program that cannot start fails like any other failure", async () => {
    const missing = await runner().run(entry("./hooks/missing.sh"), input("beforeMessage"));
    expect(missing).toMatchObject({ type: "block", failed: true });
    if (missing.type === "block")
      expect(missing.reason).toMatch(/^hook \.\/hooks\/missing\.sh failed: exit 127: .*not found/);
    const gone = new HookRunner({ workspaceDir: path.join(ws, "nowhere"), env: process.env });
    expect(await gone.run(entry("true"), input("afterToolCall"))).toMatchObject({
      type: "ignored",
      reason: expect.stringMatching(/^hook true failed: the folder .*nowhere does not exist$/),
    });
  });

  it("a hook past its timeout is stopped with the children it forked, and fails closed", async () => {
    const cmd = await script("slow.sh", "echo $$ > slow.pid; sleep 600 & echo $! > child.pid; wait");
    const verdict = await runner().run(entry(cmd, { timeoutMs: 300 }), input("beforeToolCall"));
    expect(verdict).toMatchObject({
      type: "block",
      failed: true,
      reason: "hook ./hooks/slow.sh failed: timed out after 300 ms",
    });
    expect(verdict.durationMs).toBeGreaterThanOrEqual(300);
    expect(pidGone(await pidFile("slow.pid"))).toBe(true);
    expect(pidGone(await pidFile("child.pid"))).toBe(true);
  });

  it("cuts 10 MB of stdout and of stderr to 16 KB each", async () => {
    const cmd = await script("loud.sh", "yes out | head -c 10000000; yes err | head -c 10000000 >&2; exit 2");
    const verdict = await runner().run(entry(cmd, { timeoutMs: 60_000 }), input("beforeToolCall"));
    expect(verdict.type).toBe("block");
    if (verdict.type === "block") {
      expect(verdict.reason.length).toBeLessThanOrEqual(HOOK_OUTPUT_MAX_CHARS);
      expect(verdict.reason).toMatch(/^err\nerr\n[\s\S]*characters omitted/);
    }
    const note = await runner().run(
      entry(await script("chatty.sh", "yes out | head -c 10000000"), { timeoutMs: 60_000 }),
      input("afterToolCall"),
    );
    expect(
      note.type === "allow" && note.note !== undefined && note.note.length <= HOOK_OUTPUT_MAX_CHARS,
    ).toBe(true);
  });

  it("gets the input as one JSON object on stdin, intact, and its args as they are", async () => {
    const cmd = await script("echo-in.sh", 'cat > got.json; printf "%s\\n" "$@" > args.txt');
    const sent = input("beforeToolCall", {
      tool: { name: "exec", arguments: { command: "rm -rf 'x' \"$HOME\" ; é 日本" } },
      workItems: { done: 2, total: 5 },
    });
    const verdict = await runner().run(entry(cmd, { args: ["a b", "$HOME", "it's"] }), sent);
    expect(verdict).toMatchObject({ type: "allow" });
    expect(JSON.parse(await readFile(path.join(ws, "got.json"), "utf8"))).toEqual(sent);
    expect(await readFile(path.join(ws, "args.txt"), "utf8")).toBe("a b\n$HOME\nit's\n");
  });

  it("runs with the scrubbed environment of exec", async () => {
    const cmd = await script("env.sh", 'echo "token=${SWITCHYARD_TEST_TOKEN:-none}"');
    const hooks = new HookRunner({
      workspaceDir: ws,
      env: { ...process.env, SWITCHYARD_TEST_TOKEN: "s3cret" },
    });
    expect(await hooks.run(entry(cmd), input("afterToolCall"))).toMatchObject({ note: "token=none" });
  });

  it("beforeMessage: stdout {reply} answers instead of the model; invalid JSON allows, flagged", async () => {
    const reply = await script("screen.sh", `echo '{"reply": "We are closed today."}'`);
    expect(await runner().run(entry(reply), input("beforeMessage", { message: "hi" }))).toMatchObject({
      type: "reply",
      text: "We are closed today.",
    });
    const broken = await script("broken-json.sh", `echo '{"reply": '`);
    expect(await runner().run(entry(broken), input("beforeMessage"))).toEqual({
      type: "allow",
      invalidJson: '{"reply":',
      durationMs: expect.any(Number),
    });
    const noReply = await script("no-reply.sh", `echo '{"other": 1}'`);
    expect(await runner().run(entry(noReply), input("beforeMessage"))).toMatchObject({
      type: "allow",
      invalidJson: '{"other": 1}',
    });
    // The same output at another event is only a note.
    expect(await runner().run(entry(reply), input("afterToolCall"))).toMatchObject({
      type: "allow",
      note: '{"reply": "We are closed today."}',
    });
    const plain = await script("plain.sh", "echo 'screened: fine'");
    expect(await runner().run(entry(plain), input("beforeMessage"))).toMatchObject({
      note: "screened: fine",
    });
  });
});
