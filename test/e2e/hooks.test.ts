/**
 * Command hooks end to end: a real gateway over the HTTP channel, the scripted model through the
 * real provider SDK, real hook programs (shell scripts in the workspace) run through the runner.
 * A beforeToolCall hook refuses a call with its stderr (and fails closed on a timeout), an
 * afterToolCall hook's stdout reaches the next model call (cut at 16 KB), a beforeStop hook sends
 * the agent on once, a beforeMessage hook answers without a model call, an afterReply hook sees
 * the answer, and every run is counted in /metrics.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

const ENV = { PATH: process.env.PATH };

/** A gateway whose workspace holds `scripts` (name → shell body) under hooks/, with `hooks` configured. */
async function gatewayWith(
  sim: ModelSimulator,
  scripts: Record<string, string>,
  hooks: Record<string, unknown>,
): Promise<TestGateway & { workspace: string }> {
  const home = mkdtempSync(join(tmpdir(), "sy-hooks-"));
  const workspace = join(home, "workspace");
  mkdirSync(join(workspace, "hooks"), { recursive: true });
  for (const [name, body] of Object.entries(scripts)) {
    const file = join(workspace, "hooks", name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
  }
  const gw = await startTestGateway({ ...simulatorConfig(sim, "anthropic"), hooks }, { home, env: ENV });
  return {
    ...gw,
    workspace,
    stop: async () => {
      await gw.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The last message of request `index`: after a tool call, the result the model was shown. */
function lastMessage(sim: ModelSimulator, index: number): string {
  const body = sim.requests[index]?.body as { messages?: unknown[] } | undefined;
  return JSON.stringify(body?.messages?.at(-1) ?? null);
}

describe("command hooks", () => {
  let sim: ModelSimulator;
  let gw: (TestGateway & { workspace: string }) | undefined;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
  });
  afterAll(async () => {
    await sim.close();
  });
  afterEach(async () => {
    sim.clearScript();
    await gw?.stop();
    gw = undefined;
  });

  it("beforeToolCall exit 2 refuses write_file: nothing written, the model reads the stderr", async () => {
    gw = await gatewayWith(
      sim,
      { "guard.sh": 'cat > hooks/stdin.json\necho "writes are frozen until Monday" >&2\nexit 2' },
      { beforeToolCall: [{ command: "./hooks/guard.sh", tools: ["write_file"] }] },
    );
    const before = sim.requests.length;
    sim.script(
      { toolCalls: [{ name: "write_file", args: { path: "notes.md", content: "hello" } }] },
      { text: "could not write" },
    );
    const r = await gw.chat("ana", "write notes.md");
    expect(r.body.replies?.[0]?.text).toBe("could not write");
    expect(existsSync(join(gw.workspace, "notes.md"))).toBe(false);
    expect(lastMessage(sim, before + 1)).toContain("writes are frozen until Monday");
    const stdin = JSON.parse(readFileSync(join(gw.workspace, "hooks/stdin.json"), "utf8"));
    expect(stdin).toMatchObject({
      event: "beforeToolCall",
      channel: "http",
      senderId: "ana",
      trigger: "message",
      tool: { name: "write_file", arguments: { path: "notes.md", content: "hello" } },
    });
    expect(stdin.sessionKey).toContain("ana");
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain(
      'switchyard_hook_runs_total{event="beforeToolCall",hook="beforeToolCall[0]",verdict="block"} 1',
    );
    expect(metrics).toMatch(/switchyard_hook_duration_seconds_count\{event="beforeToolCall"\} 1/);
  });

  it("a beforeToolCall hook that outlives its timeout refuses the call (fail closed)", async () => {
    gw = await gatewayWith(
      sim,
      { "slow.sh": "sleep 5" },
      { beforeToolCall: [{ command: "./hooks/slow.sh", timeoutMs: 300 }] },
    );
    const before = sim.requests.length;
    sim.script(
      { toolCalls: [{ name: "write_file", args: { path: "slow.md", content: "x" } }] },
      { text: "refused" },
    );
    await gw.chat("bo", "write slow.md");
    expect(existsSync(join(gw.workspace, "slow.md"))).toBe(false);
    expect(lastMessage(sim, before + 1)).toContain("hook ./hooks/slow.sh failed: timed out after 300 ms");
  });

  it("an afterToolCall hook's stdout reaches the next model call, cut at 16 KB", async () => {
    gw = await gatewayWith(
      sim,
      {
        "lint.sh": 'echo "lint: 2 warnings in notes.md"',
        "flood.sh": "head -c 10000000 /dev/zero | tr '\\0' x",
      },
      {
        afterToolCall: [
          { command: "./hooks/lint.sh", tools: ["write_file"] },
          { command: "./hooks/flood.sh", tools: ["list_files"] },
        ],
      },
    );
    let before = sim.requests.length;
    sim.script(
      { toolCalls: [{ name: "write_file", args: { path: "notes.md", content: "hello" } }] },
      { text: "written" },
    );
    await gw.chat("cy", "write notes.md");
    expect(readFileSync(join(gw.workspace, "notes.md"), "utf8")).toBe("hello");
    expect(lastMessage(sim, before + 1)).toContain("[hook ./hooks/lint.sh] lint: 2 warnings in notes.md");

    before = sim.requests.length;
    sim.script({ toolCalls: [{ name: "list_files", args: {} }] }, { text: "listed" });
    await gw.chat("cy", "list");
    const shown = lastMessage(sim, before + 1);
    expect(shown).toContain("[hook ./hooks/flood.sh] xxxx");
    expect(shown.length).toBeGreaterThan(16 * 1024);
    expect(shown.length).toBeLessThan(24 * 1024);
  });

  it("a beforeStop hook exiting 2 sends the agent on once with its reason", async () => {
    gw = await gatewayWith(
      sim,
      {
        "tests-ran.sh":
          '[ -f hooks/asked.marker ] && exit 0\ntouch hooks/asked.marker\necho "you have not run the tests" >&2\nexit 2',
      },
      { beforeStop: [{ command: "./hooks/tests-ran.sh" }] },
    );
    const before = sim.requests.length;
    sim.script({ text: "all done" }, { text: "ran the tests, all green" });
    const r = await gw.chat("di", "fix it");
    expect(r.body.replies?.map((x) => x.text)).toEqual(["ran the tests, all green"]);
    expect(sim.requests.length - before).toBe(2);
    expect(lastMessage(sim, before + 1)).toContain("you have not run the tests");
  });

  it("a beforeMessage hook's reply answers without a model call; afterReply hooks see it", async () => {
    gw = await gatewayWith(
      sim,
      {
        "screen.sh": 'cat > hooks/message.json\necho \'{"reply": "We are closed today."}\'',
        "audit.sh": "cat > hooks/audit.json",
        "audit-later.sh": "cat > hooks/audit-later.json",
      },
      {
        beforeMessage: [{ command: "./hooks/screen.sh", timeoutMs: 2000 }],
        afterReply: [{ command: "./hooks/audit.sh" }, { command: "./hooks/audit-later.sh", async: true }],
      },
    );
    const before = sim.requests.length;
    const r = await gw.chat("ed", "are you open?");
    expect(r.body.replies?.map((x) => x.text)).toEqual(["We are closed today."]);
    expect(sim.requests.length).toBe(before);
    const seen = JSON.parse(readFileSync(join(gw.workspace, "hooks/message.json"), "utf8"));
    expect(seen).toMatchObject({ event: "beforeMessage", message: "are you open?", senderId: "ed" });
    // The synchronous afterReply ran before the answer was delivered.
    const audit = JSON.parse(readFileSync(join(gw.workspace, "hooks/audit.json"), "utf8"));
    expect(audit).toMatchObject({ event: "afterReply", reply: "We are closed today." });
    // The async one runs after the commit, detached.
    const later = join(gw.workspace, "hooks/audit-later.json");
    await until(() => existsSync(later) && readFileSync(later, "utf8").endsWith("\n"), "async afterReply");
    expect(JSON.parse(readFileSync(later, "utf8"))).toMatchObject({ reply: "We are closed today." });
  });
});
