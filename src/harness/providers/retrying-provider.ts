/**
 * Retry on the same provider, as a wrapper implementing the same port. A failure is retried
 * only when its kind is retryable and nothing of the reply (text or tool call) has been passed
 * on yet: a partial answer is never replayed.
 */
import { backoffDelayMs } from "../../util/backoff.js";
import { type Clock, systemClock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { ModelProvider, ModelRequest, ProviderEvent } from "./types.js";
import { ProviderError } from "./provider-error.js";

/** Options of {@link RetryingProvider}. */
export interface RetryingProviderOptions {
  /** Attempts in total, the first included; default 3. */
  maxAttempts?: number;
  /** Backoff ceiling of the first retry (the server named no wait); doubles per retry; default 500 ms. */
  baseDelayMs?: number;
  /** Cap of the backoff ceiling; default 8_000 ms. */
  maxDelayMs?: number;
  /** Cap of a server-requested wait (`retry-after`); default 60_000 ms. */
  maxRetryAfterMs?: number;
  /** Whose timers the waits run on (`clock.sleep`, aborted by the stream's signal); default `systemClock`. */
  clock?: Clock;
  /** Uniform [0, 1) source for the full jitter; default Math.random. */
  random?: () => number;
  /** Where retries are logged; default none. */
  logger?: Logger;
}

/**
 * Wraps a provider with retries. The wait is the server's `retryAfterMs` (capped at
 * `maxRetryAfterMs`) when given, else full-jitter backoff (`backoffDelayMs`): a uniform wait
 * under `min(maxDelayMs, baseDelayMs × 2^(retry-1))`. Waits run on the clock and honour the
 * AbortSignal: an abort while waiting ends the stream with an `aborted` error. Like every
 * provider, it never throws.
 */
export class RetryingProvider implements ModelProvider {
  readonly id: string;
  readonly simulated: boolean;
  readonly #inner: ModelProvider;
  readonly #maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: Logger | undefined;

  constructor(inner: ModelProvider, options: RetryingProviderOptions = {}) {
    this.#inner = inner;
    this.id = inner.id;
    this.simulated = inner.simulated;
    this.#maxAttempts = check("maxAttempts", options.maxAttempts ?? 3, 1, true);
    this.#baseDelayMs = check("baseDelayMs", options.baseDelayMs ?? 500, 0);
    this.#maxDelayMs = check("maxDelayMs", options.maxDelayMs ?? 8_000, 0);
    this.#maxRetryAfterMs = check("maxRetryAfterMs", options.maxRetryAfterMs ?? 60_000, 0);
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    for (let attempt = 1; ; attempt++) {
      let produced = false;
      let failure: ProviderError | undefined;
      try {
        for await (const event of this.#inner.stream(request, signal)) {
          if (event.type === "error") {
            failure = event.error;
            break;
          }
          if (event.type === "text_delta" || event.type === "tool_call") produced = true;
          yield event;
        }
      } catch (err) {
        // The inner provider broke the contract by throwing; keep ours.
        failure = new ProviderError("unknown", `${this.id} stream threw`, { cause: err, provider: this.id });
      }
      if (!failure) return;
      if (produced || !failure.retryable || attempt >= this.#maxAttempts || signal.aborted) {
        yield { type: "error", error: failure };
        return;
      }
      const waitMs = this.#delayMs(failure, attempt);
      this.#logger?.warn(
        { provider: this.id, kind: failure.kind, attempt, maxAttempts: this.#maxAttempts, waitMs },
        "model call failed; retrying",
      );
      // No call is in flight from here to retry_resume: the consumer may give its slot back.
      yield { type: "retry_wait", attempt, waitMs, error: failure };
      try {
        await this.#clock.sleep(waitMs, signal);
      } catch (err) {
        const aborted = new ProviderError("aborted", `${this.id} aborted while waiting to retry`, {
          cause: err,
          provider: this.id,
        });
        yield { type: "error", error: aborted };
        return;
      }
      // Yielded before the next attempt starts, so a consumer can take a slot first. An abort
      // meanwhile is the inner provider's to report: its stream ends with an `aborted` error.
      yield { type: "retry_resume", attempt: attempt + 1 };
    }
  }

  #delayMs(failure: ProviderError, attempt: number): number {
    return backoffDelayMs(attempt, {
      baseMs: this.#baseDelayMs,
      maxMs: this.#maxDelayMs,
      random: this.#random,
      retryAfterMs: failure.retryAfterMs,
      maxRetryAfterMs: this.#maxRetryAfterMs,
    });
  }
}

function check(field: string, value: number, min: number, integer = false): number {
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    const expected = integer ? `an integer >= ${min}` : `a number >= ${min}`;
    throw new RangeError(`RetryingProviderOptions.${field}: got ${value}, expected ${expected}`);
  }
  return value;
}
