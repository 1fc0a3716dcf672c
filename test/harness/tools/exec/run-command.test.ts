/**
 * The command runner against real processes (/bin/sh, sleep, yes). Timeouts are short; waits on
 * process state poll with a bound instead of sleeping a fixed time.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CommandRunner } from "../../../../src/harness/tools/exec/command-runner.js";
import { ExecError } from "../../../../src/harness/tools/exec/exec-error.js";
import { runCommand } from "../../../../src/harness/tools/exec/run-command.js";
import type { RunCommandOptions } from "../../../../src/harness/tools/exec/types.js";
import { pidGone } from "../../../helpers/pid-gone.js";

let tmp: string;
let ws: string;
let outside: string;
/** Every pid a test read from a file; its group is killed in afterEach should a test fail halfway. */
const seenPids: number[] = [];

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-exec-")));
  ws = path.join(tmp, "ws");
  outside = path.join(tmp, "outside");
  await mkdir(ws);
  await mkdir(outside);
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
  await rm(tmp, { recursive: true, force: true });
});

function run(command: string, options: Partial<RunCommandOptions> = {}) {
  return runCommand({ command, workspaceDir: ws, timeoutMs: 10_000, killGraceMs: 200, ...options });
}

/** Polls `check` every 10 ms until it returns a value, failing after `limitMs`. */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>, limitMs = 5_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The pid a command wrote to `<ws>/<name>`, once the whole line is there. */
function pidFile(name: string): Promise<number> {
  return waitFor(`${name}`, async () => {
    const text = await readFile(path.join(ws, name), "utf8").catch(() => "");
    if (!text.endsWith("\n")) return undefined;
    const pid = Number(text.trim());
    seenPids.push(pid);
    return pid;
  });
}

/** A shell that records its pid and a forked child's pid, then waits on a sleep of its own. */
const forking = (tag: string): string =>
  `echo $$ > ${tag}-shell.pid; sleep 600 & echo $! > ${tag}-child.pid; sleep 600`;

