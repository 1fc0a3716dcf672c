/**
 * `switchyard hooks list` and the hooks' bad input at start: a hook command that does not exist
 * (or is not executable) stops the gateway with exit 2 naming `hooks.<event>[i].command`; the list
 * shows the built-in command guard first among beforeToolCall, every configured hook with its
 * settings, and each one's last outcome once a gateway with this home ran it.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

/** A cwd with `switchyard.yaml` and a home whose workspace holds `scripts` under hooks/. */
function setup(yaml: string, scripts: Record<string, string> = {}): { cwd: string; home: string } {
  const cwd = tempDir();
  writeFileSync(join(cwd, "switchyard.yaml"), yaml);
  const home = tempDir();
  mkdirSync(join(home, "workspace/hooks"), { recursive: true });
  for (const [name, body] of Object.entries(scripts)) {
    const file = join(home, "workspace/hooks", name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
  }
  return { cwd, home };
}

describe("hook commands that cannot run", () => {
  it("the gateway refuses to start naming hooks.beforeToolCall[0].command (missing)", async () => {
    const s = setup("hooks:\n  beforeToolCall:\n    - { command: ./hooks/missing.sh }\n");
    const res = await runCli(["gateway", "--port", "0", "--home", s.home], { cwd: s.cwd });
    expect(res.code).toBe(2);
    expect(res.err).toContain("hooks.beforeToolCall[0].command: ./hooks/missing.sh");
    expect(res.err).toContain("does not exist");
  });

  it("and names a file that is not executable", async () => {
    const s = setup(
      "hooks:\n  afterReply:\n    - { command: ./hooks/x.sh }\n    - { command: ./hooks/plain.sh }\n",
      {
        "x.sh": "exit 0",
      },
    );
    writeFileSync(join(s.home, "workspace/hooks/plain.sh"), "#!/bin/sh\n");
    const res = await runCli(["gateway", "--port", "0", "--home", s.home], { cwd: s.cwd });
    expect(res.code).toBe(2);
    expect(res.err).toContain("hooks.afterReply[1].command: ./hooks/plain.sh");
    expect(res.err).toContain("is not executable");
  });
});

describe("switchyard hooks list", () => {
  it("shows the built-in guard first, each configured hook, and the last outcomes of a run", async () => {
    const hooks = {
      beforeToolCall: [{ command: "./hooks/check.sh", tools: ["exec"], timeoutMs: 2000 }],
      afterReply: [{ command: "./hooks/audit.sh", async: true }],
    };
    const yaml = `hooks:\n  beforeToolCall:\n    - { command: ./hooks/check.sh, tools: [exec], timeoutMs: 2000 }\n  afterReply:\n    - { command: ./hooks/audit.sh, async: true }\n`;
    const s = setup(yaml, { "check.sh": "exit 0", "audit.sh": "exit 0" });

    const fresh = await runCli(["hooks", "list", "--home", s.home], { cwd: s.cwd });
    expect(fresh.err).toBe("");
    expect(fresh.code).toBe(0);
    const lines = fresh.out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^HOOK\s+COMMAND\s+TOOLS\s+TIMEOUT\s+ASYNC\s+LAST$/);
    expect(lines[1]).toMatch(/^beforeToolCall\[builtin\]\s+built-in: command guard .*never ran$/);
    expect(lines[2]).toMatch(/^beforeToolCall\[0\]\s+\.\/hooks\/check\.sh\s+exec\s+2000 ms\s+never ran$/);
    expect(lines[3]).toMatch(/^afterReply\[0\]\s+\.\/hooks\/audit\.sh\s+5000 ms\s+yes\s+never ran$/);

    // A gateway with this home runs them: the guard blocks `rm -rf ~` after check.sh allowed it.
    const sim = new ModelSimulator();
    await sim.start();
    try {
      const gw = await startTestGateway(
        {
          ...simulatorConfig(sim, "anthropic"),
          tools: { exec: { enabled: true, sandbox: "none" } },
          hooks,
        },
        { home: s.home, env: { PATH: process.env.PATH, HOME: s.home } },
      );
      try {
        sim.script({ toolCalls: [{ name: "exec", args: { command: "rm -rf ~" } }] }, { text: "refused" });
        await gw.chat("ana", "clean up");
        // The async afterReply hook runs after the commit, detached: wait for its run to count.
        await until(
          async () => (await (await fetch(`${gw.url}/metrics`)).text()).includes('hook="afterReply[0]"'),
          "the async afterReply run",
        );
      } finally {
        await gw.stop();
      }
    } finally {
      await sim.close();
    }

    const after = await runCli(["hooks", "list", "--home", s.home], { cwd: s.cwd });
    const rows = after.out.trimEnd().split("\n");
    expect(rows[1]).toMatch(/^beforeToolCall\[builtin\].*block \d{4}-\d\d-\d\dT[\d:]+Z [\d.]+ ms: rm-/);
    expect(rows[2]).toMatch(/^beforeToolCall\[0\].*allow \d{4}-.*Z \d+ ms$/);
    expect(rows[3]).toMatch(/^afterReply\[0\].*allow \d{4}-.*Z \d+ ms$/);

    const json = await runCli(["hooks", "list", "--json", "--home", s.home], { cwd: s.cwd });
    const parsed = JSON.parse(json.out) as Array<{ hook: string; last?: { verdict: string } }>;
    expect(parsed.map((r) => [r.hook, r.last?.verdict])).toEqual([
      ["beforeToolCall[builtin]", "block"],
      ["beforeToolCall[0]", "allow"],
      ["afterReply[0]", "allow"],
    ]);
  });
});
