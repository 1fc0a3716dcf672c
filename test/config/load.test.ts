import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseConfigText } from "../../src/config/load.js";

function issuesOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfigText(text, "switchyard.yaml", env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error("expected a ConfigError");
}

describe("config", () => {
  it("applies defaults to an empty file", () => {
    const config = parseConfigText("", undefined, {});
    expect(config.gateway).toEqual({ host: "127.0.0.1", port: 7420, drainTimeoutMs: 30_000 });
    expect(config.lanes).toEqual({ maxConcurrent: 4, reservedForHuman: 1 });
    expect(config.session.queueMode).toBe("followup");
    expect(config.outbox.maxAgeMs).toBe(3_600_000);
    expect(config.agent.maxToolCallsPerRun).toBe(50);
    expect(config.agent.progressTimeoutMs).toBe(120_000);
  });

  it("substitutes ${ENV} and ${ENV:-default}", () => {
    const config = parseConfigText(
      "providers:\n  anthropic:\n    apiKey: ${MY_KEY}\ngateway:\n  port: ${PORT:-7555}\n",
      undefined,
      { MY_KEY: "sk-ant-xyz" },
    );
    expect(config.providers.anthropic.apiKey).toBe("sk-ant-xyz");
    expect(config.gateway.port).toBe(7555);
  });

  it("names a missing environment variable", () => {
    expect(issuesOf("providers:\n  openai:\n    apiKey: ${OPENAI_KEY_X}\n")).toEqual([
      "line 3: environment variable OPENAI_KEY_X is not set (used as ${OPENAI_KEY_X})",
    ]);
  });

  it("names the key path, the value found and what was expected", () => {
    expect(issuesOf("gateway:\n  port: 99999\n")).toEqual([
      "gateway.port: found 99999, expected at most 65535",
    ]);
    expect(issuesOf("gateway:\n  port: abc\n")).toEqual(['gateway.port: found "abc", expected number']);
    expect(issuesOf("session:\n  queueMode: fast\n")).toEqual([
      'session.queueMode: found "fast", expected one of "followup", "collect", "steer"',
    ]);
    expect(issuesOf("agent:\n  model: gpt-4o\n")[0]).toMatch(
      /^agent\.model: found "gpt-4o", expected "provider\/model"/,
    );
  });

  it("reports unknown keys instead of ignoring them", () => {
    expect(issuesOf("gateway:\n  prot: 1\nagnet: {}\n")).toEqual([
      "gateway.prot: unknown key (not part of the configuration; check the spelling)",
      "agnet: unknown key (not part of the configuration; check the spelling)",
    ]);
  });

  it("never echoes a secret in an error", () => {
    const issues = issuesOf("providers:\n  openai:\n    apiKey: 12345678901234\n");
    expect(issues[0]).toContain("providers.openai.apiKey: found a value (hidden)");
    expect(issues.join()).not.toContain("12345678901234");
  });

  it("checks cross-field rules", () => {
    expect(issuesOf("lanes:\n  maxConcurrent: 2\n  reservedForHuman: 2\n")[0]).toMatch(
      /reservedForHuman: found 2, expected fewer than/,
    );
  });

  it("reports YAML syntax errors and non-mapping documents", () => {
    expect(issuesOf("gateway: [1\n")[0]).toMatch(/^YAML syntax:/);
    expect(issuesOf("- a\n- b\n")[0]).toBe("top level: found a list, expected a mapping of sections");
  });

  it("loads ./switchyard.yaml, --config, SWITCHYARD_CONFIG, or defaults", () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-config-"));
    expect(loadConfig({ cwd: dir, env: {} }).file).toBeUndefined();
    writeFileSync(join(dir, "switchyard.yaml"), "gateway:\n  port: 7001\n");
    writeFileSync(join(dir, "other.yaml"), "gateway:\n  port: 7002\n");
    expect(loadConfig({ cwd: dir, env: {} }).config.gateway.port).toBe(7001);
    expect(loadConfig({ cwd: dir, env: { SWITCHYARD_CONFIG: "other.yaml" } }).config.gateway.port).toBe(7002);
    expect(loadConfig({ cwd: dir, env: {}, path: "other.yaml" }).config.gateway.port).toBe(7002);
    expect(() => loadConfig({ cwd: dir, env: {}, path: "missing.yaml" })).toThrow(/file not found/);
  });
});
