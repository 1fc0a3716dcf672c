/**
 * The ModelProvider contract suite, run against every SDK adapter: the real SDK streams from the
 * model simulator on 127.0.0.1, and every failure mode ends the stream with the right kind.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type {
  ModelProvider,
  ModelRequest,
  ProviderEvent,
  ProviderErrorKind,
} from "../../../src/harness/providers/types.js";
import { ModelSimulator, type ScriptedTurn, type SimulatedProtocol } from "../../fakes/model-simulator.js";

/** Builds the adapter under test against a base URL (the simulator's, or a closed port). */
export type ProviderFactory = (
  simulatorUrl: string,
  options?: { requestTimeoutMs?: number; apiKey?: string },
) => ModelProvider;

/** Drains a stream; fails the test if it throws (the contract says it never does). */
export async function collect(
  stream: AsyncIterable<ProviderEvent>,
  onEvent?: (event: ProviderEvent) => void,
): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    onEvent?.(event);
  }
  return events;
}

export function textOf(events: ProviderEvent[]): string {
  return events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
}

export function lastError(events: ProviderEvent[]) {
  const last = events.at(-1);
  if (last?.type !== "error") throw new Error(`expected a final error event, got ${JSON.stringify(last)}`);
  return last.error;
}

export const WEATHER_TOOL = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

export function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "test-model",
    system: "You are a test assistant.",
    messages: [{ role: "user", content: "Hello there" }],
    tools: [WEATHER_TOOL],
    maxTokens: 256,
    ...overrides,
  };
}

const never = () => new AbortController().signal;

interface KindCase {
  name: string;
  turn: ScriptedTurn;
  kind: ProviderErrorKind;
  status?: number;
}

/** Error cases every provider must classify the same way (protocol-specific ones are passed in). */
const COMMON_CASES: KindCase[] = [
  {
    name: "429 → rate_limit",
    turn: { error: { status: 429, retryAfterSeconds: 2 } },
    kind: "rate_limit",
    status: 429,
  },
  { name: "503 → overloaded", turn: { error: { status: 503 } }, kind: "overloaded", status: 503 },
  { name: "529 → overloaded", turn: { error: { status: 529 } }, kind: "overloaded", status: 529 },
  { name: "500 → overloaded (transient server error)", turn: { error: { status: 500 } }, kind: "overloaded" },
  { name: "401 → auth", turn: { error: { status: 401 } }, kind: "auth", status: 401 },
  { name: "402 → billing", turn: { error: { status: 402 } }, kind: "billing", status: 402 },
  {
    name: "400 context_length_exceeded → context_overflow",
    turn: { error: { status: 400, code: "context_length_exceeded" } },
    kind: "context_overflow",
    status: 400,
  },
  { name: "400 → invalid_request", turn: { error: { status: 400 } }, kind: "invalid_request", status: 400 },
  { name: "404 → invalid_request", turn: { error: { status: 404 } }, kind: "invalid_request", status: 404 },
  {
    name: "dropped connection → network",
    turn: { dropAfterChunks: 3, text: "a".repeat(200) },
    kind: "network",
  },
  { name: "drop before any chunk → network", turn: { dropAfterChunks: 0, text: "hi" }, kind: "network" },
  // A status no rule knows (a 418 teapot, a 409 conflict): classified, never thrown, not retried.
  {
    name: "418 of an unknown error type → unknown",
    turn: { error: { status: 418, type: "teapot_error", message: "I'm a teapot" } },
    kind: "unknown",
    status: 418,
  },
];

