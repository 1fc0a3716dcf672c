/**
 * The one retry backoff: exponential with full jitter ("Exponential Backoff And Jitter", AWS
 * Architecture Blog). Every retry loop computes its wait here; a wait the platform asked for
 * (retry-after) takes precedence.
 */

/** Options of {@link backoffDelayMs}. */
export interface BackoffOptions {
  /** Ceiling of the first retry's wait, in ms; doubles per attempt. */
  baseMs: number;
  /** Cap of the ceiling, in ms. */
  maxMs: number;
  /** Uniform [0, 1) source; default Math.random. Tests pass `() => 1` for the ceiling itself. */
  random?: (() => number) | undefined;
  /**
   * A wait the platform asked for (retry-after), in ms; when given it is the wait, capped at
   * `maxRetryAfterMs`, and no jitter applies. Default none.
   */
  retryAfterMs?: number | undefined;
  /** Cap of `retryAfterMs`; default no cap. */
  maxRetryAfterMs?: number | undefined;
}

/**
 * Wait before retry number `attempt` (1 for the first retry):
 * `retryAfterMs` (capped at `maxRetryAfterMs`) when the platform named one, else
 * `random() × min(maxMs, baseMs × 2^(attempt-1))`, rounded to whole ms.
 * An `attempt` below 1 counts as 1; the result is always a finite number >= 0.
 */
export function backoffDelayMs(attempt: number, options: BackoffOptions): number {
  const { retryAfterMs, maxRetryAfterMs = Number.POSITIVE_INFINITY } = options;
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs))
    return Math.max(0, Math.min(retryAfterMs, maxRetryAfterMs));
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 2^exponent overflows to Infinity long after it passed any cap; min() takes care of it.
  const ceilingMs = Math.min(options.maxMs, options.baseMs * 2 ** exponent);
  const random = options.random ?? Math.random;
  return Math.max(0, Math.round(random() * ceilingMs));
}
