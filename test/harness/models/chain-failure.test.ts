/**
 * The final failure of a call the router gives up on: with more than one model tried, it names
 * each with how it failed, in order; with one, it is that model's own failure unchanged.
 */
import { describe, expect, it } from "vitest";
import { TriedModels } from "../../../src/harness/models/chain-failure.js";
import { ProviderError } from "../../../src/harness/providers/provider-error.js";

describe("TriedModels", () => {
  it("names every model tried, each kind once, in order; keeps the last failure's fields", () => {
    const tried = new TriedModels();
    tried.failed("anthropic/claude-a", "overloaded");
    tried.failed("anthropic/claude-a", "auth");
    tried.failed("anthropic/claude-a", "overloaded");
    tried.failed("openai/gpt-b", "network");
    const last = new ProviderError("network", "connection reset", { provider: "openai", status: 502 });
    const final = tried.final(last);
    expect([final.kind, final.message, final.provider, final.status]).toEqual([
      "network",
      "connection reset",
      "openai",
      502,
    ]);
    expect(final.tried).toEqual([
      { ref: "anthropic/claude-a", kinds: ["overloaded", "auth"] },
      { ref: "openai/gpt-b", kinds: ["network"] },
    ]);
  });

  it("leaves the failure of a call that tried one model as it is", () => {
    const tried = new TriedModels();
    tried.failed("openai/gpt-b", "rate_limit");
    tried.failed("openai/gpt-b", "rate_limit");
    const last = new ProviderError("rate_limit", "429");
    expect(tried.final(last)).toBe(last);
    expect(last.tried).toBeUndefined();
  });
});
