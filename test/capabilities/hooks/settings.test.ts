/**
 * The `hooks` settings fragment (defaults, what each event accepts) and the start-up check of
 * hook commands against a real temp workspace and PATH folder.
 */
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkHookCommands,
  DEFAULT_HOOK_TIMEOUT_MS,
  hookAppliesToTool,
  hookSettings,
} from "../../../src/capabilities/hooks/settings.js";

let tmp: string;
let ws: string;
let bin: string;

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-hook-settings-")));
  ws = path.join(tmp, "ws");
  bin = path.join(tmp, "bin");
  await mkdir(path.join(ws, "hooks"), { recursive: true });
  await mkdir(bin);
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function file(at: string, mode: number): Promise<void> {
  await writeFile(at, "#!/bin/sh\nexit 0\n");
  await chmod(at, mode);
}

describe("hookSettings", () => {
  it("defaults every event to no hooks, and YAML null to none", () => {
    const empty = {
      beforeMessage: [],
      beforeToolCall: [],
      afterToolCall: [],
      beforeStop: [],
      afterReply: [],
    };
    expect(hookSettings.parse(undefined)).toEqual(empty);
    expect(hookSettings.parse({ beforeStop: null })).toEqual(empty);
  });

  it("applies timeoutMs 5000, no args and async false; keeps tools", () => {
    const s = hookSettings.parse({
      beforeToolCall: [{ command: "./hooks/guard.py", tools: ["exec", "mcp:*", "group:fs-write"] }],
      afterReply: [{ command: "./hooks/audit.sh", async: true, timeoutMs: 2000 }],
    });
    expect(s.beforeToolCall[0]).toEqual({
      command: "./hooks/guard.py",
      args: [],
      timeoutMs: DEFAULT_HOOK_TIMEOUT_MS,
      tools: ["exec", "mcp:*", "group:fs-write"],
    });
    expect(s.afterReply[0]).toEqual({ command: "./hooks/audit.sh", args: [], timeoutMs: 2000, async: true });
  });

  it("refuses async outside afterReply, tools outside the tool events, unknown groups and bad timeouts", () => {
    const fails = (raw: unknown, pattern: RegExp) => {
      const r = hookSettings.safeParse(raw);
      expect(r.success).toBe(false);
      expect(JSON.stringify(r.error?.issues)).toMatch(pattern);
    };
    fails({ beforeToolCall: [{ command: "x", async: true }] }, /async/);
    fails({ beforeStop: [{ command: "x", tools: ["exec"] }] }, /tools/);
    fails({ beforeToolCall: [{ command: "x", tools: ["group:nope"] }] }, /unknown tool group \\"nope\\"/);
    fails({ beforeToolCall: [{ command: "x", timeoutMs: 0 }] }, /timeoutMs/);
    fails({ beforeToolCall: [{ command: "" }] }, /command/);
    fails({ onStart: [] }, /onStart/);
  });
});

describe("hookAppliesToTool", () => {
  it("matches names, group:<g> and mcp:*; no tools means every tool", () => {
    expect(hookAppliesToTool(undefined, "read_file", ["fs"])).toBe(true);
    expect(hookAppliesToTool(["exec"], "exec", ["exec"])).toBe(true);
    expect(hookAppliesToTool(["exec"], "write_file", ["fs", "fs-write"])).toBe(false);
    expect(hookAppliesToTool(["group:fs-write"], "write_file", ["fs", "fs-write"])).toBe(true);
    expect(hookAppliesToTool(["mcp:*"], "github__search", ["mcp:github"])).toBe(true);
    expect(hookAppliesToTool(["mcp:*"], "web_fetch", ["web"])).toBe(false);
    expect(hookAppliesToTool(["group:mcp:github"], "files__read", ["mcp:files"])).toBe(false);
  });
});

describe("checkHookCommands", () => {
  it("accepts an executable path relative to the workspace, an absolute one and a name on PATH", async () => {
    await file(path.join(ws, "hooks", "guard.sh"), 0o755);
    await file(path.join(bin, "audit-hook"), 0o755);
    const s = hookSettings.parse({
      beforeToolCall: [{ command: "./hooks/guard.sh" }, { command: "hooks/guard.sh" }],
      afterToolCall: [{ command: path.join(ws, "hooks", "guard.sh") }],
      afterReply: [{ command: "audit-hook" }],
    });
    expect(await checkHookCommands(s, ws, { PATH: `/nonexistent${path.delimiter}${bin}` })).toEqual([]);
  });

  it("names hooks.<event>[i].command for a missing, not executable, folder or not-on-PATH command", async () => {
    await file(path.join(ws, "hooks", "plain.sh"), 0o644);
    await file(path.join(ws, "hooks", "ok.sh"), 0o755);
    await file(path.join(bin, "not-exec-hook"), 0o644);
    const s = hookSettings.parse({
      beforeMessage: [{ command: "./hooks/ok.sh" }, { command: "./hooks/missing.sh" }],
      beforeToolCall: [{ command: "./hooks/plain.sh" }],
      beforeStop: [{ command: "./hooks" }],
      afterReply: [{ command: "not-exec-hook" }, { command: "no-such-hook" }],
    });
    expect(await checkHookCommands(s, ws, { PATH: bin })).toEqual([
      `hooks.beforeMessage[1].command: ./hooks/missing.sh (${ws}/hooks/missing.sh) does not exist`,
      `hooks.beforeToolCall[0].command: ./hooks/plain.sh (${ws}/hooks/plain.sh) is not executable (chmod +x it)`,
      `hooks.beforeStop[0].command: ./hooks (${ws}/hooks) is not a file`,
      "hooks.afterReply[0].command: not-exec-hook was not found on PATH",
      "hooks.afterReply[1].command: no-such-hook was not found on PATH",
    ]);
  });

  it("resolves relative paths against the workspace, not the current folder", async () => {
    await file(path.join(tmp, "outside.sh"), 0o755);
    const s = hookSettings.parse({ beforeStop: [{ command: "./outside.sh" }] });
    expect(await checkHookCommands(s, ws, {})).toEqual([
      `hooks.beforeStop[0].command: ./outside.sh (${ws}/outside.sh) does not exist`,
    ]);
    expect(await checkHookCommands(s, tmp, {})).toEqual([]);
  });
});
