/** Relative times ("in 4 min", "2 h ago") and durations. */
import { describe, expect, it } from "vitest";
import { absoluteTime, duration, relativeTime } from "../../ui/src/lib/time.js";

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const MIN = 60_000;

describe("relativeTime", () => {
  it("says past and future in the largest sensible unit", () => {
    expect(relativeTime(NOW, NOW)).toBe("just now");
    expect(relativeTime(NOW - 9_000, NOW)).toBe("just now");
    expect(relativeTime(NOW - 30_000, NOW)).toBe("30 s ago");
    expect(relativeTime(NOW + 4 * MIN, NOW)).toBe("in 4 min");
    expect(relativeTime(NOW - 59 * MIN, NOW)).toBe("59 min ago");
    expect(relativeTime(NOW - 2 * 60 * MIN, NOW)).toBe("2 h ago");
    expect(relativeTime(NOW + 30 * 60 * MIN, NOW)).toBe("in 30 h");
    expect(relativeTime(NOW - 3 * 24 * 60 * MIN, NOW)).toBe("3 d ago");
  });

  it("gives the absolute time for a title", () => {
    expect(absoluteTime(NOW)).toMatch(/^2026-11-(29|30) \d\d:00:00$/);
  });
});

describe("duration", () => {
  it("picks a unit", () => {
    expect(duration(850)).toBe("850 ms");
    expect(duration(12_340)).toBe("12.3 s");
    expect(duration(4 * MIN)).toBe("4 min");
    expect(duration(150 * MIN)).toBe("2.5 h");
    expect(duration(3 * 24 * 60 * MIN)).toBe("3.0 d");
  });
});
