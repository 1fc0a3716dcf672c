import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";
import { ConfigError } from "../../src/util/config-error.js";

function issuesOf(text: string): string[] {
  try {
    parseConfigText(text, "switchyard.yaml", {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error("expected a ConfigError");
}

describe("tools: config", () => {
  it("defaults to the full profile with no exec and no file writes in group chats", () => {
    expect(parseConfigText("", "switchyard.yaml", {}).tools).toEqual({
      profile: "full",
      allow: [],
      deny: [],
      byChannel: {},
      groups: { deny: ["group:exec", "group:fs-write"] },
      exec: {
        enabled: false,
        timeoutMs: 60_000,
        env: [],
        sandbox: "auto",
        network: false,
        approval: "blocked",
      },
      web: { fetch: true, allowHosts: [], timeoutMs: 15_000, maxChars: 20_000 },
    });
  });

  it("accepts the documented example", () => {
    const config = parseConfigText(
      "tools:\n  profile: coding\n  deny: [cron_add]\n  byChannel:\n    discord: { deny: [group:exec] }\n  groups: { deny: [group:exec, group:fs] }\n",
      "switchyard.yaml",
      {},
    );
    expect(config.tools.byChannel).toEqual({ discord: { deny: ["group:exec"] } });
  });

  it("names the key of an unknown tool, group or profile", () => {
    expect(issuesOf("tools:\n  profile: everything\n")[0]).toMatch(/^tools\.profile: /);
    const issues = issuesOf(
      "tools:\n  allow: [read_fil]\n  byChannel:\n    discord: { deny: [group:shell] }\n",
    );
    expect(issues).toContain('tools.allow.0: unknown tool "read_fil" (a tool name or group:<name>)');
    expect(
      issues.some((i) => i.startsWith('tools.byChannel.discord.deny.0: unknown tool group "shell"')),
    ).toBe(true);
  });
});