describe("runCommand", () => {
  it("returns stdout, stderr, the exit code and the duration", async () => {
    const ok = await run("echo hello");
    expect(ok).toMatchObject({
      exitCode: 0,
      signal: null,
      timedOut: false,
      aborted: false,
      output: "hello\n",
    });
    expect(ok.truncatedChars).toBe(0);
    expect(ok.durationMs).toBeGreaterThanOrEqual(0);

    const failed = await run("echo out; echo err >&2; exit 3");
    expect(failed.exitCode).toBe(3);
    expect(failed.output).toContain("out\n");
    expect(failed.output).toContain("err\n");
    expect(failed.output.length).toBe("out\nerr\n".length);

    expect(await run("kill -USR1 $$")).toMatchObject({ exitCode: null, signal: "SIGUSR1", timedOut: false });
  });

  it("passes only PATH, HOME, LANG, TZ and passEnv names from the parent environment", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      ANTHROPIC_API_KEY: "sk-ant-api03-parentsecret",
      SLACK_BOT_TOKEN: "xoxb-parent-token",
      SWITCHYARD_TOKEN: "gateway-token",
      HOME: "/home/agent",
      LANG: "C.UTF-8",
      TZ: "Asia/Tokyo",
      MAKEFLAGS: "-j2",
      UNLISTED: "nope",
    });
    try {
      const { output } = await run("env", { passEnv: ["MAKEFLAGS"] });
      const names = output
        .trim()
        .split("\n")
        .map((line) => line.slice(0, line.indexOf("=")));
      // The shell adds PWD (and some shells SHLVL) by itself.
      expect(names.filter((n) => n !== "PWD" && n !== "SHLVL" && n !== "_").sort()).toEqual(
        ["HOME", "LANG", "MAKEFLAGS", "PATH", "TZ"].sort(),
      );
      expect(output).toContain(`PATH=${process.env.PATH}\n`);
      expect(output).toContain("HOME=/home/agent\n");
      expect(output).toContain("TZ=Asia/Tokyo\n");
      expect(output).toContain("MAKEFLAGS=-j2\n");
      for (const leak of ["parentsecret", "parent-token", "gateway-token", "nope", "ANTHROPIC", "SWITCHYARD"])
        expect(output).not.toContain(leak);
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });

  it("refuses a secret-looking passEnv name before running anything", async () => {
    const env = { PATH: process.env.PATH, GITHUB_TOKEN: "ghp_x" };
    for (const name of ["GITHUB_TOKEN", "OPENAI_API_KEY", "SWITCHYARD_HOME"]) {
      const err = await run("touch ran", { env, passEnv: [name] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ExecError);
      expect(err).toMatchObject({ kind: "env_name_secret", variable: name });
      expect((err as Error).message).toContain(name);
    }
    await expect(readFile(path.join(ws, "ran"))).rejects.toThrow(/ENOENT/);
  });

  it("runs in a folder of the workspace and refuses one outside it, also through a symlink", async () => {
    await mkdir(path.join(ws, "sub"));
    await symlink(path.join(ws, "sub"), path.join(ws, "inner-link"));
    await symlink(outside, path.join(ws, "escape"));
    expect((await run("pwd")).output).toBe(`${ws}\n`);
    expect((await run("pwd", { cwd: "sub" })).output).toBe(`${ws}/sub\n`);
    expect((await run("pwd", { cwd: "inner-link" })).output).toBe(`${ws}/sub\n`);
    expect((await run("pwd", { cwd: path.join(ws, "sub") })).output).toBe(`${ws}/sub\n`);

    for (const cwd of [outside, "../outside", "escape", "/"]) {
      const err = await run("touch ran", { cwd }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ExecError);
      expect(err).toMatchObject({ kind: "path_outside_workspace", path: cwd });
    }
    await expect(run("true", { cwd: "missing" })).rejects.toMatchObject({ kind: "cwd_not_found" });
    await expect(readFile(path.join(outside, "ran"))).rejects.toThrow(/ENOENT/);
  });

  it("kills the whole process group at the timeout, the forked child included", async () => {
    const result = await run(forking("t"), { timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, aborted: false, exitCode: null, signal: "SIGTERM" });
    expect(result.durationMs).toBeGreaterThanOrEqual(300);
    const shell = await pidFile("t-shell.pid");
    const child = await pidFile("t-child.pid");
    expect(pidGone(shell)).toBe(true);
    expect(pidGone(child)).toBe(true);
  });

  it("sends SIGKILL after the grace to a group that ignores SIGTERM", async () => {
    const result = await run(`trap '' TERM; ${forking("k")}`, { timeoutMs: 300, killGraceMs: 200 });
    expect(result).toMatchObject({ timedOut: true, signal: "SIGKILL" });
    expect(result.durationMs).toBeGreaterThanOrEqual(500);
    expect(pidGone(await pidFile("k-shell.pid"))).toBe(true);
    expect(pidGone(await pidFile("k-child.pid"))).toBe(true);
  });

  it("ends a background child left behind when the shell exits", async () => {
    const result = await run("sleep 600 & echo $! > bg.pid; echo done");
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, aborted: false, output: "done\n" });
    expect(pidGone(await pidFile("bg.pid"))).toBe(true);
  });

  it("stops the group when its signal aborts (as /stop will)", async () => {
    const controller = new AbortController();
    const running = run(forking("a"), { signal: controller.signal });
    const shell = await pidFile("a-shell.pid");
    const child = await pidFile("a-child.pid");
    expect(pidGone(shell) || pidGone(child)).toBe(false);
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ aborted: true, timedOut: false, signal: "SIGTERM" });
    expect(pidGone(shell)).toBe(true);
    expect(pidGone(child)).toBe(true);
  });

  it("does not start a command whose signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await run("touch ran", { signal: controller.signal });
    expect(result).toMatchObject({ aborted: true, exitCode: null, output: "" });
    await expect(readFile(path.join(ws, "ran"))).rejects.toThrow(/ENOENT/);
  });

  it("keeps the head and the tail of long output around a marker saying how much was cut", async () => {
    const result = await run("echo FIRST; yes middle | head -n 5000; echo LAST", { maxOutputChars: 1_000 });
    const total = "FIRST\n".length + 5000 * "middle\n".length + "LAST\n".length;
    expect(result.exitCode).toBe(0);
    expect(result.output.length).toBeLessThanOrEqual(1_000);
    expect(result.output.startsWith("FIRST\nmiddle\n")).toBe(true);
    expect(result.output.endsWith("middle\nLAST\n")).toBe(true);
    const marker = /\n\n\[… (\d+) characters omitted …\]\n\n/.exec(result.output);
    expect(Number(marker?.[1])).toBe(result.truncatedChars);
    expect(result.output.length - (marker?.[0].length ?? 0) + result.truncatedChars).toBe(total);
  });

  it("stays bounded on 50 MB of output", async () => {
    const result = await run("yes | head -c 50000000", { timeoutMs: 60_000 });
    expect(result.exitCode).toBe(0);
    expect(result.output.length).toBeLessThanOrEqual(16_000);
    const marker = /\n\n\[… (\d+) characters omitted …\]\n\n/.exec(result.output);
    expect(marker).not.toBeNull();
    expect(result.output.length - (marker?.[0].length ?? 0) + result.truncatedChars).toBe(50_000_000);
  });

  it("feeds stdin when given and keeps stdout and stderr apart with splitOutput", async () => {
    const input = `${JSON.stringify({ event: "beforeToolCall", text: "é ' \" \n" })}\n`;
    const result = await run("cat; echo oops >&2; exit 3", { stdin: input, splitOutput: true });
    expect(result.exitCode).toBe(3);
    expect(result.streams?.stdout).toEqual({ text: input, omittedChars: 0 });
    expect(result.streams?.stderr).toEqual({ text: "oops\n", omittedChars: 0 });
    expect(result.output).toContain("oops\n");
    // A command that never reads its stdin is no error; without the options nothing changes.
    expect(await run("echo x", { stdin: "y".repeat(1_000_000) })).toMatchObject({
      exitCode: 0,
      output: "x\n",
    });
    expect((await run("cat; echo done")).streams).toBeUndefined();
    expect((await run("cat; echo done")).output).toBe("done\n");
  });

  it("refuses out-of-range numbers naming the option", async () => {
    await expect(run("true", { maxOutputChars: 10 })).rejects.toThrow(
      /maxOutputChars must be an integer ≥ 200, got 10/,
    );
    await expect(run("true", { timeoutMs: 0 })).rejects.toThrow(/timeoutMs must be an integer ≥ 1, got 0/);
  });
});

