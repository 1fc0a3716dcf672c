/** Due times: cron in a timezone (across both DST changes), every, at, and the bad inputs named. */
import { describe, expect, it } from "vitest";
import {
  MIN_INTERVAL_MS,
  ScheduleError,
  checkCron,
  checkFires,
  checkTimezone,
  nextCronTime,
  nextDue,
  parseDuration,
  resolveAt,
  zonedTime,
} from "../../src/cron/schedule.js";

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe("nextCronTime", () => {
  it("weekdays at 09:00 Berlin: the next slot, skipping the weekend", () => {
    const friday10 = Date.parse("2026-11-27T09:00:00Z"); // Fri 10:00 in Berlin (UTC+1)
    expect(iso(nextCronTime("0 9 * * 1-5", "Europe/Berlin", friday10))).toBe("2026-11-30T08:00:00.000Z");
  });

  it("keeps the wall-clock time across spring forward and fall back", () => {
    // Berlin: 2027-03-28 02:00 → 03:00 (UTC+1 → UTC+2); 2026-10-25 03:00 → 02:00 (UTC+2 → UTC+1).
    const beforeSpring = Date.parse("2027-03-27T12:00:00Z");
    const sat = nextCronTime("0 9 * * *", "Europe/Berlin", beforeSpring);
    expect(iso(sat)).toBe("2027-03-28T07:00:00.000Z"); // Sunday 09:00 CEST
    expect(iso(nextCronTime("0 9 * * *", "Europe/Berlin", Date.parse("2026-10-24T12:00:00Z")))).toBe(
      "2026-10-25T08:00:00.000Z", // Sunday 09:00 CET
    );
  });

  it("runs a wall time that occurs twice once, and one that does not exist that day right after the gap", () => {
    // 02:30 happens twice on 2026-10-25 in Berlin: only the first counts.
    const first = nextCronTime("30 2 * * *", "Europe/Berlin", Date.parse("2026-10-24T12:00:00Z"));
    expect(iso(first)).toBe("2026-10-25T00:30:00.000Z");
    expect(iso(nextCronTime("30 2 * * *", "Europe/Berlin", first as number))).toBe(
      "2026-10-26T01:30:00.000Z",
    );
    // 02:30 does not exist on 2027-03-28: it runs at 03:00 CEST, the first instant after the gap.
    expect(iso(nextCronTime("30 2 * * *", "Europe/Berlin", Date.parse("2027-03-27T12:00:00Z")))).toBe(
      "2027-03-28T01:00:00.000Z",
    );
  });

  it("finds a rare day years ahead (29 February), and honours either day field when both are set", () => {
    expect(iso(nextCronTime("0 0 29 2 *", "UTC", Date.parse("2026-11-24T00:00:00Z")))).toBe(
      "2028-02-29T00:00:00.000Z",
    );
    // The 1st or a Friday (vixie cron): Friday 2026-11-27 comes before 1 December.
    expect(iso(nextCronTime("0 12 1 * 5", "UTC", Date.parse("2026-11-24T00:00:00Z")))).toBe(
      "2026-11-27T12:00:00.000Z",
    );
  });
});

describe("every, at and durations", () => {
  it("every: anchored slots strictly after the given time", () => {
    const s = { kind: "every" as const, everyMs: 90 * 60_000, anchorMs: 0 };
    expect(nextDue(s, 0)).toBe(90 * 60_000);
    expect(nextDue(s, 90 * 60_000)).toBe(180 * 60_000);
    expect(nextDue(s, 100 * 60_000)).toBe(180 * 60_000);
    expect(nextDue({ kind: "at", atMs: 500 }, 100)).toBe(500);
    expect(nextDue({ kind: "at", atMs: 500 }, 500)).toBeUndefined();
    expect(MIN_INTERVAL_MS).toBe(60_000);
  });

  it("reads durations", () => {
    expect(parseDuration("90m")).toBe(5_400_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("2d")).toBe(172_800_000);
    expect(parseDuration("10s")).toBe(10_000);
    expect(parseDuration("soon")).toBeUndefined();
    expect(parseDuration("")).toBeUndefined();
  });

  it("resolves one-shot times in the job's timezone", () => {
    const now = Date.parse("2026-11-24T22:00:00Z"); // 23:00 in Berlin
    expect(resolveAt("in 20m", "UTC", now)).toBe(now + 20 * 60_000);
    expect(iso(resolveAt("tomorrow 9:00", "Europe/Berlin", now))).toBe("2026-11-25T08:00:00.000Z");
    expect(iso(resolveAt("2026-12-01T09:00", "America/New_York", now))).toBe("2026-12-01T14:00:00.000Z");
    expect(iso(resolveAt("2026-12-01T09:00:00Z", "Europe/Berlin", now))).toBe("2026-12-01T09:00:00.000Z");
    expect(iso(zonedTime("Europe/Berlin", 2027, 3, 28, 3, 0))).toBe("2027-03-28T01:00:00.000Z");
  });
});

describe("bad schedules are named", () => {
  const message = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(ScheduleError);
      return (err as Error).message;
    }
    throw new Error("expected a ScheduleError");
  };

  it("an invalid expression or timezone, a seconds field, a past or unreadable time", () => {
    expect(message(() => checkCron("61 * * * *"))).toBe(
      'cron: invalid cron expression "61 * * * *" (minute: 61 is a invalid expression for minute)',
    );
    expect(message(() => checkCron("* * * * * *"))).toMatch(/^cron: "\* \* \* \* \* \*" has a seconds field/);
    expect(
      message(() => checkFires("0 0 * 2 1#5", "Europe/Berlin", Date.parse("2026-11-24T00:00:00Z"))),
    ).toBe('cron: "0 0 * 2 1#5" never fires (no matching day within eight years in Europe/Berlin)');
    expect(() => checkFires("0 0 L 2 *", "UTC", Date.parse("2026-11-24T00:00:00Z"))).not.toThrow();
    expect(message(() => checkTimezone("Mars/Olympus"))).toBe(
      'tz: unknown timezone "Mars/Olympus" (expected an IANA name such as Europe/Berlin)',
    );
    const now = Date.parse("2026-11-24T22:00:00Z");
    expect(message(() => resolveAt("2020-01-01T00:00", "UTC", now))).toBe(
      'at: "2020-01-01T00:00" is in the past',
    );
    expect(message(() => resolveAt("whenever", "UTC", now))).toMatch(/^at: cannot read "whenever"/);
    // Times that do not exist are refused, not rolled over into another time.
    for (const bad of ["tomorrow 25:00", "tomorrow 9:75"])
      expect(message(() => resolveAt(bad, "UTC", now))).toBe(
        `at: "${bad}" is not a time of day (hours 0–23, minutes 0–59)`,
      );
    for (const bad of [
      "2027-02-30T10:00:00",
      "2027-02-30",
      "2027-13-01T10:00",
      "2027-01-01T24:00",
      "2027-02-29T10:00Z",
    ])
      expect(message(() => resolveAt(bad, "UTC", now))).toBe(
        `at: "${bad}" is not a real date and time (no such day, hour or minute)`,
      );
    expect(new Date(resolveAt("2028-02-29T10:00:30", "UTC", now)).toISOString()).toBe(
      "2028-02-29T10:00:30.000Z",
    );
  });
});
