/**
 * OpenAIProvider: the real openai SDK against the model simulator, through the shared
 * ModelProvider contract plus the OpenAI-specific wire details.
 */
import { providerModules } from "../../../src/harness/providers/registry.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../../src/harness/providers/openai.js";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { collect, lastError, request, runProviderContract } from "./provider-contract.js";

const factory = (url: string, options: { requestTimeoutMs?: number; apiKey?: string } = {}) =>
  new OpenAIProvider({ apiKey: options.apiKey ?? "test-key", baseUrl: `${url}/v1`, ...options });

runProviderContract("openai", factory, [
  {
    name: "429 insufficient_quota → billing",
    turn: { error: { status: 429, code: "insufficient_quota" } },
    kind: "billing",
    status: 429,
  },
]);

describe("OpenAIProvider specifics", () => {
  const sim = new ModelSimulator();
  beforeAll(() => sim.start());
  afterAll(() => sim.close());
  const never = new AbortController().signal;

  it("asks for usage in the stream, maps tools and the conversation to Chat Completions", async () => {
    const provider = factory(sim.url);
    await collect(
      provider.stream(
        request({
          messages: [
            { role: "user", content: "Weather?" },
            {
              role: "assistant",
              content: "",
              toolCalls: [{ id: "call_9", name: "get_weather", argumentsJson: "{}" }],
            },
            { role: "tool", toolCallId: "call_9", name: "get_weather", content: "rain", isError: false },
          ],
        }),
        never,
      ),
    );
    const recorded = sim.requests.at(-1);
    expect(recorded?.path).toBe("/v1/chat/completions");
    expect(recorded?.headers.authorization).toBe("Bearer test-key");
    expect(recorded?.headers["x-stainless-retry-count"]).toBe("0");
    expect(recorded?.body).toMatchObject({
      model: "test-model",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 256,
      tools: [{ type: "function", function: { name: "get_weather" } }],
      messages: [
        { role: "system", content: "You are a test assistant." },
        { role: "user", content: "Weather?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_9", type: "function", function: { name: "get_weather", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_9", content: "rain" },
      ],
    });
  });

  it("sends max_completion_tokens to the official API by default (no baseUrl)", async () => {
    // No baseUrl: the SDK addresses the official API. The fetch seam records that origin and
    // carries every request to the simulator on 127.0.0.1 whatever its host: nothing leaves.
    const origins: string[] = [];
    const toSimulator: typeof fetch = (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      origins.push(url.origin);
      return fetch(`${sim.url}${url.pathname}${url.search}`, init);
    };
    const provider = new OpenAIProvider({ apiKey: "k", fetch: toSimulator });
    const events = await collect(provider.stream(request(), never));
    expect(events.at(-1)).toMatchObject({ type: "stop" });
    // The SDK's own default base URL (the one the provider registry names), never reached.
    expect(origins).toEqual([new URL(providerModules.openai.defaultBaseUrl).origin]);
    const body = sim.requests.at(-1)?.body as Record<string, unknown>;
    expect(body.max_completion_tokens).toBe(256);
    expect(body).not.toHaveProperty("max_tokens");
  });

  it("sends max_tokens to an OpenAI-compatible server (a baseUrl) by default", async () => {
    await collect(factory(sim.url).stream(request(), never));
    const body = sim.requests.at(-1)?.body as Record<string, unknown>;
    expect(body.max_tokens).toBe(256);
    expect(body).not.toHaveProperty("max_completion_tokens");
  });

  it("honours an explicit maxTokensField either way", async () => {
    for (const maxTokensField of ["max_completion_tokens", "max_tokens"] as const) {
      const provider = new OpenAIProvider({ apiKey: "k", baseUrl: `${sim.url}/v1`, maxTokensField });
      await collect(provider.stream(request(), never));
      const body = sim.requests.at(-1)?.body as Record<string, unknown>;
      expect(Object.keys(body).filter((k) => k.startsWith("max_"))).toEqual([maxTokensField]);
      expect(body[maxTokensField]).toBe(256);
    }
  });

  it("leaves out an empty tools array and an empty system prompt", async () => {
    await collect(factory(sim.url).stream(request({ tools: [], system: "" }), never));
    const body = sim.requests.at(-1)?.body as Record<string, unknown>;
    expect(body.tools).toBeUndefined();
    expect(body.messages).toEqual([{ role: "user", content: "Hello there" }]);
  });

  it("reports cached_tokens in steps of 128 once the shared prefix reaches 1024 tokens", async () => {
    const provider = factory(sim.url);
    const req = request({ model: "cache-model", system: "Rule. ".repeat(1_000) });
    const usageOf = async () => {
      const events = await collect(provider.stream(req, never));
      const usage = events.find((e) => e.type === "usage");
      if (usage?.type !== "usage") throw new Error("no usage");
      return usage.usage;
    };
    expect((await usageOf()).cacheReadTokens).toBe(0);
    const second = await usageOf();
    expect(second.cacheReadTokens).toBeGreaterThanOrEqual(1024);
    expect(second.cacheReadTokens % 128).toBe(0);
    expect(second.cacheWriteTokens).toBe(0);
  });

  it("maps finish_reason length to max_tokens", async () => {
    // The simulator only ends with stop/tool_calls; a custom fetch rewrites the finish reason.
    const rewriting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const text = (await res.text()).replace('"finish_reason":"stop"', '"finish_reason":"length"');
      return new Response(text, { status: res.status, headers: res.headers });
    };
    const provider = new OpenAIProvider({ apiKey: "k", baseUrl: `${sim.url}/v1`, fetch: rewriting });
    const events = await collect(provider.stream(request(), never));
    expect(events.at(-1)).toEqual({ type: "stop", reason: "max_tokens" });
  });

  it("ends with a network error when the stream stops without a finish_reason", async () => {
    const truncating: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const text = (await res.text()).split("\n\n").slice(0, 3).join("\n\n");
      return new Response(`${text}\n\n`, { status: res.status, headers: res.headers });
    };
    const provider = new OpenAIProvider({ apiKey: "k", baseUrl: `${sim.url}/v1`, fetch: truncating });
    expect(lastError(await collect(provider.stream(request(), never))).kind).toBe("network");
  });

  it("rejects bad options at construction, naming the field", () => {
    expect(() => new OpenAIProvider({ apiKey: "" })).toThrow(/apiKey/);
    expect(() => new OpenAIProvider({ apiKey: "k", requestTimeoutMs: 0 })).toThrow(/requestTimeoutMs: got 0/);
    const maxTokensField = "max_output_tokens" as "max_tokens";
    expect(() => new OpenAIProvider({ apiKey: "k", maxTokensField })).toThrow(
      /maxTokensField: got "max_output_tokens", expected "max_completion_tokens" or "max_tokens"/,
    );
  });

  it("reports simulated and id", () => {
    const provider = new OpenAIProvider({ apiKey: "k", simulated: true });
    expect(provider.id).toBe("openai");
    expect(provider.simulated).toBe(true);
  });
});
