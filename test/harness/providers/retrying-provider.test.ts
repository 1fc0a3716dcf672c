/**
 * RetryingProvider: retries retryable failures before any output, with injected sleep; plus one
 * run through the real OpenAI SDK against the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../../src/harness/providers/openai.js";
import { RetryingProvider } from "../../../src/harness/providers/retrying-provider.js";
import {
  type ModelProvider,
  type ModelRequest,
  type ProviderErrorKind,
  type ProviderEvent,
  ProviderError,
} from "../../../src/harness/providers/types.js";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { collect, lastError, request, textOf } from "./provider-contract.js";

const fail = (kind: ProviderErrorKind, retryAfterMs?: number): ProviderEvent => ({
  type: "error",
  error: new ProviderError(kind, kind, retryAfterMs === undefined ? {} : { retryAfterMs }),
});
const OK: ProviderEvent[] = [
  { type: "text_delta", text: "ok" },
  { type: "stop", reason: "end_turn" },
];

/** A provider answering each call with the next scripted event list. */
class ScriptedProvider implements ModelProvider {
  readonly id = "scripted";
  readonly simulated = true;
  calls = 0;
  readonly #attempts: ProviderEvent[][];
  constructor(attempts: ProviderEvent[][]) {
    this.#attempts = attempts;
  }
  async *stream(_request: ModelRequest, _signal: AbortSignal): AsyncIterable<ProviderEvent> {
    const events = this.#attempts[this.calls++] ?? [fail("unknown")];
    for (const event of events) yield event;
  }
}

function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

const never = () => new AbortController().signal;

describe("RetryingProvider", () => {
  it("retries a 429 after its retry-after, then succeeds", async () => {
    const inner = new ScriptedProvider([[fail("rate_limit", 1_500)], OK]);
    const { waits, sleep } = recordingSleep();
    const events = await collect(new RetryingProvider(inner, { sleep }).stream(request(), never()));
    // The wait is announced (a consumer may free its model slot) and so is the next attempt.
    expect(events).toEqual([
      {
        type: "retry_wait",
        attempt: 1,
        waitMs: 1_500,
        error: expect.objectContaining({ kind: "rate_limit" }),
      },
      { type: "retry_resume", attempt: 2 },
      ...OK,
    ]);
    expect(inner.calls).toBe(2);
    expect(waits).toEqual([1_500]);
  });

  it("caps a server-requested wait at maxRetryAfterMs", async () => {
    const inner = new ScriptedProvider([[fail("rate_limit", 600_000)], OK]);
    const { waits, sleep } = recordingSleep();
    await collect(new RetryingProvider(inner, { sleep, maxRetryAfterMs: 10_000 }).stream(request(), never()));
    expect(waits).toEqual([10_000]);
  });

  it("backs off exponentially with jitter, capped, and gives up after maxAttempts", async () => {
    const inner = new ScriptedProvider([
      [fail("overloaded")],
      [fail("network")],
      [fail("timeout")],
      [fail("overloaded")],
      [fail("overloaded")],
      [fail("overloaded")],
    ]);
    const { waits, sleep } = recordingSleep();
    const provider = new RetryingProvider(inner, {
      sleep,
      maxAttempts: 6,
      random: () => 1,
      maxDelayMs: 8_000,
    });
    const events = await collect(provider.stream(request(), never()));
    expect(lastError(events).kind).toBe("overloaded");
    expect(inner.calls).toBe(6);
    // random() = 1 → +20%: 600, 1200, 2400, 4800, then the 8 s cap.
    expect(waits).toEqual([600, 1_200, 2_400, 4_800, 8_000]);
  });

  it("keeps jitter within ±20% of the base delay", async () => {
    for (const [random, expected] of [
      [0, 400],
      [0.5, 500],
    ] as const) {
      const { waits, sleep } = recordingSleep();
      const inner = new ScriptedProvider([[fail("overloaded")], OK]);
      await collect(new RetryingProvider(inner, { sleep, random: () => random }).stream(request(), never()));
      expect(waits).toEqual([expected]);
    }
  });

  it("makes 3 attempts by default", async () => {
    const inner = new ScriptedProvider([[fail("network")], [fail("network")], [fail("network")], OK]);
    const events = await collect(
      new RetryingProvider(inner, { sleep: async () => {} }).stream(request(), never()),
    );
    expect(lastError(events).kind).toBe("network");
    expect(inner.calls).toBe(3);
  });

  it("does not retry once text has been passed on", async () => {
    const inner = new ScriptedProvider([[{ type: "text_delta", text: "par" }, fail("network")], OK]);
    const { waits, sleep } = recordingSleep();
    const events = await collect(new RetryingProvider(inner, { sleep }).stream(request(), never()));
    expect(events.map((e) => e.type)).toEqual(["text_delta", "error"]);
    expect(inner.calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it("does not retry a non-retryable kind (auth)", async () => {
    const inner = new ScriptedProvider([[fail("auth")], OK]);
    const events = await collect(
      new RetryingProvider(inner, { sleep: async () => {} }).stream(request(), never()),
    );
    expect(lastError(events).kind).toBe("auth");
    expect(inner.calls).toBe(1);
  });

  it("honours abort while waiting: ends with an aborted error at once", async () => {
    const inner = new ScriptedProvider([[fail("rate_limit", 60_000)], OK]);
    const controller = new AbortController();
    const started = Date.now();
    const pending = collect(new RetryingProvider(inner).stream(request(), controller.signal));
    setTimeout(() => controller.abort(), 20);
    const events = await pending;
    expect(lastError(events).kind).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(inner.calls).toBe(1);
  });

  it("turns a throwing inner provider into an error event", async () => {
    const throwing: ModelProvider = {
      id: "bad",
      simulated: false,
      // biome-ignore lint/correctness/useYield: the point is a stream that throws before yielding
      async *stream() {
        throw new Error("broken");
      },
    };
    const events = await collect(new RetryingProvider(throwing).stream(request(), never()));
    expect(lastError(events).kind).toBe("unknown");
  });

  it("rejects bad options, naming the field", () => {
    const inner = new ScriptedProvider([]);
    expect(() => new RetryingProvider(inner, { maxAttempts: 0 })).toThrow(/maxAttempts: got 0/);
    expect(() => new RetryingProvider(inner, { jitterRatio: 2 })).toThrow(/jitterRatio/);
  });

  describe("with the real OpenAI SDK and the simulator", () => {
    const sim = new ModelSimulator();
    beforeAll(() => sim.start());
    afterAll(() => sim.close());

    it("retries 429 and 529, then streams the answer", async () => {
      sim.script(
        { error: { status: 429, retryAfterSeconds: 0.05 } },
        { error: { status: 529 } },
        { text: "finally" },
      );
      const inner = new OpenAIProvider({ apiKey: "k", baseUrl: `${sim.url}/v1` });
      const { waits, sleep } = recordingSleep();
      const provider = new RetryingProvider(inner, { sleep, random: () => 0.5 });
      const events = await collect(provider.stream(request(), never()));
      expect(textOf(events)).toBe("finally");
      expect(events.at(-1)).toEqual({ type: "stop", reason: "end_turn" });
      expect(waits).toEqual([50, 1_000]);
      expect(sim.requests).toHaveLength(3);
      expect(provider.id).toBe("openai");
    });
  });
});
