/**
 * `tools.exec` in the configuration: defaults, and the values refused at load with a message
 * naming the key (a secret-looking variable name, a sandbox or approval mode not built yet).
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { ConfigError } from "../../src/util/config-error.js";

function problem(raw: Record<string, unknown>): string {
  try {
    parseConfig(raw, undefined);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a config error");
}

describe("tools.exec", () => {
  it("is off by default, with a 60 s timeout, no extra variables, no sandbox and blocked approval", () => {
    expect(parseConfig({}, undefined).tools.exec).toEqual({
      enabled: false,
      timeoutMs: 60_000,
      env: [],
      sandbox: "none",
      approval: "blocked",
    });
  });

  it("passes harmless variable names through", () => {
    const config = parseConfig(
      { tools: { exec: { enabled: true, env: ["NODE_ENV", "GOPATH"] } } },
      undefined,
    );
    expect(config.tools.exec.env).toEqual(["NODE_ENV", "GOPATH"]);
  });

  it("refuses a provider key in env, naming the entry", () => {
    const message = problem({ tools: { exec: { env: ["NODE_ENV", "ANTHROPIC_API_KEY"] } } });
    expect(message).toContain(
      "tools.exec.env.1: ANTHROPIC_API_KEY is never passed to commands (it names a key)",
    );
  });

  it("refuses the gateway's own variables and tokens", () => {
    expect(problem({ tools: { exec: { env: ["SWITCHYARD_TOKEN"] } } })).toContain("tools.exec.env.0");
    expect(problem({ tools: { exec: { env: ["SLACK_BOT_TOKEN"] } } })).toContain("it names a token");
    expect(problem({ tools: { exec: { env: ["not a name"] } } })).toContain(
      'tools.exec.env.0: found "not a name", expected an environment variable name',
    );
  });

  it("says sandboxing and approval by asking are not supported yet", () => {
    expect(problem({ tools: { exec: { sandbox: "bwrap" } } })).toContain(
      'tools.exec.sandbox: found "bwrap", only "none" is supported yet',
    );
    expect(problem({ tools: { exec: { approval: "ask" } } })).toContain(
      'tools.exec.approval: found "ask", only "blocked" is supported yet',
    );
  });

  it("refuses an unknown key under tools.exec", () => {
    expect(problem({ tools: { exec: { network: true } } })).toContain("tools.exec");
  });
});
