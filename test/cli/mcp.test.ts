/**
 * `switchyard mcp list` and the MCP configuration's bad input: each server is started once and
 * listed with its tools or why it failed; a program that does not exist, a URL that is not
 * http(s), both or neither of command and url, a malformed env: exit 2 naming the key (for the
 * gateway too); doctor reports each server's tool count.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const FAKE = join(import.meta.dirname, "../fakes/mcp-server.mjs");

function setup(yaml: string): { cwd: string; home: string } {
  const cwd = tempDir();
  writeFileSync(join(cwd, "switchyard.yaml"), yaml);
  return { cwd, home: tempDir() };
}

describe("switchyard mcp list", () => {
  it("starts each server, lists its tools or why it did not start, and stops it", async () => {
    const s = setup(
      `mcp:\n  servers:\n    fake: { command: node, args: [${JSON.stringify(FAKE)}, normal] }\n` +
        `    junk: { command: node, args: [${JSON.stringify(FAKE)}, garbage], timeoutMs: 1500 }\n`,
    );
    const res = await runCli(["mcp", "list", "--json", "--home", s.home], { cwd: s.cwd });
    expect(res.err).toBe("");
    expect(res.code).toBe(1);
    const rows = JSON.parse(res.out) as Array<{
      name: string;
      state: string;
      reason?: string;
      tools: Array<{ name: string }>;
    }>;
    expect(rows.map((r) => [r.name, r.state])).toEqual([
      ["fake", "running"],
      ["junk", "crashed"],
    ]);
    expect(rows[0]?.tools.map((t) => t.name)).toEqual([
      "fake__echo",
      "fake__shell",
      "fake__fail",
      "fake__grow",
    ]);
    expect(rows[1]?.reason).toBe("start failed: did not answer within 1500 ms");
    const table = await runCli(["mcp", "list", "--home", s.home], { cwd: s.cwd });
    expect(table.out).toMatch(/fake\s+running\s+fake__echo, fake__shell, fake__fail, fake__grow/);
  });

  it("says so when no server is configured", async () => {
    const s = setup("agent: {}\n");
    const res = await runCli(["mcp", "list", "--home", s.home], { cwd: s.cwd });
    expect(res.code).toBe(0);
    expect(res.out).toBe("no MCP servers are configured (mcp.servers)\n");
  });
});

describe("MCP configuration errors: exit 2 naming the key", () => {
  const cases: Array<[string, string, string]> = [
    [
      "a program that does not exist",
      "{ command: no-such-mcp-server-xyz }",
      'mcp.servers.bad.command: found "no-such-mcp-server-xyz", expected a program on PATH',
    ],
    [
      "a URL that is not http(s)",
      "{ url: file:///etc/passwd }",
      'mcp.servers.bad.url: found "file:///etc/passwd", expected an http:// or https:// URL',
    ],
    [
      "both command and url",
      "{ command: node, url: http://127.0.0.1:1/mcp }",
      'mcp.servers.bad.url: found "http://127.0.0.1:1/mcp", set either command (stdio) or url (HTTP), not both',
    ],
    [
      "neither command nor url",
      "{ timeoutMs: 5 }",
      "mcp.servers.bad: found a mapping, set command (a stdio server) or url (an HTTP server)",
    ],
    [
      "a malformed env",
      "{ command: node, env: { 1BAD: x } }",
      'mcp.servers.bad.env.1BAD: found "x", "1BAD" is not an environment variable name',
    ],
  ];
  for (const [what, server, message] of cases) {
    it(`mcp list: ${what}`, async () => {
      const s = setup(`mcp:\n  servers:\n    bad: ${server}\n`);
      const res = await runCli(["mcp", "list", "--home", s.home], { cwd: s.cwd });
      expect(res.code).toBe(2);
      expect(res.err).toContain(message);
    });
  }

  it("the gateway refuses to start with a program that does not exist", async () => {
    const s = setup("mcp:\n  servers:\n    gh: { command: no-such-mcp-server-xyz }\n");
    const res = await runCli(["gateway", "--port", "0", "--home", s.home], { cwd: s.cwd });
    expect(res.code).toBe(2);
    expect(res.err).toContain('mcp.servers.gh.command: found "no-such-mcp-server-xyz"');
  });
});

describe("doctor and MCP", () => {
  it("starts each server once and reports its tool count, or that it failed", async () => {
    const s = setup(
      `mcp:\n  servers:\n    fake: { command: node, args: [${JSON.stringify(FAKE)}, normal] }\n` +
        `    dead: { command: node, args: [${JSON.stringify(FAKE)}, exit] }\n`,
    );
    const res = await runCli(["doctor", "--home", s.home], { cwd: s.cwd });
    expect(res.out).toMatch(/ok\s+mcp fake\s+4 tools/);
    expect(res.out).toMatch(/FAIL\s+mcp dead\s+failed: crashed: exit 1/);
  });
});
