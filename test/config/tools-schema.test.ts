/**
 * `tools.exec` in the configuration: defaults, and the values refused at load with a message
 * naming the key (a secret-looking variable name, an unknown sandbox or approval mode).
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
  it("is off by default, with a 60 s timeout, no extra variables, the sandbox when it works, no network and blocked approval", () => {
    expect(parseConfig({}, undefined).tools.exec).toEqual({
      enabled: false,
      timeoutMs: 60_000,
      env: [],
      sandbox: "auto",
      network: false,
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

  it("takes the sandbox modes, network and approval by asking", () => {
    const exec = parseConfig(
      { tools: { exec: { sandbox: "bwrap", network: true, approval: "ask" } } },
      undefined,
    ).tools.exec;
    expect(exec).toMatchObject({ sandbox: "bwrap", network: true, approval: "ask" });
    expect(parseConfig({ tools: { exec: { sandbox: "none" } } }, undefined).tools.exec.sandbox).toBe("none");
  });

  it("refuses an unknown sandbox or approval mode, naming the key", () => {
    expect(problem({ tools: { exec: { sandbox: "docker" } } })).toContain("tools.exec.sandbox");
    expect(problem({ tools: { exec: { approval: "maybe" } } })).toContain("tools.exec.approval");
    expect(problem({ tools: { exec: { network: "yes" } } })).toContain("tools.exec.network");
  });

  it("refuses an unknown key under tools.exec", () => {
    expect(problem({ tools: { exec: { netwrk: true } } })).toContain("tools.exec");
  });
});
