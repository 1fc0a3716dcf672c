import { ConfigError } from "../../src/util/config-error.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, parseConfigText } from "../../src/config/load.js";

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
    expect(config.gateway).toEqual({
      host: "127.0.0.1",
      port: 7420,
      drainTimeoutMs: 30_000,
      allowRemote: false,
      auth: { mode: "token" },
      leaseTtlMs: 30000,
    });
    expect(config.agent.model).toBe("anthropic/claude-sonnet-5-5");
    expect(config.providers.openai.maxTokensField).toBeUndefined();
    expect(config.lanes).toEqual({ maxConcurrent: 4, reservedForHuman: 1 });
    expect(config.session.queueMode).toBe("followup");
    expect(config.outbox.maxAgeMs).toBe(3_600_000);
    expect(config.agent.maxToolCallsPerRun).toBe(50);
    expect(config.agent.maxParallelTools).toBe(4);
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

  it("asks for quotes around an id too large to read exactly (a Discord snowflake), key or value", () => {
    const issues = issuesOf(
      "channels:\n  telegram:\n    token: '1:x'\n    allowFrom: [123456789012345678]\n    groups: ['223456789012345678', 42]\n",
    );
    expect(issues).toEqual([
      'channels.telegram.allowFrom.0: the number 123456789012345678 on line 4 is too large to read exactly; write it in quotes ("123456789012345678")',
    ]);
    expect(issuesOf("123456789012345678: x\n")[0]).toMatch(
      /^123456789012345680: the number 123456789012345678 on line 1/,
    );
  });

  it("names a missing environment variable", () => {
    expect(issuesOf("providers:\n  openai:\n    apiKey: ${OPENAI_KEY_X}\n")).toEqual([
      "providers.openai.apiKey: environment variable OPENAI_KEY_X is not set (used as ${OPENAI_KEY_X} on line 3)",
    ]);
  });

  it("substitutes a value containing ' #' whole (it is not cut at a comment)", () => {
    const config = parseConfigText(
      "channels:\n  telegram:\n    token: ${TG} # from BotFather\n    webhook:\n      url: https://x.example/hook\n      secret: ok\n",
      undefined,
      { TG: "123456789:AAHk3jD9 #not-a-comment" },
    );
    expect(config.channels.telegram?.token).toBe("123456789:AAHk3jD9 #not-a-comment");
  });

  it("substitutes a value containing ': ' without a YAML syntax error", () => {
    const config = parseConfigText("providers:\n  openai:\n    apiKey: ${KEY}\n", undefined, {
      KEY: "key: with colon, [brackets] {braces} & 'quotes\"",
    });
    expect(config.providers.openai.apiKey).toBe("key: with colon, [brackets] {braces} & 'quotes\"");
  });

  it("does not demand a variable named in a comment, or substitute keys", () => {
    const text = [
      "# providers.openai.apiKey: ${COMMENTED_OUT_KEY}",
      "providers:",
      "  openai:",
      "    # apiKey: ${ALSO_COMMENTED}",
      "    baseUrl: http://127.0.0.1:11434/v1  # not ${THIS_ONE} either",
      "agent:",
      "  model: simulator/echo",
      "",
    ].join("\n");
    const config = parseConfigText(text, undefined, {});
    expect(config.providers.openai.baseUrl).toBe("http://127.0.0.1:11434/v1");
    expect(issuesOf("${KEY_NAME}: 1\n", { KEY_NAME: "gateway" })).toEqual([
      "${KEY_NAME}: unknown key (not part of the configuration; check the spelling)",
    ]);
  });

  it("gives a substituted value the type its key wants, and honours $${ escapes", () => {
    const env = { PORT: "7600", OFF: "false", SECRET: "12345678" };
    const config = parseConfigText(
      [
        "gateway:",
        "  port: ${PORT}",
        "channels:",
        "  http:",
        "    enabled: ${OFF}",
        "  telegram:",
        "    token: '${PORT}:AA'",
        "    mode: webhook",
        "    webhook:",
        "      url: https://x.example/hook",
        "      secret: ${SECRET}",
        "    mentionPatterns: ['$${NOT_A_VAR}', '${MISSING:-fallback}']",
        "",
      ].join("\n"),
      undefined,
      env,
    );
    expect(config.gateway.port).toBe(7600);
    expect(config.channels.http.enabled).toBe(false);
    expect(config.channels.telegram?.token).toBe("7600:AA");
    // A digits-only secret where the schema wants a string stays a string.
    expect(config.channels.telegram?.webhook?.secret).toBe("12345678");
    expect(config.channels.telegram?.mentionPatterns).toEqual(["${NOT_A_VAR}", "fallback"]);
    // Quoted (as it must be in a flow collection) works the same.
    expect(parseConfigText('gateway: {port: "${PORT}"}\n', undefined, env).gateway.port).toBe(7600);
    expect(issuesOf("gateway:\n  port: ${PORT}\n", { PORT: "seven" })).toEqual([
      'gateway.port: found "seven", expected number',
    ]);
  });

  it("says to quote a ${VAR} inside a flow collection", () => {
    const issues = issuesOf("channels:\n  telegram:\n    token: t\n    groups: [${GROUP}]\n", {
      GROUP: "-100123",
    });
    expect(issues[0]).toMatch(/^YAML syntax:/);
    expect(issues.at(-1)).toBe('a ${VAR} inside [ ] or { } must be quoted there, e.g. ["${TELEGRAM_GROUP}"]');
    const config = parseConfigText(
      'channels:\n  telegram:\n    token: t\n    groups: ["${GROUP}"]\n',
      undefined,
      {
        GROUP: "-100123",
      },
    );
    expect(config.channels.telegram?.groups).toEqual(["-100123"]);
  });

  it("names the list index in the key path of a missing variable", () => {
    expect(
      issuesOf("channels:\n  telegram:\n    token: t\n    mentionPatterns:\n      - ok\n      - ${NOPE}\n"),
    ).toEqual([
      "channels.telegram.mentionPatterns.1: environment variable NOPE is not set (used as ${NOPE} on line 6)",
    ]);
  });

  it("accepts gateway.allowRemote and providers.openai.maxTokensField, and checks them", () => {
    const config = parseConfigText(
      "gateway:\n  host: 0.0.0.0\n  allowRemote: true\nproviders:\n  openai:\n    maxTokensField: max_tokens\n",
      undefined,
      {},
    );
    expect(config.gateway.allowRemote).toBe(true);
    expect(config.providers.openai.maxTokensField).toBe("max_tokens");
    expect(issuesOf("providers:\n  openai:\n    maxTokensField: max_output\n")).toEqual([
      'providers.openai.maxTokensField: found "max_output", expected one of "max_completion_tokens", "max_tokens"',
    ]);
    expect(issuesOf("providers:\n  anthropic:\n    maxTokensField: max_tokens\n")[0]).toBe(
      "providers.anthropic.maxTokensField: unknown key (not part of the configuration; check the spelling)",
    );
  });

  it("gives one issue per bad value, and a bound's unit", () => {
    expect(issuesOf("heartbeat:\n  everyMs: -5\n")).toEqual([
      "heartbeat.everyMs: found -5, expected 0 (off) or at least 60000 ms (one minute)",
    ]);
    expect(issuesOf("gateway:\n  auth:\n    token: short\n  drainTimeoutMs: 0\n")).toEqual([
      "gateway.drainTimeoutMs: found 0, expected more than 0 ms",
      "gateway.auth.token: found a value (hidden), expected at least 16 characters",
    ]);
    expect(issuesOf("logging:\n  maxFileMb: 0\n")).toEqual([
      "logging.maxFileMb: found 0, expected at least 1 MB",
    ]);
    expect(
      issuesOf("channels:\n  discord:\n    token: abcdefghijklmnopqrstuvwxyz\n    maxMessageChars: 10\n"),
    ).toEqual(["channels.discord.maxMessageChars: found 10, expected at least 200 characters"]);
    expect(issuesOf("providers:\n  anthropic:\n    profiles: []\n")).toEqual([
      "providers.anthropic.profiles: found a list, expected at least 1 entry",
    ]);
  });

  it("names the key path, the value found and what was expected", () => {
    expect(issuesOf("gateway:\n  port: 99999\n")).toEqual([
      "gateway.port: found 99999, expected at most 65535",
    ]);
    expect(issuesOf("gateway:\n  port: abc\n")).toEqual(['gateway.port: found "abc", expected number']);
    expect(issuesOf("agent:\n  maxParallelTools: 0\n")).toEqual([
      "agent.maxParallelTools: found 0, expected at least 1",
    ]);
    expect(issuesOf("agent:\n  maxParallelTools: 17\n")).toEqual([
      "agent.maxParallelTools: found 17, expected at most 16",
    ]);
    expect(issuesOf("session:\n  queueMode: fast\n")).toEqual([
      'session.queueMode: found "fast", expected one of "followup", "collect", "steer"',
    ]);
    // One issue, not a second one naming a provider cut from a value without a slash.
    expect(issuesOf("agent:\n  model: gpt-4o\n")).toEqual([
      expect.stringMatching(/^agent\.model: found "gpt-4o", expected "provider\/model"/),
    ]);
  });

  it("takes agent.model: simulator, as the README documents, for the built-in simulator", () => {
    const config = parseConfigText("agent:\n  model: simulator\n", undefined, {});
    expect(config.agent.model).toBe("simulator/default");
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

  it("lanes.clusterMaxConcurrent: absent by default, a whole number ≥ 1 when set", () => {
    expect(issuesOf("lanes:\n  clusterMaxConcurrent: 0\n")[0]).toMatch(
      /^lanes\.clusterMaxConcurrent: found 0, expected at least 1/,
    );
    expect(issuesOf("lanes:\n  clusterMaxConcurrent: 1.5\n")[0]).toMatch(/^lanes\.clusterMaxConcurrent: /);
    expect(parseConfigText("lanes:\n  clusterMaxConcurrent: 2\n", "switchyard.yaml", {}).lanes).toEqual({
      maxConcurrent: 4,
      reservedForHuman: 1,
      clusterMaxConcurrent: 2,
    });
  });

  it("checks cross-field rules", () => {
    expect(issuesOf("lanes:\n  maxConcurrent: 2\n  reservedForHuman: 2\n")[0]).toMatch(
      /reservedForHuman: found 2, expected fewer than/,
    );
    expect(issuesOf("agent:\n  toolTimeoutMs: 120000\n")[0]).toMatch(
      /^agent\.toolTimeoutMs: toolTimeoutMs is 120000 and progressTimeoutMs 120000, expected toolTimeoutMs less than progressTimeoutMs$/,
    );
    expect(issuesOf("agent:\n  progressTimeoutMs: 1000\n")[0]).toMatch(
      /toolTimeoutMs is 60000 and progressTimeoutMs 1000/,
    );
    const ok = parseConfigText("agent:\n  toolTimeoutMs: 90000\n  progressTimeoutMs: 100000\n", "s.yaml", {});
    expect(ok.agent.toolTimeoutMs).toBe(90_000);
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
