/**
 * The composition root's provider choice: auth profiles from config (profiles, else apiKey as
 * `default`, else the vendor's environment variable), named OpenAI-compatible providers, the
 * model chain with its fallbacks, the simulator when the primary has no key — and the config
 * errors that name the key.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { chooseProvider, resolveProvider } from "../../src/config/provider-choice.js";
import { ConfigError } from "../../src/util/config-error.js";

const config = (raw: Record<string, unknown>) => parseConfig(raw, undefined);

function configError(raw: Record<string, unknown>): string {
  try {
    config(raw);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("resolveProvider", () => {
  it("uses the key in the config file over the environment, as profile default", () => {
    const p = resolveProvider(
      config({ providers: { anthropic: { apiKey: "sk-ant-file" } } }),
      { ANTHROPIC_API_KEY: "sk-ant-env" },
      "anthropic",
    );
    expect(p?.profiles).toEqual([
      { id: "default", apiKey: "sk-ant-file", source: "providers.anthropic.apiKey" },
    ]);
  });

  it("falls back to the vendor's environment variable, and ignores an empty one", () => {
    expect(resolveProvider(config({}), { OPENAI_API_KEY: "sk-env" }, "openai")?.profiles).toEqual([
      { id: "default", apiKey: "sk-env", source: "OPENAI_API_KEY" },
    ]);
    expect(resolveProvider(config({}), { OPENAI_API_KEY: "" }, "openai")?.unconfigured).toBe(true);
  });

  it("reads several profiles in order", () => {
    const p = resolveProvider(
      config({
        providers: {
          anthropic: {
            profiles: [
              { id: "work", apiKey: "k-work" },
              { id: "personal", apiKey: "k-personal" },
            ],
          },
        },
      }),
      {},
      "anthropic",
    );
    expect(p?.profiles.map((x) => x.id)).toEqual(["work", "personal"]);
  });

  it("resolves a named OpenAI-compatible provider, keyless with a base URL", () => {
    const p = resolveProvider(
      config({ providers: { ollama: { type: "openai", baseUrl: "http://127.0.0.1:11434/v1" } } }),
      {},
      "ollama",
    );
    expect(p).toMatchObject({
      name: "ollama",
      type: "openai",
      baseUrl: "http://127.0.0.1:11434/v1",
      unconfigured: false,
    });
    expect(p?.profiles.map((x) => x.id)).toEqual(["default"]);
  });
});

describe("chooseProvider", () => {
  it("runs on the simulator with no key anywhere, and with simulator/…", () => {
    expect(chooseProvider(config({}), {}).simulated).toBe(true);
    expect(
      chooseProvider(config({ agent: { model: "simulator/demo" } }), { ANTHROPIC_API_KEY: "k" }).simulated,
    ).toBe(true);
    expect(chooseProvider(config({}), { ANTHROPIC_API_KEY: "" }).simulated).toBe(true);
  });

  it("treats a keyless base URL (Ollama, vLLM, llama.cpp) as a real server, not the simulator", () => {
    const choice = chooseProvider(
      config({
        agent: { model: "openai/llama3" },
        providers: { openai: { baseUrl: "http://127.0.0.1:11434/v1" } },
      }),
      {},
    );
    expect(choice.simulated).toBe(false);
    expect(choice.chain).toEqual([{ ref: "openai/llama3", provider: "openai", model: "llama3" }]);
  });

  it("builds the chain from agent.model and agent.fallbacks, leaving out fallbacks without a key", () => {
    const choice = chooseProvider(
      config({
        agent: { model: "anthropic/claude-x", fallbacks: ["openai/gpt-y", "ollama/llama3.3"] },
        providers: {
          anthropic: { apiKey: "a" },
          ollama: { type: "openai", baseUrl: "http://127.0.0.1:11434/v1" },
        },
      }),
      {},
    );
    expect(choice.chain.map((e) => e.ref)).toEqual(["anthropic/claude-x", "ollama/llama3.3"]);
    expect(choice.skipped).toEqual([
      { ref: "openai/gpt-y", reason: expect.stringMatching(/providers\.openai has no key.*OPENAI_API_KEY/) },
    ]);
  });
});

describe("bad model-access config", () => {
  it("names the key of each mistake", () => {
    expect(configError({ providers: { anthropic: { profiles: [{ id: "a" }] } } })).toMatch(
      /providers\.anthropic\.profiles\.0\.apiKey/,
    );
    expect(
      configError({
        providers: {
          anthropic: {
            profiles: [
              { id: "a", apiKey: "1" },
              { id: "a", apiKey: "2" },
            ],
          },
        },
      }),
    ).toMatch(/providers\.anthropic\.profiles\.1\.id.*used twice/);
    expect(
      configError({ providers: { anthropic: { apiKey: "k", profiles: [{ id: "a", apiKey: "1" }] } } }),
    ).toMatch(/providers\.anthropic\.apiKey.*either apiKey or profiles/);
    expect(configError({ agent: { fallbacks: ["olama/llama3"] } })).toMatch(
      /agent\.fallbacks\.0.*"olama".*not configured/,
    );
    expect(configError({ prices: { "openai/gpt-x": { input: -1, output: 1 } } })).toMatch(
      /prices\.openai\/gpt-x\.input: found -1, expected at least 0/,
    );
    expect(configError({ providers: { local: { baseUrl: "http://127.0.0.1:1/v1" } } })).toMatch(
      /providers\.local\.type/,
    );
  });
});