/** Runs the contract against `factory` for the given protocol. */
export function runProviderContract(
  protocol: SimulatedProtocol,
  factory: ProviderFactory,
  extraCases: KindCase[],
): void {
  describe(`ModelProvider contract (${protocol})`, () => {
    const sim = new ModelSimulator({ chunkChars: 5 });
    let provider: ModelProvider;
    beforeAll(() => sim.start());
    afterAll(() => sim.close());
    beforeEach(() => {
      sim.clearScript();
      provider = factory(sim.url, { requestTimeoutMs: 5_000 });
    });

    it("streams text in several deltas, then usage, then exactly one stop", async () => {
      sim.script({ text: "The quick brown fox jumps over the lazy dog." });
      const events = await collect(provider.stream(request(), never()));
      const deltas = events.filter((e) => e.type === "text_delta");
      expect(deltas.length).toBeGreaterThan(3);
      expect(textOf(events)).toBe("The quick brown fox jumps over the lazy dog.");
      expect(events.slice(-2).map((e) => e.type)).toEqual(["usage", "stop"]);
      expect(events.at(-1)).toEqual({ type: "stop", reason: "end_turn" });
      const usage = events.find((e) => e.type === "usage");
      if (usage?.type !== "usage") throw new Error("no usage event");
      const { inputTokens, cacheReadTokens, cacheWriteTokens, outputTokens } = usage.usage;
      expect(inputTokens + cacheReadTokens + cacheWriteTokens).toBeGreaterThan(0);
      expect(outputTokens).toBeGreaterThan(0);
    });

    it("reassembles two parallel tool calls with complete arguments", async () => {
      sim.script({
        text: "Checking both.",
        toolCalls: [
          { name: "get_weather", args: { city: "Paris", units: "metric" } },
          { name: "get_weather", args: { city: "Reykjavík" } },
        ],
      });
      const events = await collect(provider.stream(request(), never()));
      const calls = events.flatMap((e) => (e.type === "tool_call" ? [e.call] : []));
      expect(calls).toHaveLength(2);
      expect(calls.map((c) => c.name)).toEqual(["get_weather", "get_weather"]);
      expect(calls.map((c) => JSON.parse(c.argumentsJson))).toEqual([
        { city: "Paris", units: "metric" },
        { city: "Reykjavík" },
      ]);
      expect(new Set(calls.map((c) => c.id)).size).toBe(2);
      expect(textOf(events)).toBe("Checking both.");
      expect(events.at(-1)).toEqual({ type: "stop", reason: "tool_use" });
    });

    it("sends the whole conversation, tool round trip included, and the API key", async () => {
      sim.script({ text: "It is sunny." });
      const events = await collect(
        provider.stream(
          request({
            messages: [
              { role: "user", content: "Weather in Paris and Rome?" },
              {
                role: "assistant",
                content: "",
                toolCalls: [
                  { id: "call_1", name: "get_weather", argumentsJson: '{"city":"Paris"}' },
                  { id: "call_2", name: "get_weather", argumentsJson: '{"city":"Rome"}' },
                ],
              },
              { role: "tool", toolCallId: "call_1", name: "get_weather", content: "sunny", isError: false },
              { role: "tool", toolCallId: "call_2", name: "get_weather", content: "failed", isError: true },
            ],
          }),
          never(),
        ),
      );
      expect(events.at(-1)).toEqual({ type: "stop", reason: "end_turn" });
      const recorded = sim.requests.at(-1);
      expect(recorded?.protocol).toBe(protocol);
      expect(recorded?.headers.authorization).toBe("Bearer test-key");
      expect(JSON.stringify(recorded?.body)).toContain("Weather in Paris and Rome?");
    });

    it("reports cache reads on a second request sharing the prompt prefix", async () => {
      const long = request({
        system: `You are a careful assistant. ${"Follow the house rules. ".repeat(400)}`,
      });
      sim.script({ text: "first" }, { text: "second" });
      await collect(provider.stream(long, never()));
      const events = await collect(
        provider.stream(
          {
            ...long,
            messages: [
              ...long.messages,
              { role: "assistant", content: "first", toolCalls: [] },
              { role: "user", content: "And again?" },
            ],
          },
          never(),
        ),
      );
      const usage = events.find((e) => e.type === "usage");
      if (usage?.type !== "usage") throw new Error("no usage event");
      expect(usage.usage.cacheReadTokens).toBeGreaterThan(1000);
      // The new turn is either uncached input or (with a breakpoint on it) a cache write.
      expect(usage.usage.inputTokens + usage.usage.cacheWriteTokens).toBeGreaterThan(0);
    });

    for (const c of [...COMMON_CASES, ...extraCases]) {
      it(`ends with an error event: ${c.name}`, async () => {
        sim.script(c.turn);
        const events = await collect(provider.stream(request(), never()));
        const error = lastError(events);
        expect(error.kind).toBe(c.kind);
        expect(error.provider).toBe(protocol);
        if (c.status !== undefined) {
          expect(error.status).toBe(c.status);
          expect(error.requestId).toMatch(/^req_sim_\d+$/);
        }
        expect(events.some((e) => e.type === "stop")).toBe(false);
      });
    }

    it("takes retryAfterMs from the retry-after header", async () => {
      sim.script({ error: { status: 429, retryAfterSeconds: 2 } });
      const error = lastError(await collect(provider.stream(request(), never())));
      expect(error.retryAfterMs).toBe(2_000);
      expect(error.retryable).toBe(true);
    });

    it("times out a request that never answers (timeout)", async () => {
      const quick = factory(sim.url, { requestTimeoutMs: 150 });
      sim.script({ hang: true });
      const started = Date.now();
      const error = lastError(await collect(quick.stream(request(), never())));
      expect(error.kind).toBe("timeout");
      expect(Date.now() - started).toBeLessThan(2_000);
    });

    it("ends with an aborted error when the signal aborts during a hang", async () => {
      sim.script({ hang: true });
      const controller = new AbortController();
      const before = sim.requests.length;
      const pending = collect(provider.stream(request(), controller.signal));
      await sim.waitForRequests(before + 1, 2_000);
      controller.abort();
      expect(lastError(await pending).kind).toBe("aborted");
    });

    it("ends with an aborted error when the signal aborts mid-stream", async () => {
      sim.script({ text: "x".repeat(100), chunkDelayMs: 20 });
      const controller = new AbortController();
      const events = await collect(provider.stream(request(), controller.signal), (event) => {
        if (event.type === "text_delta") controller.abort();
      });
      expect(events[0]?.type).toBe("text_delta");
      expect(lastError(events).kind).toBe("aborted");
    });

    it("ends with an aborted error when the signal is already aborted", async () => {
      const events = await collect(provider.stream(request(), AbortSignal.abort()));
      expect(events).toHaveLength(1);
      expect(lastError(events).kind).toBe("aborted");
    });

    it("ends with a network error when nothing listens on the port", async () => {
      const closed = new ModelSimulator();
      await closed.start();
      const url = closed.url;
      await closed.close();
      const error = lastError(await collect(factory(url).stream(request(), never())));
      expect(error.kind).toBe("network");
    });

    it("yields partial text, then the mid-stream error as the final event", async () => {
      sim.script({
        text: "Partial answer",
        midStreamError: { type: "api_error", message: "Internal error" },
      });
      const events = await collect(provider.stream(request(), never()));
      expect(textOf(events)).toBe("Partial answer");
      const error = lastError(events);
      expect(error.kind).toBe("network");
      expect(error.status).toBeUndefined();
      expect(error.retryable).toBe(true);
    });
  });
}
