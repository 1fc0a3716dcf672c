/**
 * nextCronTime against a table of next-run sequences across DST changes (see
 * next-runs.table.ts for where the table comes from): each row's runs, one after another, from
 * its start. The cases are rows: `0 0 1 * *` in Berlin after 2026-03-10 fires on 1 April
 * (it fired on 1 May), `0 0 1 4 *` and `0 0 30 3 *` fire every year, `@weekly`, `@monthly`,
 * `@yearly` and `?` fire on their days only (they fired every day), and 02:30 runs right after
 * the jump on the spring-forward night (it was skipped).
 */
import { describe, expect, it } from "vitest";
import { nextCronTime } from "../../src/cron/schedule.js";
import { NEXT_RUNS } from "./next-runs.table.js";

const iso = (ms: number) => new Date(ms).toISOString().replace(":00.000Z", "Z");

describe("nextCronTime against the reference table", () => {
  it(`matches all ${NEXT_RUNS.length} sequences`, () => {
    const wrong: string[] = [];
    for (const [expr, tz, start, runs] of NEXT_RUNS) {
      const got: string[] = [];
      let t = Date.parse(start);
      for (let i = 0; i < runs.length; i++) {
        const next = nextCronTime(expr, tz, t);
        if (next === undefined) break;
        got.push(iso(next));
        t = next;
      }
      if (got.join(" ") !== runs.join(" "))
        wrong.push(
          `${expr} in ${tz} from ${start}: expected ${runs.join(" ")}, got ${got.join(" ") || "none"}`,
        );
    }
    expect(wrong).toEqual([]);
  });

  it("has the issue's cases", () => {
    const row = (expr: string, tz: string, start: string) =>
      NEXT_RUNS.find((r) => r[0] === expr && r[1] === tz && r[2] === start)?.[3];
    expect(row("0 0 1 * *", "Europe/Berlin", "2026-03-10T12:00Z")?.[0]).toBe("2026-03-31T22:00Z");
    expect(row("0 0 1 4 *", "Europe/Berlin", "2026-03-10T12:00Z")).toEqual([
      "2026-03-31T22:00Z",
      "2027-03-31T22:00Z",
      "2028-03-31T22:00Z",
    ]);
    expect(row("@monthly", "Europe/Berlin", "2026-10-23T12:00Z")?.[0]).toBe("2026-10-31T23:00Z");
    expect(row("30 2 * * *", "Europe/Berlin", "2026-03-27T12:00Z")?.[1]).toBe("2026-03-29T01:00Z");
  });
});
