/**
 * `switchyard usage [--by day|session|model|origin|profile] [--since 7d] [--json]`: tokens and
 * cost of the model calls since a time, grouped, read from the database (read-only), so it works
 * whether or not the gateway runs.
 */
import { existsSync } from "node:fs";
import { resolveHome } from "../config/home.js";
import type { TokenUsage } from "../harness/providers/types.js";
import type { UsageGrouping, UsageSummaryRow } from "../store/repos/usage-repo.js";
import type { CliOptions } from "./main.js";
import { databasePath, openForReading } from "./open-database.js";
import { localTime } from "./sessions.js";
import { type Column, count, formatTable, roundUsd, usd } from "./table.js";

/** The groupings `--by` accepts, with the header of their key column. */
const GROUP_HEADERS = {
  day: "DAY (UTC)",
  session: "SESSION",
  model: "MODEL",
  origin: "ORIGIN",
  profile: "PROFILE",
} as const satisfies Record<UsageGrouping, string>;

/** `--by` without the flag. */
const DEFAULT_BY: UsageGrouping = "day";
/** `--since` without the flag. */
const DEFAULT_SINCE = "7d";

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** Runs `usage`; returns the exit code (2 for a bad flag). */
export async function runUsage(options: CliOptions): Promise<number> {
  const now = Date.now();
  let by: UsageGrouping;
  let since: number;
  try {
    by = parseBy(options.by ?? DEFAULT_BY);
    since = parseSince(options.since ?? DEFAULT_SINCE, now);
  } catch (err) {
    // Only the flags' parsers run in the try: a TypeError is a bad flag value.
    if (!(err instanceof TypeError)) throw err;
    process.stderr.write(`switchyard usage: ${err.message}\n`);
    return 2;
  }
  const path = databasePath(resolveHome(options.home, process.env, process.cwd()));
  const hasDatabase = existsSync(path);
  let rows: UsageSummaryRow[] = [];
  if (hasDatabase) {
    const store = openForReading(path);
    try {
      rows = await store.usage.summarize({ since, by });
    } finally {
      await store.close();
    }
  }
  // Days read best in time order; every other grouping keeps the largest cost first.
  if (by === "day") rows.sort((a, b) => a.key.localeCompare(b.key));
  const total = totalOf(rows);
  if (options.json) {
    const priced = <T extends { costUsd: number }>(r: T): T => ({ ...r, costUsd: roundUsd(r.costUsd) });
    const body = { since: new Date(since).toISOString(), by, rows: rows.map(priced), total: priced(total) };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  const period = `since ${localTime(since)} (--since ${options.since ?? DEFAULT_SINCE})`;
  if (rows.length === 0) {
    const why = hasDatabase ? "" : `: no database at ${path} yet (the gateway creates it)`;
    process.stdout.write(`no model calls ${period}${why}\n`);
    return 0;
  }
  process.stdout.write(`model calls ${period}, by ${by}\n`);
  process.stdout.write(formatUsageTable(by, rows, total));
  return 0;
}

/** The rows and a total line as an aligned table with a header line. */
export function formatUsageTable(
  by: UsageGrouping,
  rows: readonly UsageSummaryRow[],
  total: Omit<UsageSummaryRow, "key">,
): string {
  const columns: Column[] = [
    { header: GROUP_HEADERS[by] },
    { header: "CALLS", right: true },
    { header: "INPUT", right: true },
    { header: "OUTPUT", right: true },
    { header: "CACHE READ", right: true },
    { header: "CACHE WRITE", right: true },
    { header: "COST", right: true },
  ];
  const line = (key: string, r: Omit<UsageSummaryRow, "key">) => [
    key,
    count(r.calls),
    count(r.usage.inputTokens),
    count(r.usage.outputTokens),
    count(r.usage.cacheReadTokens),
    count(r.usage.cacheWriteTokens),
    usd(r.costUsd),
  ];
  return formatTable(columns, [...rows.map((r) => line(r.key, r)), line("total", total)]);
}

/** `--by`: one of the groupings; a TypeError names the flag, the value and what was expected. */
export function parseBy(value: string): UsageGrouping {
  if (Object.hasOwn(GROUP_HEADERS, value)) return value as UsageGrouping;
  throw new TypeError(`--by: found "${value}", expected one of ${Object.keys(GROUP_HEADERS).join(", ")}`);
}

/**
 * `--since`: `Nd`, `Nh` or `Nm` (days, hours, minutes before `now`, N a whole number of at least
 * 1), or an ISO date: `2024-01-15` is 00:00 UTC that day (where a usage day starts), a date and
 * time without a zone is local time. Returns epoch ms; a TypeError names the flag, the value and
 * what was expected.
 */
export function parseSince(value: string, now: number): number {
  const relative = /^(\d+)([dhm])$/.exec(value);
  if (relative) {
    const n = Number(relative[1]);
    const unit = relative[2] as keyof typeof UNIT_MS;
    if (n >= 1) return now - n * UNIT_MS[unit];
  } else if (/^\d{4}-\d{2}-\d{2}(T.*)?$/.test(value)) {
    const at = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Date.parse(value);
    if (!Number.isNaN(at)) return at;
  }
  throw new TypeError(
    `--since: found "${value}", expected a time ago such as 7d, 12h or 30m, or a date such as 2024-01-15 (UTC) or 2024-01-15T09:00`,
  );
}

function totalOf(rows: readonly UsageSummaryRow[]): Omit<UsageSummaryRow, "key"> {
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let calls = 0;
  let costUsd = 0;
  for (const r of rows) {
    calls += r.calls;
    costUsd += r.costUsd;
    usage.inputTokens += r.usage.inputTokens;
    usage.outputTokens += r.usage.outputTokens;
    usage.cacheReadTokens += r.usage.cacheReadTokens;
    usage.cacheWriteTokens += r.usage.cacheWriteTokens;
  }
  return { calls, usage, costUsd };
}