describe("CommandRunner", () => {
  it("killAll stops every running command and their children", async () => {
    const runner = new CommandRunner();
    const options = { workspaceDir: ws, timeoutMs: 10_000, killGraceMs: 200 };
    const first = runner.run({ ...options, command: forking("one") });
    const second = runner.run({ ...options, command: forking("two") });
    const pids = await Promise.all(
      ["one-shell.pid", "one-child.pid", "two-shell.pid", "two-child.pid"].map(pidFile),
    );
    expect(runner.running).toBe(2);
    expect(pids.some(pidGone)).toBe(false);
    await runner.killAll();
    expect(runner.running).toBe(0);
    for (const result of await Promise.all([first, second]))
      expect(result).toMatchObject({ aborted: true, timedOut: false });
    for (const pid of pids) expect(pidGone(pid)).toBe(true);
    expect((await runner.run({ ...options, command: "echo after" })).output).toBe("after\n");
  });

  it("still stops a command when the caller's own signal aborts", async () => {
    const runner = new CommandRunner();
    const controller = new AbortController();
    const running = runner.run({ workspaceDir: ws, command: forking("s"), signal: controller.signal });
    const shell = await pidFile("s-shell.pid");
    const child = await pidFile("s-child.pid");
    controller.abort();
    expect(await running).toMatchObject({ aborted: true });
    expect(pidGone(shell)).toBe(true);
    expect(pidGone(child)).toBe(true);
    expect(runner.running).toBe(0);
  });
});
