import { describe, expect, it } from "vitest";
import {
  DEFAULT_MODEL_LIMITS,
  UNKNOWN_MODEL_LIMITS,
  limitsFor,
  modelLimitsSettings,
} from "../../../src/harness/context/model-limits.js";

describe("limitsFor", () => {
  it.each([
    ["anthropic/claude-sonnet-4-5-20250929", 200_000, 64_000],
    ["anthropic/claude-sonnet-4-20250514", 200_000, 64_000],
    ["anthropic/claude-opus-4-1-20250805", 200_000, 32_000],
    ["anthropic/claude-opus-4-20250514", 200_000, 32_000],
    ["anthropic/claude-opus-4-5", 200_000, 64_000],
    ["anthropic/claude-haiku-4-5", 200_000, 64_000],
    ["anthropic/claude-3-5-haiku-latest", 200_000, 8_192],
    ["openai/gpt-4.1", 1_047_576, 32_768],
    ["openai/gpt-4.1-mini", 1_047_576, 32_768],
    ["openai/gpt-5", 400_000, 128_000],
    ["openai/gpt-5-mini", 400_000, 128_000],
    ["openai/gpt-4o-mini", 128_000, 16_384],
    ["openai/o3", 200_000, 100_000],
    ["openai/o3-mini", 200_000, 100_000],
    ["openai/o4-mini", 200_000, 100_000],
    ["simulator/echo", 200_000, 8_192],
  ])("knows %s", (ref, contextWindow, maxOutput) => {
    expect(limitsFor(ref)).toEqual({ contextWindow, maxOutput, known: true });
  });

  it("falls back to conservative limits for an unknown model", () => {
    expect(limitsFor("ollama/llama3.1:8b")).toEqual({
      contextWindow: 32_000,
      maxOutput: 4_096,
      known: false,
    });
    expect(UNKNOWN_MODEL_LIMITS).toEqual({ contextWindow: 32_000, maxOutput: 4_096 });
  });

  it("prefers the most specific pattern, whatever the table's order", () => {
    const reversed = Object.fromEntries(Object.entries(DEFAULT_MODEL_LIMITS).reverse());
    expect(limitsFor("anthropic/claude-opus-4-5", reversed).maxOutput).toBe(64_000);
    expect(limitsFor("anthropic/claude-opus-4-1", reversed).maxOutput).toBe(32_000);
  });

  it("consults overrides first, the most specific of them winning", () => {
    const overrides = {
      "anthropic/*": { contextWindow: 100_000, maxOutput: 4_000 },
      "anthropic/claude-sonnet-4-5*": { contextWindow: 1_000_000, maxOutput: 64_000 },
      "ollama/*": { contextWindow: 32_768, maxOutput: 8_192 },
    };
    expect(limitsFor("anthropic/claude-sonnet-4-5", overrides)).toEqual({
      contextWindow: 1_000_000,
      maxOutput: 64_000,
      known: true,
    });
    // A less specific override still beats a more specific built-in pattern.
    expect(limitsFor("anthropic/claude-opus-4-1", overrides).contextWindow).toBe(100_000);
    expect(limitsFor("ollama/qwen3:32b", overrides)).toEqual({
      contextWindow: 32_768,
      maxOutput: 8_192,
      known: true,
    });
    expect(limitsFor("openai/gpt-5", overrides).contextWindow).toBe(400_000);
  });
});

describe("modelLimitsSettings", () => {
  it("accepts limits by pattern, and absent or null as not set", () => {
    const value = { "ollama/*": { contextWindow: 32_768, maxOutput: 8_192 } };
    expect(modelLimitsSettings.parse(value)).toEqual(value);
    expect(modelLimitsSettings.parse(undefined)).toBeUndefined();
    expect(modelLimitsSettings.parse(null)).toBeUndefined();
  });

  it.each([
    [{ "no-slash": { contextWindow: 1000, maxOutput: 100 } }, /provider\/model/],
    [{ "a/b": { contextWindow: 0, maxOutput: 100 } }, /contextWindow/],
    [{ "a/b": { contextWindow: 1000.5, maxOutput: 100 } }, /contextWindow/],
    [{ "a/b": { contextWindow: 1000 } }, /maxOutput/],
    [{ "a/b": { contextWindow: 1000, maxOutput: 100, extra: 1 } }, /extra/],
    [{ "a/b": { contextWindow: 1000, maxOutput: 1000 } }, /less than contextWindow/],
  ])("rejects %j", (value, message) => {
    const result = modelLimitsSettings.safeParse(value);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toMatch(message);
  });
});
