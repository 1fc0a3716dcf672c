/** backoffDelayMs: full jitter under an exponential, capped ceiling; retry-after wins. */
import { describe, expect, it } from "vitest";
import { backoffDelayMs } from "../../src/util/backoff.js";

describe("backoffDelayMs", () => {
  const top = { baseMs: 1_000, maxMs: 60_000, random: () => 1 };

  it("doubles the ceiling per attempt up to maxMs", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelayMs(n, top))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000,
    ]);
    expect(backoffDelayMs(10_000, top)).toBe(60_000); // 2^9999 overflows past the cap, not NaN
  });

  it("draws the wait uniformly from [0, ceiling): full jitter", () => {
    expect(backoffDelayMs(3, { ...top, random: () => 0 })).toBe(0);
    expect(backoffDelayMs(3, { ...top, random: () => 0.25 })).toBe(1_000);
    const draws = Array.from({ length: 1_000 }, () => backoffDelayMs(3, { baseMs: 1_000, maxMs: 60_000 }));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThanOrEqual(4_000);
    expect(new Set(draws).size).toBeGreaterThan(100); // Math.random by default
  });

  it("counts an attempt below 1 as the first", () => {
    expect(backoffDelayMs(0, top)).toBe(1_000);
    expect(backoffDelayMs(-3, top)).toBe(1_000);
  });

  it("takes the platform's retry-after instead, without jitter, capped at maxRetryAfterMs", () => {
    expect(backoffDelayMs(5, { ...top, random: () => 0, retryAfterMs: 1_500 })).toBe(1_500);
    expect(backoffDelayMs(1, { ...top, retryAfterMs: 600_000, maxRetryAfterMs: 60_000 })).toBe(60_000);
    expect(backoffDelayMs(1, { ...top, retryAfterMs: 0 })).toBe(0);
    expect(backoffDelayMs(2, { ...top, retryAfterMs: undefined })).toBe(2_000);
  });
});
