/**
 * The `exec` tool end to end: real gateway over the HTTP channel, real provider SDK, model
 * simulator scripting the calls, real processes. Off by default; on, it runs through the guard
 * and the gateway's CommandRunner, whose process groups end on timeout, /stop and shutdown.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";
import { pidGone } from "../helpers/pid-gone.js";

/** The gateway's own environment: a provider key must never reach a command. */
const GATEWAY_ENV = { PATH: process.env.PATH, ANTHROPIC_API_KEY: "sk-ant-from-the-environment-123456" };

/** Every pid a test read; killed in afterEach should a test fail halfway. */
const seenPids: number[] = [];
afterEach(() => {
  for (const pid of seenPids.splice(0)) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
});

/** The shell's pid and its forked child's, once the command has written both. */
async function pidsOf(gw: TestGateway, tag: string): Promise<number[]> {
  const files = [`${tag}-shell.pid`, `${tag}-child.pid`].map((f) => join(gw.running.workspaceDir, f));
  const complete = (f: string): boolean => existsSync(f) && readFileSync(f, "utf8").endsWith("\n");
  await until(() => files.every(complete), `${tag} pid files`);
  const pids = files.map((f) => Number(readFileSync(f, "utf8").trim()));
  seenPids.push(...pids);
  return pids;
}

/** A shell that records its pid and a forked child's pid, then waits on a sleep of its own. */
const forking = (tag: string): string =>
  `echo $$ > ${tag}-shell.pid; sleep 600 & echo $! > ${tag}-child.pid; sleep 600`;

/** A call to exec, then a closing answer. */
function scriptExec(sim: ModelSimulator, args: Record<string, unknown>): void {
  sim.script({ toolCalls: [{ name: "exec", args }] }, { text: "done" });
}

/** The last message of the request after the tool call: the tool result the model was shown. */
function lastMessage(sim: ModelSimulator): string {
  const body = sim.requests.at(-1)?.body as { messages?: unknown[] } | undefined;
  return JSON.stringify(body?.messages?.at(-1) ?? null);
}

function toolNames(sim: ModelSimulator, index: number): string[] {
  const body = sim.requests[index]?.body as { tools?: Array<{ name: string }> } | undefined;
  return (body?.tools ?? []).map((t) => t.name);
}

/**
 * Unsandboxed: these tests read the shell's pid from `$$`, which inside bwrap's pid namespace
 * is not the host's (test/e2e/exec-sandbox.test.ts covers the sandboxed runs).
 */
function withExec(sim: ModelSimulator, exec: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    ...simulatorConfig(sim, "anthropic"),
    tools: { exec: { enabled: true, sandbox: "none", ...exec } },
    ...extra,
  };
}

describe("exec tool", () => {
  let sim: ModelSimulator;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
  });
  afterAll(async () => {
    await sim.close();
  });
  afterEach(() => sim.clearScript());

  it("is off by default: not offered, and a call anyway is an unknown tool that runs nothing", async () => {
    const gw = await startTestGateway(simulatorConfig(sim, "anthropic"), { env: GATEWAY_ENV });
    try {
      const before = sim.requests.length;
      scriptExec(sim, { command: "touch ran.txt" });
      const r = await gw.chat("off", "run something");
      expect(r.body.replies?.[0]?.text).toBe("done");
      expect(toolNames(sim, before)).not.toContain("exec");
      expect(toolNames(sim, before)).toContain("read_file");
      expect(lastMessage(sim)).toContain('error (unknown_tool): there is no tool named \\"exec\\"');
      expect(existsSync(join(gw.running.workspaceDir, "ran.txt"))).toBe(false);
    } finally {
      await gw.stop();
    }
  });

  describe("enabled", () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(withExec(sim, {}), { env: GATEWAY_ENV });
    });
    afterAll(async () => {
      await gw.stop();
    });

    it("is offered, and a command's output reaches the model", async () => {
      const before = sim.requests.length;
      scriptExec(sim, { command: "echo hello" });
      await gw.chat("on", "say hello");
      expect(toolNames(sim, before)).toContain("exec");
      expect(lastMessage(sim)).toContain(
        'exit code 0\\n<<<untrusted source=\\"exec echo hello\\">>>\\nhello\\n<<<end untrusted>>>',
      );
    });

    it("runs in a folder of the workspace and refuses one outside it", async () => {
      scriptExec(sim, { command: "mkdir -p sub && cd sub && pwd" });
      await gw.chat("cwd", "make sub");
      scriptExec(sim, { command: "pwd", cwd: "sub" });
      await gw.chat("cwd", "where");
      expect(lastMessage(sim)).toContain("/sub");
      scriptExec(sim, { command: "pwd", cwd: "../.." });
      await gw.chat("cwd", "escape");
      expect(lastMessage(sim)).toContain("error (path_outside_workspace)");
    });

    it("keeps the gateway's provider key out of the command's environment", async () => {
      scriptExec(sim, { command: "env" });
      await gw.chat("env", "show env");
      const shown = lastMessage(sim);
      expect(shown).toContain("PATH=");
      expect(shown).not.toContain("ANTHROPIC_API_KEY");
      expect(shown).not.toContain(GATEWAY_ENV.ANTHROPIC_API_KEY);
    });

    it("blocks rm -rf ~ with the guard's reason and runs the near miss inside the workspace", async () => {
      scriptExec(sim, { command: "rm -rf ~" });
      await gw.chat("guard", "clean home");
      const blocked = lastMessage(sim);
      expect(blocked).toContain("Blocked by the command guard (rm-recursive-outside-workspace)");
      expect(blocked).toContain('"is_error":true');
      expect(existsSync(gw.running.workspaceDir)).toBe(true);

      scriptExec(sim, { command: "mkdir -p build && touch build/x && rm -rf ./build && echo removed" });
      await gw.chat("guard", "clean build");
      expect(lastMessage(sim)).toMatch(/exit code 0\\n<<<untrusted source=.*>>>\\nremoved/);
      expect(existsSync(join(gw.running.workspaceDir, "build"))).toBe(false);
    });

    it("/stop kills the running command and its forked child", async () => {
      scriptExec(sim, { command: forking("stop") });
      const pending = gw.chat("stopper", "run forever");
      const pids = await pidsOf(gw, "stop");
      const stop = await gw.chat("stopper", "/stop");
      expect(stop.body.replies?.[0]?.text).toBe("Stopping the current turn.");
      const r = await pending;
      expect(r.body.replies?.[0]?.text).toBe("⏹ Stopped.");
      await until(() => pids.every(pidGone), "the stopped command's processes to end");
    });
  });

  it("kills a command and its forked child at the timeout", async () => {
    const gw = await startTestGateway(withExec(sim, { timeoutMs: 500 }), { env: GATEWAY_ENV });
    try {
      scriptExec(sim, { command: forking("slow") });
      const pending = gw.chat("slow", "run long");
      const pids = await pidsOf(gw, "slow");
      await pending;
      expect(lastMessage(sim)).toContain("timed out after 500 ms; its processes were killed");
      expect(pids.every(pidGone)).toBe(true);
    } finally {
      await gw.stop();
    }
  });

  it("gateway shutdown kills a running command and its forked child", async () => {
    const gw = await startTestGateway(withExec(sim, {}, { gateway: { drainTimeoutMs: 200 } }), {
      env: GATEWAY_ENV,
    });
    scriptExec(sim, { command: forking("down") });
    const pending = gw.chat("down", "run forever").catch(() => undefined);
    const pids = await pidsOf(gw, "down");
    await gw.stop();
    expect(pids.every(pidGone)).toBe(true);
    await pending;
  });
});
