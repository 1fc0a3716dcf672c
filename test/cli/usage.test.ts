/**
 * `switchyard usage`: tokens and cost of the model calls since a time, grouped by day, session,
 * model, origin or auth profile, read from a database seeded as a gateway commits its turns.
 */
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";
import { call, seedRuns, tokens } from "./seed-usage.js";

afterAll(removeTempDirs);

/** The CLI in UTC, so local times in the output are fixed. */
const UTC = { TZ: "UTC" };
const HOUR = 3_600_000;
const DM = "agent:main:telegram:dm:42";

/** A cron digest on 2024-01-14; a DM, a heartbeat and the DM again on 2024-01-15. */
async function seedHistory(home: string): Promise<void> {
  const jan14 = Date.UTC(2024, 0, 14, 10);
  const jan15 = Date.UTC(2024, 0, 15, 9);
  const sonnet = "anthropic/claude-sonnet-4-5";
  await seedRuns(home, [
    {
      sessionKey: "agent:main:cron:digest",
      trigger: "cron",
      calls: [
        call(jan14, sonnet, "work", tokens(400_000, 20_000), 1.5),
        call(jan14 + 5_000, "ollama/llama3.3", "default", tokens(4_000, 600), 0),
      ],
    },
    {
      sessionKey: DM,
      trigger: "user",
      calls: [
        call(jan15, sonnet, "work", tokens(12_000, 800, 30_000, 2_000), 0.0612),
        call(jan15 + 5_000, sonnet, "personal", tokens(3_000, 400, 32_000), 0.0246),
      ],
    },
    {
      sessionKey: "agent:main:heartbeat",
      trigger: "heartbeat",
      calls: [call(jan15 + HOUR, sonnet, "personal", tokens(9_000, 150, 0, 9_000), 0.0629)],
    },
    {
      sessionKey: DM,
      trigger: "user",
      calls: [call(jan15 + 2 * HOUR, "openai/gpt-5.1", "default", tokens(15_000, 900), 0.0278)],
    },
  ]);
}

