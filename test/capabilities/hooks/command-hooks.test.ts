/**
 * CommandHooks' rules with a scripted runner (the runner's own exit-code rules are
 * hook-runner.test.ts's): which entries run for which call and trigger, what each verdict turns
 * into, the once-only rules (invalid JSON logged once, a broken beforeStop hook skipped after one
 * continuation), the detached afterReply runs waiting for the commit, and what is recorded.
 */
import { describe, expect, it } from "vitest";
import { CommandHooks, groupsOf } from "../../../src/capabilities/hooks/command-hooks.js";
import type { HookOutcome } from "../../../src/capabilities/hooks/hook-outcomes.js";
import type { HookInput, HookVerdict } from "../../../src/capabilities/hooks/hook-runner.js";
import { type HookEntry, type HookEvent, hookSettings } from "../../../src/capabilities/hooks/settings.js";
import type { HookTurn } from "../../../src/harness/hooks.js";
import type { ToolCall } from "../../../src/harness/providers/types.js";
import { silentLogger } from "../../../src/util/logger.js";

type Verdicts = Record<string, HookVerdict | ((input: HookInput) => HookVerdict)>;

/** CommandHooks over `raw` settings whose runner answers by command from `verdicts` (default allow). */
function setup(raw: Record<string, unknown>, verdicts: Verdicts = {}) {
  const runs: Array<{ command: string; input: HookInput }> = [];
  const recorded: Array<{ event: HookEvent; key: string; outcome: HookOutcome }> = [];
  const warnings: string[] = [];
  const logger = silentLogger();
  logger.warn = ((_obj: unknown, msg?: string) => {
    warnings.push(msg ?? "");
  }) as typeof logger.warn;
  const hooks = new CommandHooks({
    settings: hookSettings.parse(raw),
    runner: {
      async run(hook: HookEntry, input: HookInput) {
        runs.push({ command: hook.command, input });
        const v = verdicts[hook.command] ?? { type: "allow", durationMs: 1 };
        return typeof v === "function" ? v(input) : v;
      },
    },
    outcomes: { record: (event, key, outcome) => recorded.push({ event, key, outcome }) },
    messagesOf: async () => ["hello there"],
    workItemsOf: (runId) => (runId === "run-a" ? { done: 1, total: 3 } : undefined),
    logger,
    now: () => 42,
  });
  return { hooks, runs, recorded, warnings };
}

function turn(over: Partial<HookTurn> = {}): HookTurn {
  return {
    sessionKey: "s1",
    sessionId: "ses1",
    runId: "run-1",
    trigger: "message",
    signal: new AbortController().signal,
    replyTarget: { channel: "http", accountId: "a", chatId: "c" },
    asker: { privateChat: true, senderId: "ana" },
    ...over,
  };
}

const call = (name: string, args: unknown = {}): ToolCall => ({
  id: "c1",
  name,
  argumentsJson: JSON.stringify(args),
});
const block = (reason: string, failed = false): HookVerdict => ({
  type: "block",
  reason,
  failed,
  durationMs: 2,
});
const note = (text: string): HookVerdict => ({ type: "allow", note: text, durationMs: 2 });

