/**
 * AnthropicProvider: the real @anthropic-ai/sdk against the model simulator, through the shared
 * ModelProvider contract plus the Anthropic-specific wire details (cache breakpoints, tool results).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnthropicProvider } from "../../../src/harness/providers/anthropic.js";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { collect, lastError, request, runProviderContract, WEATHER_TOOL } from "./provider-contract.js";

const factory = (url: string, options: { requestTimeoutMs?: number; apiKey?: string } = {}) =>
  new AnthropicProvider({ apiKey: options.apiKey ?? "test-key", baseUrl: url, ...options });

runProviderContract("anthropic", factory, [
  {
    name: "400 prompt is too long → context_overflow",
    turn: { error: { status: 400, message: "prompt is too long: 208310 tokens > 200000 maximum" } },
    kind: "context_overflow",
    status: 400,
  },
  {
    name: "400 credit balance too low → billing",
    turn: { error: { status: 400, message: "Your credit balance is too low to access the Anthropic API." } },
    kind: "billing",
    status: 400,
  },
  {
    name: "mid-stream overloaded_error → overloaded",
    turn: { text: "so far", midStreamError: { type: "overloaded_error", message: "Overloaded" } },
    kind: "overloaded",
  },
]);

describe("AnthropicProvider specifics", () => {
  const sim = new ModelSimulator();
  beforeAll(() => sim.start());
  afterAll(() => sim.close());
  const never = new AbortController().signal;

  it("marks cache breakpoints on the system prompt, the last tool and the last message", async () => {
    const second = { ...WEATHER_TOOL, name: "get_time" };
    await collect(factory(sim.url).stream(request({ tools: [WEATHER_TOOL, second] }), never));
    const recorded = sim.requests.at(-1);
    expect(recorded?.path).toBe("/v1/messages");
    expect(recorded?.headers.authorization).toBe("Bearer test-key");
    const body = recorded?.body as {
      system: unknown;
      tools: Array<Record<string, unknown>>;
      messages: Array<{ content: Array<Record<string, unknown>> }>;
    };
    expect(body.system).toEqual([
      { type: "text", text: "You are a test assistant.", cache_control: { type: "ephemeral" } },
    ]);
    expect(body.tools[0]?.cache_control).toBeUndefined();
    expect(body.tools[1]).toMatchObject({ name: "get_time", cache_control: { type: "ephemeral" } });
    expect(body.messages.at(-1)?.content.at(-1)).toEqual({
      type: "text",
      text: "Hello there",
      cache_control: { type: "ephemeral" },
    });
  });

  it("sends tool calls as tool_use and merges consecutive tool results into one user message", async () => {
    await collect(
      factory(sim.url).stream(
        request({
          messages: [
            { role: "user", content: "Weather in Paris and Rome?" },
            {
              role: "assistant",
              content: "Looking.",
              toolCalls: [
                { id: "toolu_1", name: "get_weather", argumentsJson: '{"city":"Paris"}' },
                { id: "toolu_2", name: "get_weather", argumentsJson: '{"city":' },
              ],
            },
            { role: "tool", toolCallId: "toolu_1", name: "get_weather", content: "sunny", isError: false },
            { role: "tool", toolCallId: "toolu_2", name: "get_weather", content: "bad args", isError: true },
          ],
        }),
        never,
      ),
    );
    const body = sim.requests.at(-1)?.body as { messages: unknown[] };
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          // Truncated JSON arguments are sent as {}.
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "sunny", is_error: false },
          {
            type: "tool_result",
            tool_use_id: "toolu_2",
            content: "bad args",
            is_error: true,
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
  });

  it("reads cache_read and cache_creation tokens: written once, read on the next turn", async () => {
    const provider = factory(sim.url);
    const base = request({ model: "cache-model", system: "Stable rules. ".repeat(100) });
    const usageOf = async (req = base) => {
      const events = await collect(provider.stream(req, never));
      const usage = events.find((e) => e.type === "usage");
      if (usage?.type !== "usage") throw new Error("no usage");
      return usage.usage;
    };
    const first = await usageOf();
    expect(first.cacheReadTokens).toBe(0);
    expect(first.cacheWriteTokens).toBeGreaterThan(300);
    const next = await usageOf({
      ...base,
      messages: [
        ...base.messages,
        { role: "assistant", content: "Hi", toolCalls: [] },
        { role: "user", content: "More" },
      ],
    });
    expect(next.cacheReadTokens).toBeGreaterThan(300);
    expect(next.cacheWriteTokens).toBeGreaterThan(0);
    expect(next.cacheWriteTokens).toBeLessThan(first.cacheWriteTokens);
  });

  it("ends with a network error when the stream stops before message_stop", async () => {
    const truncating: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const text = (await res.text()).split("\n\n").slice(0, 4).join("\n\n");
      return new Response(`${text}\n\n`, { status: res.status, headers: res.headers });
    };
    const provider = new AnthropicProvider({ apiKey: "k", baseUrl: sim.url, fetch: truncating });
    expect(lastError(await collect(provider.stream(request(), never))).kind).toBe("network");
  });

  it("rejects bad options at construction, naming the field", () => {
    expect(() => new AnthropicProvider({ apiKey: "" })).toThrow(/apiKey/);
    expect(() => new AnthropicProvider({ apiKey: "k", requestTimeoutMs: -1 })).toThrow(
      /requestTimeoutMs: got -1/,
    );
  });
});