describe("switchyard usage", () => {
  it("prints calls, tokens and cost per UTC day in time order, with a total line", async () => {
    const home = tempDir();
    await seedHistory(home);
    const r = await runCli(["usage", "--since", "2024-01-01", "--home", home], { env: UTC });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        "model calls since 2024-01-01 00:00:00 (--since 2024-01-01), by day",
        "DAY (UTC)   CALLS    INPUT  OUTPUT  CACHE READ  CACHE WRITE     COST",
        "2024-01-14      2  404,000  20,600           0            0    $1.50",
        "2024-01-15      4   39,000   2,250      62,000       11,000  $0.1765",
        "total           6  443,000  22,850      62,000       11,000    $1.68",
        "",
      ].join("\n"),
    );
  });

  it("groups by session, model, origin and profile, largest cost first", async () => {
    const home = tempDir();
    await seedHistory(home);
    const keys = async (by: string) => {
      const r = await runCli(["usage", "--by", by, "--since", "2024-01-01", "--home", home], { env: UTC });
      expect(r.code).toBe(0);
      const lines = r.out.trimEnd().split("\n");
      expect(lines[0]).toBe(`model calls since 2024-01-01 00:00:00 (--since 2024-01-01), by ${by}`);
      expect(lines.at(-1)).toMatch(/^total\s+6\s+443,000\s+22,850\s+62,000\s+11,000\s+\$1\.68$/);
      return lines.slice(2, -1).map((l) => l.split(/\s{2,}/));
    };
    expect(await keys("session")).toEqual([
      ["agent:main:cron:digest", "2", "404,000", "20,600", "0", "0", "$1.50"],
      [DM, "3", "30,000", "2,100", "62,000", "2,000", "$0.1136"],
      ["agent:main:heartbeat", "1", "9,000", "150", "0", "9,000", "$0.0629"],
    ]);
    expect((await keys("model")).map((c) => [c[0], c[1], c.at(-1)])).toEqual([
      ["anthropic/claude-sonnet-4-5", "4", "$1.65"],
      ["openai/gpt-5.1", "1", "$0.0278"],
      ["ollama/llama3.3", "1", "$0.0000"],
    ]);
    expect((await keys("origin")).map((c) => [c[0], c[1], c.at(-1)])).toEqual([
      ["cron", "2", "$1.50"],
      ["human", "3", "$0.1136"],
      ["heartbeat", "1", "$0.0629"],
    ]);
    expect((await keys("profile")).map((c) => [c[0], c[1], c.at(-1)])).toEqual([
      ["anthropic:work", "2", "$1.56"],
      ["anthropic:personal", "2", "$0.0875"],
      ["openai:default", "1", "$0.0278"],
      ["ollama:default", "1", "$0.0000"],
    ]);
  });

  it("counts the last 7 days by default; --since takes days, hours or minutes ago; --json", async () => {
    const home = tempDir();
    const now = Date.now();
    await seedRuns(home, [
      {
        sessionKey: DM,
        trigger: "user",
        calls: [call(now - 8 * 24 * HOUR, "openai/m", "default", tokens(1, 1), 0.5)],
      },
      {
        sessionKey: DM,
        trigger: "user",
        calls: [call(now - 3 * HOUR, "openai/m", "default", tokens(10, 5), 0.25)],
      },
      {
        sessionKey: DM,
        trigger: "wake",
        calls: [call(now - 60_000, "openai/m", "default", tokens(100, 50), 0.125)],
      },
    ]);
    const totalOf = async (...flags: string[]) => {
      const r = await runCli(["usage", "--json", ...flags, "--home", home]);
      expect(r.code).toBe(0);
      const body = JSON.parse(r.out) as {
        since: string;
        by: string;
        rows: Array<{ key: string }>;
        total: { calls: number; costUsd: number };
      };
      return {
        since: Date.parse(body.since),
        by: body.by,
        calls: body.total.calls,
        costUsd: body.total.costUsd,
      };
    };
    const week = await totalOf();
    expect(week).toMatchObject({ by: "day", calls: 2, costUsd: 0.375 });
    expect(Math.abs(week.since - (now - 7 * 24 * HOUR))).toBeLessThan(60_000);
    expect(await totalOf("--since", "10d")).toMatchObject({ calls: 3, costUsd: 0.875 });
    expect(await totalOf("--since", "2h")).toMatchObject({ calls: 1, costUsd: 0.125 });
    expect(await totalOf("--since", "30m", "--by", "origin")).toMatchObject({ by: "origin", calls: 1 });
  });

  it("says when there is nothing to show, with or without a database", async () => {
    const fresh = tempDir();
    const none = await runCli(["usage", "--home", fresh]);
    expect(none.code).toBe(0);
    expect(none.out).toMatch(/^no model calls since .* \(--since 7d\): no database at .*switchyard\.db yet/);
    const home = tempDir();
    await seedHistory(home);
    const empty = await runCli(["usage", "--since", "1h", "--home", home]);
    expect(empty.code).toBe(0);
    expect(empty.out).toMatch(/^no model calls since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(--since 1h\)\n$/);
  });

  it.each([
    [["--by", "week"], '--by: found "week", expected one of day, session, model, origin, profile'],
    [["--since", "2y"], '--since: found "2y", expected a time ago such as 7d, 12h or 30m'],
    [["--since", "0d"], '--since: found "0d", expected'],
    [["--since", "yesterday"], '--since: found "yesterday", expected'],
    [["--since", "2024-13-45"], '--since: found "2024-13-45", expected'],
  ])("refuses %j with exit 2, naming the flag and what it expects", async (flags, message) => {
    const r = await runCli(["usage", ...flags, "--home", tempDir()]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toContain(`switchyard usage: ${message}`);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });
});
