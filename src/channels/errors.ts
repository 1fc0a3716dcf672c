/** Errors of the channel port: a refusal to take a message now, a typed send failure. */

/**
 * `accept` could not take a message for now (shutting down, the store failing): nothing was
 * committed, and the platform should deliver it again, after `retryAfterMs` if it can wait.
 */
export class SinkUnavailableError extends Error {
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs = 5_000, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "SinkUnavailableError";
    this.retryAfterMs = retryAfterMs;
  }
}

/** Typed send failure: the outbox retries `retryable` ones, after `retryAfterMs` if given. */
export class ChannelSendError extends Error {
  readonly kind: "rate_limit" | "transient" | "permanent";
  readonly retryAfterMs: number | undefined;
  constructor(
    kind: "rate_limit" | "transient" | "permanent",
    message: string,
    options: { cause?: unknown; retryAfterMs?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "ChannelSendError";
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
  }
  get retryable(): boolean {
    return this.kind !== "permanent";
  }
}
