/**
 * RetryingProvider: retries retryable failures before any output, waiting on a ManualClock;
 * plus one run through the real OpenAI SDK against the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../../src/harness/providers/openai.js";
import { RetryingProvider } from "../../../src/harness/providers/retrying-provider.js";
import type {
  ModelProvider,
  ModelRequest,
  ProviderErrorKind,
  ProviderEvent,
} from "../../../src/harness/providers/types.js";
import { ProviderError } from "../../../src/harness/providers/provider-error.js";
import { ManualClock } from "../../../src/util/clock.js";
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

/**
 * A ManualClock that lets every announced retry wait pass (the test stands in for time), and
 * the waits announced. `slept()` is the time the clock moved: what the provider really waited.
 */
function passingClock() {
  const clock = new ManualClock(0);
  const waits: number[] = [];
  const onEvent = (event: ProviderEvent) => {
    if (event.type !== "retry_wait") return;
    waits.push(event.waitMs);
    // Runs once the consumer asks for the next event, i.e. once the provider sleeps.
    void clock.advanceAsync(event.waitMs);
  };
  return { clock, waits, onEvent, slept: () => clock.now() };
}

const never = () => new AbortController().signal;

describe("RetryingProvider", () => {
  it("retries a 429 after its retry-after, then succeeds", async () => {
    const inner = new ScriptedProvider([[fail("rate_limit", 1_500)], OK]);
    const { clock, waits, onEvent, slept } = passingClock();
    const events = await collect(new RetryingProvider(inner, { clock }).stream(request(), never()), onEvent);
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
    expect(slept()).toBe(1_500);
  });

  it("sleeps on its clock: the retry starts when the wait has passed, not before", async () => {
    const inner = new ScriptedProvider([[fail("rate_limit", 1_500)], OK]);
    const clock = new ManualClock(0);
    const events: ProviderEvent[] = [];
    const done = collect(new RetryingProvider(inner, { clock }).stream(request(), never()), (e) =>
      events.push(e),
    );
    await clock.advanceAsync(1_499);
    expect(inner.calls).toBe(1);
    expect(events.map((e) => e.type)).toEqual(["retry_wait"]);
    await clock.advanceAsync(1);
    await done;
    expect(inner.calls).toBe(2);
  });

  it("caps a server-requested wait at maxRetryAfterMs", async () => {
    const inner = new ScriptedProvider([[fail("rate_limit", 600_000)], OK]);
    const { clock, waits, onEvent } = passingClock();
    await collect(
      new RetryingProvider(inner, { clock, maxRetryAfterMs: 10_000 }).stream(request(), never()),
      onEvent,
    );
    expect(waits).toEqual([10_000]);
  });

  it("backs off exponentially with full jitter, capped, and gives up after maxAttempts", async () => {
    const inner = new ScriptedProvider([
      [fail("overloaded")],
      [fail("network")],
      [fail("timeout")],
      [fail("overloaded")],
      [fail("overloaded")],
      [fail("overloaded")],
    ]);
    const { clock, waits, onEvent, slept } = passingClock();
    const provider = new RetryingProvider(inner, {
      clock,
      maxAttempts: 6,
      random: () => 1,
      maxDelayMs: 8_000,
    });
    const events = await collect(provider.stream(request(), never()), onEvent);
    expect(lastError(events).kind).toBe("overloaded");
    expect(inner.calls).toBe(6);
    // random() = 1 → the ceilings themselves: 500, 1000, 2000, 4000, then the 8 s cap.
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 8_000]);
    expect(slept()).toBe(15_500);
  });

  it("draws the wait uniformly below the ceiling (full jitter)", async () => {
    for (const [random, expected] of [
      [0, 0],
      [0.5, 250],
      [0.999, 500],
    ] as const) {
      const { clock, waits, onEvent } = passingClock();
      const inner = new ScriptedProvider([[fail("overloaded")], OK]);
      await collect(
        new RetryingProvider(inner, { clock, random: () => random }).stream(request(), never()),
        onEvent,
      );
      expect(waits).toEqual([expected]);
    }
  });

  it("makes 3 attempts by default", async () => {
    const inner = new ScriptedProvider([[fail("network")], [fail("network")], [fail("network")], OK]);
    const { clock, onEvent } = passingClock();
    const events = await collect(new RetryingProvider(inner, { clock }).stream(request(), never()), onEvent);
    expect(lastError(events).kind).toBe("network");
    expect(inner.calls).toBe(3);
  });

  it("does not retry once text has been passed on", async () => {
    const inner = new ScriptedProvider([[{ type: "text_delta", text: "par" }, fail("network")], OK]);
    const { clock, waits, onEvent } = passingClock();
    const events = await collect(new RetryingProvider(inner, { clock }).stream(request(), never()), onEvent);
    expect(events.map((e) => e.type)).toEqual(["text_delta", "error"]);
    expect(inner.calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it("does not retry a non-retryable kind (auth)", async () => {
    const inner = new ScriptedProvider([[fail("auth")], OK]);
    const clock = new ManualClock(0);
    const events = await collect(new RetryingProvider(inner, { clock }).stream(request(), never()));
    expect(lastError(events).kind).toBe("auth");
    expect(clock.pendingTimers).toBe(0);
    expect(inner.calls).toBe(1);
  });

  it("honours abort while waiting: ends with an aborted error at once", async () => {
    const inner = new ScriptedProvider([[fail("rate_limit", 60_000)], OK]);
    const controller = new AbortController();
    const clock = new ManualClock(0);
    const events = await collect(
      new RetryingProvider(inner, { clock }).stream(request(), controller.signal),
      (e) => {
        // Aborted as the wait begins; no time passes on the clock.
        if (e.type === "retry_wait") queueMicrotask(() => controller.abort(new Error("stop")));
      },
    );
    expect(events.map((e) => e.type)).toEqual(["retry_wait", "error"]);
    expect(lastError(events).kind).toBe("aborted");
    expect(clock.now()).toBe(0);
    expect(clock.pendingTimers).toBe(0); // the wait's timer is cleared
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
    expect(() => new RetryingProvider(inner, { baseDelayMs: -1 })).toThrow(/baseDelayMs: got -1/);
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
      const { clock, waits, onEvent } = passingClock();
      const provider = new RetryingProvider(inner, { clock, random: () => 0.5 });
      const events = await collect(provider.stream(request(), never()), onEvent);
      expect(textOf(events)).toBe("finally");
      expect(events.at(-1)).toEqual({ type: "stop", reason: "end_turn" });
      // The 429's retry-after as given; the 529's backoff: 0.5 × the 1 s ceiling of retry 2.
      expect(waits).toEqual([50, 500]);
      expect(sim.requests).toHaveLength(3);
      expect(provider.id).toBe("openai");
    });
  });
});
