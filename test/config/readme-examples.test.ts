/**
 * Every YAML block of the README loads as pasted (with the environment variables it names set),
 * so the documentation cannot drift from the schema. A key whose children are all commented out
 * is YAML null and means "defaults".
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";

const README = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");

/** The ```yaml blocks, dedented (some sit inside numbered list items). */
function yamlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^([ \t]*)```ya?ml\n([\s\S]*?)^\1```/gm)].map(([, indent = "", body = ""]) =>
    body
      .split("\n")
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join("\n"),
  );
}

/** Every ${VAR} a block names, set to a value of the right shape for where it is used. */
function envFor(block: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [, name] of block.matchAll(/\$\{([A-Z0-9_]+)(?::-[^}]*)?\}/g)) {
    if (!name) continue;
    env[name] = /TELEGRAM.*TOKEN/.test(name)
      ? "123456:AAexample-token-for-the-readme-test-00"
      : /SLACK_BOT_TOKEN/.test(name)
        ? "xoxb-example"
        : /SLACK_APP_TOKEN/.test(name)
          ? "xapp-example"
          : /PORT/.test(name)
            ? "7421"
            : /DATABASE_URL/.test(name)
              ? "postgres://switchyard:secret@127.0.0.1:5432/switchyard"
              : `${name.toLowerCase()}-value-0123456789`;
  }
  return env;
}

describe("README configuration examples", () => {
  const blocks = yamlBlocks(README);

  it("has YAML blocks to check", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
  });

  for (const [i, block] of blocks.entries()) {
    it(`block ${i + 1} (${block.split("\n")[0]}) loads as pasted`, () => {
      expect(() => parseConfigText(block, "README.md", envFor(block))).not.toThrow();
    });
  }

  it("takes a section whose children are all commented out as its defaults", () => {
    const config = parseConfigText(
      "gateway:\nproviders:\n  openai:\n    # apiKey: x\n  anthropic:\nchannels:\n  http:\nlogging:\n",
      undefined,
      {},
    );
    expect(config.providers.openai.requestTimeoutMs).toBe(600_000);
    expect(config.gateway.port).toBe(7420);
    expect(config.channels.http.enabled).toBe(true);
  });

  it("names the offending line of a YAML syntax error without a dangling colon", () => {
    let message = "";
    try {
      parseConfigText("gateway: port: 7420\n", undefined, {});
    } catch (err) {
      message = (err as Error & { issues: string[] }).issues.join("\n");
    }
    expect(message).toMatch(/line 1, column 10 \(the line reads: gateway: port: 7420\)$/);
  });
});
