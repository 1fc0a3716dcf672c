/**
 * The composition root's provider choice: config first, then the environment, the simulator
 * when neither names a key (or a base URL of a keyless local server).
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { chooseProvider } from "../../src/config/provider-choice.js";

const config = (raw: Record<string, unknown>) => parseConfig(raw, undefined);

describe("chooseProvider", () => {
  it("uses the key in the config file over the environment", () => {
    const choice = chooseProvider(
      config({ agent: { model: "anthropic/claude-x" }, providers: { anthropic: { apiKey: "sk-ant-file" } } }),
      { ANTHROPIC_API_KEY: "sk-ant-env" },
    );
    expect(choice).toMatchObject({
      provider: "anthropic",
      model: "claude-x",
      apiKey: "sk-ant-file",
      simulated: false,
    });
  });

  it("falls back to the provider's environment variable when the file names no key", () => {
    expect(
      chooseProvider(config({ agent: { model: "openai/gpt-x" } }), { OPENAI_API_KEY: "sk-env" }),
    ).toMatchObject({ provider: "openai", model: "gpt-x", apiKey: "sk-env", simulated: false });
    // The other vendor's key does not count.
    expect(
      chooseProvider(config({ agent: { model: "openai/gpt-x" } }), { ANTHROPIC_API_KEY: "sk-ant-env" })
        .simulated,
    ).toBe(true);
  });

  it("runs on the simulator with no key anywhere, and says so", () => {
    const choice = chooseProvider(config({}), {});
    expect(choice.simulated).toBe(true);
    expect(choice.apiKey).toBeUndefined();
    expect(
      chooseProvider(config({ agent: { model: "simulator/demo" } }), { ANTHROPIC_API_KEY: "k" }).simulated,
    ).toBe(true);
  });

  it("treats a keyless base URL (Ollama, vLLM, llama.cpp) as a real server, not the simulator", () => {
    const choice = chooseProvider(
      config({
        agent: { model: "openai/llama3" },
        providers: { openai: { baseUrl: "http://127.0.0.1:11434/v1" } },
      }),
      {},
    );
    expect(choice).toMatchObject({
      simulated: false,
      apiKey: undefined,
      baseUrl: "http://127.0.0.1:11434/v1",
    });
  });

  it("ignores an empty environment variable", () => {
    expect(chooseProvider(config({}), { ANTHROPIC_API_KEY: "" }).simulated).toBe(true);
  });
});
