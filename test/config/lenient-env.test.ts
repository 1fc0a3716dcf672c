/**
 * `lenientEnv`, for commands that only read: a `${VAR}` the environment lacks is listed, not an
 * error; its value keeps the `${VAR}` text, or is left out where that text is not valid.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { ConfigError } from "../../src/util/config-error.js";

const dir = mkdtempSync(join(tmpdir(), "sy-lenient-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const YAML = `providers:
  anthropic:
    profiles:
      - id: work
        apiKey: \${ANTHROPIC_KEY_WORK}
channels:
  slack:
    botToken: \${SLACK_BOT_TOKEN}
gateway:
  port: \${PORT}
`;

describe("lenientEnv", () => {
  it("lists what the environment lacks and keeps the rest of the configuration", () => {
    writeFileSync(join(dir, "switchyard.yaml"), YAML);
    const { config, unresolved } = loadConfig({ cwd: dir, env: {}, lenientEnv: true });
    expect(unresolved).toEqual([
      "${ANTHROPIC_KEY_WORK} (providers.anthropic.profiles.0.apiKey)",
      "${SLACK_BOT_TOKEN} (channels.slack.botToken)",
      "${PORT} (gateway.port)",
    ]);
    expect(config.providers.anthropic.profiles).toEqual([{ id: "work", apiKey: "${ANTHROPIC_KEY_WORK}" }]);
    // Not a bot token (xoxb-…), not a port: left out, so the defaults apply.
    expect(config.channels.slack?.botToken).toBeUndefined();
    expect(config.gateway.port).toBe(7420);
  });

  it("is off by default: the same file is a ConfigError naming each variable", () => {
    writeFileSync(join(dir, "switchyard.yaml"), YAML);
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(ConfigError);
  });

  it("still reports a problem of the file's own", () => {
    writeFileSync(join(dir, "switchyard.yaml"), `${YAML}lanes:\n  maxConcurrent: 0\n`);
    let issues: string[] = [];
    try {
      loadConfig({ cwd: dir, env: {}, lenientEnv: true });
    } catch (err) {
      issues = (err as ConfigError).issues;
    }
    expect(issues).toEqual(["lanes.maxConcurrent: found 0, expected at least 1"]);
  });
});
