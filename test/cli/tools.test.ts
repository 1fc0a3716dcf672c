/**
 * `switchyard tools list`: each tool's decision for a chat under the configuration's policy.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

function setup(yaml: string): { cwd: string; home: string } {
  const cwd = tempDir();
  writeFileSync(join(cwd, "switchyard.yaml"), yaml);
  return { cwd, home: tempDir() };
}

describe("switchyard tools list", () => {
  it("prints what a group chat on a channel is offered and the rule that denies the rest", async () => {
    const s = setup("tools:\n  byChannel:\n    discord: { deny: [cron_add] }\n");
    const res = await runCli(
      ["tools", "list", "--channel", "discord", "--group", "--json", "--home", s.home],
      {
        cwd: s.cwd,
      },
    );
    expect(res.code).toBe(0);
    const rows = JSON.parse(res.out) as Array<{ name: string; allowed: boolean; reason?: string }>;
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName.read_file).toMatchObject({ allowed: true });
    expect(byName.write_file?.reason).toBe("denied by tools.groups.deny (group:fs-write) in a group chat");
    expect(byName.cron_add?.reason).toBe("denied by tools.byChannel.discord.deny (cron_add)");
    expect(byName.memory_get?.reason).toBe("denied: private memory is only for the owner's private chat");
    const table = await runCli(["tools", "list", "--home", s.home], { cwd: s.cwd });
    expect(table.out).toMatch(/memory_get\s+memory\s+yes/);
  });

  it("lists what a gateway with the config registers: exec only when enabled, run-only tools never", async () => {
    const offered = async (yaml: string, args: string[]) => {
      const s = setup(yaml);
      const res = await runCli(["tools", "list", "--json", "--home", s.home, ...args], { cwd: s.cwd });
      expect(res.code).toBe(0);
      return JSON.parse(res.out) as Array<{ name: string; allowed: boolean; reason?: string }>;
    };
    const off = Object.fromEntries(
      (await offered("agent: {}\n", ["--channel", "telegram"])).map((r) => [r.name, r]),
    );
    expect(off.exec).toMatchObject({ allowed: false, reason: "not enabled: tools.exec.enabled is false" });
    expect(off.web_search).toMatchObject({
      allowed: false,
      reason: "not enabled: tools.web.searchUrl is not set",
    });
    expect(off.work_complete).toMatchObject({ allowed: false, reason: "only in an assignment's runs" });
    const on = "tools:\n  exec: { enabled: true }\n";
    expect((await offered(on, ["--channel", "telegram"])).find((r) => r.name === "exec")?.allowed).toBe(true);
    expect(
      (await offered(on, ["--channel", "telegram", "--group"])).find((r) => r.name === "exec")?.reason,
    ).toBe("denied by tools.groups.deny (group:exec) in a group chat");
  }, 60_000);

  it("gives each MCP server a row under its group's rule (its tools are named when it starts)", async () => {
    const s = setup(
      "mcp:\n  servers:\n    notes: { command: node, args: [server.js] }\ntools:\n  byChannel:\n    slack: { deny: [group:mcp:notes] }\n",
    );
    const list = async (channel: string) => {
      const res = await runCli(["tools", "list", "--json", "--channel", channel, "--home", s.home], {
        cwd: s.cwd,
      });
      expect(res.code).toBe(0);
      return (
        JSON.parse(res.out) as Array<{ name: string; groups: string[]; allowed: boolean; reason?: string }>
      ).find((r) => r.name === "notes__*");
    };
    expect(await list("telegram")).toMatchObject({ groups: ["mcp:notes"], allowed: true });
    expect((await list("slack"))?.reason).toBe("denied by tools.byChannel.slack.deny (group:mcp:notes)");
  }, 60_000);

  it("names an unknown tool in the config and exits 2", async () => {
    const s = setup("tools:\n  deny: [rm_rf]\n");
    const res = await runCli(["tools", "list", "--home", s.home], { cwd: s.cwd });
    expect(res.code).toBe(2);
    expect(res.err).toContain('tools.deny.0: unknown tool "rm_rf"');
  });
});