describe("CommandHooks", () => {
  it("adds no hook at all without entries, and only the events configured", () => {
    expect(setup({}).hooks.any).toBe(false);
    expect(Object.keys(setup({}).hooks.hooks())).toEqual([]);
    const only = setup({ beforeStop: [{ command: "a" }] }).hooks.hooks();
    expect(Object.keys(only)).toEqual(["beforeStop"]);
  });

  it("beforeToolCall: runs the entries whose tools match, in order; exit 2 refuses with the stderr", async () => {
    const { hooks, runs, recorded } = setup(
      {
        beforeToolCall: [
          { command: "web-only", tools: ["group:web"] },
          { command: "mcp-any", tools: ["mcp:*"] },
          { command: "all" },
        ],
      },
      { all: block("not today") },
    );
    const h = hooks.hooks();
    expect(await h.beforeToolCall?.(call("gh__run", { command: "ls" }), turn({ runId: "run-a" }))).toEqual({
      block: "not today",
    });
    expect(runs.map((r) => r.command)).toEqual(["mcp-any", "all"]);
    expect(runs[0]?.input).toEqual({
      event: "beforeToolCall",
      sessionKey: "s1",
      channel: "http",
      senderId: "ana",
      trigger: "message",
      workItems: { done: 1, total: 3 },
      tool: { name: "gh__run", arguments: { command: "ls" } },
    });
    expect(recorded.map((r) => [r.key, r.outcome.verdict])).toEqual([
      ["beforeToolCall[1]", "allow"],
      ["beforeToolCall[2]", "block"],
    ]);
  });

  it("beforeToolCall: a failure refuses (recorded failed); a note rides on that call's result", async () => {
    const failing = setup(
      { beforeToolCall: [{ command: "x" }] },
      { x: block("hook x failed: exit 1", true) },
    );
    expect(await failing.hooks.hooks().beforeToolCall?.(call("read_file"), turn())).toEqual({
      block: "hook x failed: exit 1",
    });
    expect(failing.recorded[0]?.outcome).toMatchObject({
      verdict: "failed",
      reason: "hook x failed: exit 1",
      at: 42,
    });

    const noted = setup({ beforeToolCall: [{ command: "n" }] }, { n: note("remember the style guide") });
    const h = noted.hooks.hooks();
    const c = call("write_file");
    expect(await h.beforeToolCall?.(c, turn())).toBeUndefined();
    const out = await h.afterToolCall?.(c, { content: "wrote 5 bytes", isError: false }, turn());
    expect(out).toEqual({ content: "wrote 5 bytes\n\n[hook n] remember the style guide", isError: false });
    // Once: another call does not carry it.
    expect(
      (await h.afterToolCall?.(call("read_file"), { content: "x", isError: false }, turn()))?.content,
    ).toBe("x");
  });

  it("afterToolCall: stdout and an exit-2 reason join the result; a failure is ignored; silence adds nothing", async () => {
    const { hooks, runs } = setup(
      {
        afterToolCall: [
          { command: "lint", tools: ["write_file"] },
          { command: "objects", tools: ["write_file"] },
          { command: "broken" },
          { command: "quiet" },
        ],
      },
      {
        lint: note("2 warnings"),
        objects: block("line too long"),
        broken: { type: "ignored", reason: "hook broken failed: exit 1", durationMs: 1 },
      },
    );
    const h = hooks.hooks();
    const out = await h.afterToolCall?.(call("write_file"), { content: "ok", isError: false }, turn());
    expect(out?.content).toBe("ok\n\n[hook lint] 2 warnings\n[hook objects] line too long");
    expect(runs[0]?.input.result).toEqual({ text: "ok", isError: false });
    const silent = await h.afterToolCall?.(call("read_file"), { content: "file", isError: false }, turn());
    expect(silent).toEqual({ content: "file", isError: false });
  });

  it("beforeStop: exit 2 continues with the reason; a failed hook continues once, then is skipped in that run", async () => {
    let n = 0;
    const { hooks, runs } = setup(
      { beforeStop: [{ command: "broken" }, { command: "tests" }] },
      {
        broken: block("hook broken failed: exit 127", true),
        tests: () => (++n === 1 ? block("run the tests") : note("ok")),
      },
    );
    const h = hooks.hooks();
    const t = turn();
    expect(await h.beforeStop?.("done", t)).toEqual({ continueWith: "hook broken failed: exit 127" });
    expect(await h.beforeStop?.("done", t)).toEqual({ continueWith: "run the tests" });
    expect(await h.beforeStop?.("done", t)).toBeUndefined();
    expect(runs.map((r) => r.command)).toEqual(["broken", "tests", "tests"]);
    expect(runs[0]?.input.reply).toBe("done");
    // Another run tries the broken hook again.
    expect(await h.beforeStop?.("done", turn())).toEqual({ continueWith: "hook broken failed: exit 127" });
  });

  it("beforeMessage: only for message turns; a reply or a block answers; a note joins the message", async () => {
    const replying = setup(
      { beforeMessage: [{ command: "screen" }] },
      {
        screen: { type: "reply", text: "closed", durationMs: 1 },
      },
    );
    const h = replying.hooks.hooks();
    const ctx = { system: "s", messages: [{ role: "user" as const, content: "hi" }] };
    expect(await h.answerBefore?.(ctx, turn({ trigger: "heartbeat" }))).toBeUndefined();
    expect(replying.runs).toEqual([]);
    expect(await h.answerBefore?.(ctx, turn())).toEqual({ answer: "closed" });
    expect(replying.runs[0]?.input).toMatchObject({ event: "beforeMessage", message: "hello there" });

    const blocking = setup({ beforeMessage: [{ command: "b" }] }, { b: block("not for you") });
    expect(await blocking.hooks.hooks().answerBefore?.(ctx, turn())).toEqual({ answer: "not for you" });

    const noting = setup({ beforeMessage: [{ command: "n" }] }, { n: note("VIP customer") });
    expect(await noting.hooks.hooks().answerBefore?.(ctx, turn())).toEqual({
      context: { system: "s", messages: [{ role: "user", content: "hi\n\n[hook n] VIP customer" }] },
    });
  });

  it("beforeMessage: invalid JSON allows and is logged once", async () => {
    const { hooks, warnings } = setup(
      { beforeMessage: [{ command: "j" }] },
      {
        j: { type: "allow", invalidJson: "{oops", durationMs: 1 },
      },
    );
    const h = hooks.hooks();
    const ctx = { system: "s", messages: [{ role: "user" as const, content: "hi" }] };
    expect(await h.answerBefore?.(ctx, turn())).toBeUndefined();
    expect(await h.answerBefore?.(ctx, turn())).toBeUndefined();
    expect(warnings.filter((w) => w.includes("JSON"))).toHaveLength(1);
  });

  it("afterReply: sync entries run at the answer; async ones only once the answer is committed", async () => {
    const { hooks, runs } = setup({
      afterReply: [{ command: "sync" }, { command: "later", async: true }],
    });
    const h = hooks.hooks();
    await h.afterAnswer?.("the answer", turn({ runId: "r1" }));
    expect(runs.map((r) => r.command)).toEqual(["sync"]);
    await hooks.committed("r1", true);
    expect(runs.map((r) => [r.command, r.input.reply])).toEqual([
      ["sync", "the answer"],
      ["later", "the answer"],
    ]);
    // A committed failure, or an answer discarded (the turn ended without its commit): nothing.
    await h.afterAnswer?.("x", turn({ runId: "r2" }));
    await hooks.committed("r2", false);
    await h.afterAnswer?.("y", turn({ runId: "r3" }));
    hooks.ended("s1");
    await hooks.committed("r3", true);
    expect(runs.filter((r) => r.command === "later")).toHaveLength(1);
  });

  it("groupsOf: the catalog's groups, or mcp:<server> for an MCP tool", () => {
    expect(groupsOf("write_file")).toContain("fs-write");
    expect(groupsOf("gh__create_issue")).toEqual(["mcp:gh"]);
    expect(groupsOf("mystery")).toEqual([]);
  });
});
