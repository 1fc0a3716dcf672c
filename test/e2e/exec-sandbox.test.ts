/**
 * The `exec` tool in the bubblewrap sandbox, end to end: real gateway over the HTTP channel,
 * model simulator scripting the calls, the real bwrap (installed here; .ci/run installs it).
 * Writes outside the workspace fail while writes inside work, there is no network unless
 * `tools.exec.network`, and the timeout, /stop and shutdown still end every process inside the
 * sandbox, forked children included (found by a marker in their command lines: inside the
 * sandbox's pid namespace `$$` is not the host's pid).
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { type Server, createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { pidGone } from "../helpers/pid-gone.js";
import { until } from "../helpers/until.js";

const GATEWAY_ENV = { PATH: process.env.PATH, ANTHROPIC_API_KEY: "sk-ant-from-the-environment-123456" };

/** Host pids of processes whose command line contains `marker` (bwrap, its init, the shell, the sleeps). */
function pidsWith(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(marker)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids.filter((pid) => pid !== process.pid);
}

const seenPids: number[] = [];
afterEach(() => {
  for (const pid of seenPids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** A marker no other process on the machine carries: a sleep length with random digits. */
const newMarker = (): string =>
  `${6000 + Math.floor(Math.random() * 1000)}.${Math.random().toString().slice(2, 10)}`;

/** A command that forks a sleep and waits on another, both tagged with `marker` (a sleep length). */
const forking = (marker: string): string => `sleep ${marker}1 & sleep ${marker}2`;

/** Waits until both sleeps of `forking(marker)` run, then returns every process carrying the marker. */
async function sandboxedPids(marker: string): Promise<number[]> {
  const sleeping = (): boolean =>
    [1, 2].every((n) => pidsWith(`sleep\0${marker}${n}\0`).some((pid) => !pidGone(pid)));
  await until(sleeping, `the sandboxed sleeps ${marker}`);
  const pids = pidsWith(marker);
  seenPids.push(...pids);
  return pids;
}

function scriptExec(sim: ModelSimulator, args: Record<string, unknown>): void {
  sim.script({ toolCalls: [{ name: "exec", args }] }, { text: "done" });
}

function lastMessage(sim: ModelSimulator): string {
  const body = sim.requests.at(-1)?.body as { messages?: unknown[] } | undefined;
  return JSON.stringify(body?.messages?.at(-1) ?? null);
}

function withExec(sim: ModelSimulator, exec: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    ...simulatorConfig(sim, "anthropic"),
    tools: { exec: { enabled: true, sandbox: "bwrap", ...exec } },
    ...extra,
  };
}

describe("exec in the bwrap sandbox", () => {
  let sim: ModelSimulator;
  let outside: string;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    // Not under /tmp (the sandbox has its own): a folder of the real system, read-only inside.
    outside = mkdtempSync("/var/tmp/switchyard-outside-");
  });
  afterAll(async () => {
    await sim.close();
    rmSync(outside, { recursive: true, force: true });
  });
  afterEach(() => sim.clearScript());

  describe("by default (auto, no network)", () => {
    let gw: TestGateway;
    let server: Server;
    let connections = 0;
    beforeAll(async () => {
      gw = await startTestGateway(withExec(sim, { sandbox: "auto" }), { env: GATEWAY_ENV });
      server = createServer((socket) => {
        connections++;
        socket.end();
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    });
    afterAll(async () => {
      await gw.stop();
      await new Promise((r) => server.close(r));
    });

    it("writes inside the workspace and fails to write outside it", async () => {
      const target = join(outside, "escaped.txt");
      scriptExec(sim, {
        command: `echo in > inside.txt; echo out > ${target}; echo out > /escaped-root.txt; echo home=$HOME; touch ~/.cache-file && echo home-writable`,
      });
      await gw.chat("fs", "write around");
      const shown = lastMessage(sim);
      expect(shown).toContain("Read-only file system");
      expect(shown).toContain("home=/tmp/home");
      expect(shown).toContain("home-writable");
      expect(readFileSync(join(gw.running.workspaceDir, "inside.txt"), "utf8")).toBe("in\n");
      expect(existsSync(target)).toBe(false);
      expect(existsSync("/escaped-root.txt")).toBe(false);
      expect(existsSync(join(gw.running.workspaceDir, ".cache-file"))).toBe(false);
    });

    it("has no network: a connection to a server on the host's 127.0.0.1 fails", async () => {
      const port = (server.address() as AddressInfo).port;
      scriptExec(sim, { command: connect(port) });
      await gw.chat("net", "connect");
      expect(lastMessage(sim)).toContain("not connected: ECONNREFUSED");
      expect(connections).toBe(0);
    });

    it("/stop ends every process of the sandbox, forked children included", async () => {
      const marker = newMarker();
      scriptExec(sim, { command: forking(marker) });
      const pending = gw.chat("stopper", "run forever");
      const pids = await sandboxedPids(marker);
      expect(pids.length).toBeGreaterThanOrEqual(3);
      const stop = await gw.chat("stopper", "/stop");
      expect(stop.body.replies?.[0]?.text).toBe("Stopping the current turn.");
      await pending;
      await until(() => pids.every(pidGone), "the stopped sandbox's processes to end");
    });
  });

  it("with tools.exec.network: true a command reaches a server on 127.0.0.1", async () => {
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const gw = await startTestGateway(withExec(sim, { network: true }), { env: GATEWAY_ENV });
    try {
      scriptExec(sim, { command: connect((server.address() as AddressInfo).port) });
      await gw.chat("net", "connect");
      expect(lastMessage(sim)).toMatch(
        /exit code 0\\n<<<untrusted source=\\"exec [^\n]*>>>\\nconnected\\n<<<end untrusted>>>/,
      );
      expect(connections).toBe(1);
    } finally {
      await gw.stop();
      await new Promise((r) => server.close(r));
    }
  });

  it("kills a forking command and its children inside the sandbox at the timeout", async () => {
    const gw = await startTestGateway(withExec(sim, { timeoutMs: 500 }), { env: GATEWAY_ENV });
    try {
      const marker = newMarker();
      scriptExec(sim, { command: forking(marker) });
      const pending = gw.chat("slow", "run long");
      const pids = await sandboxedPids(marker);
      expect(pids.length).toBeGreaterThanOrEqual(3);
      await pending;
      expect(lastMessage(sim)).toContain("timed out after 500 ms; its processes were killed");
      expect(pids.filter((pid) => !pidGone(pid))).toEqual([]);
    } finally {
      await gw.stop();
    }
  });

  it("gateway shutdown ends every process of the sandbox", async () => {
    const gw = await startTestGateway(withExec(sim, {}, { gateway: { drainTimeoutMs: 200 } }), {
      env: GATEWAY_ENV,
    });
    const marker = newMarker();
    scriptExec(sim, { command: forking(marker) });
    const pending = gw.chat("down", "run forever").catch(() => undefined);
    const pids = await sandboxedPids(marker);
    await gw.stop();
    expect(pids.filter((pid) => !pidGone(pid))).toEqual([]);
    await pending;
  });

  it("sandbox: bwrap without bwrap refuses the command with one line and runs nothing", async () => {
    const emptyPath = mkdtempSync("/var/tmp/switchyard-nopath-");
    const gw = await startTestGateway(withExec(sim, {}), { env: { PATH: emptyPath } });
    try {
      scriptExec(sim, { command: "touch ran.txt" });
      await gw.chat("strict", "run");
      expect(lastMessage(sim)).toContain(
        "error (failed): not run: tools.exec.sandbox is bwrap, but bwrap is not installed (install the bubblewrap package)",
      );
      expect(existsSync(join(gw.running.workspaceDir, "ran.txt"))).toBe(false);
    } finally {
      await gw.stop();
      rmSync(emptyPath, { recursive: true, force: true });
    }
  });
});

/** A node one-liner connecting to 127.0.0.1:`port`: prints "connected" or "not connected: <code>". */
function connect(port: number): string {
  const js = `require("net").connect(${port},"127.0.0.1").on("connect",()=>{console.log("connected");process.exit(0)}).on("error",e=>{console.log("not connected: "+e.code);process.exit(3)})`;
  return `${process.execPath} -e '${js}'`;
}
