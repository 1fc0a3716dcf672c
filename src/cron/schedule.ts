/**
 * When a job is due: a cron expression in an IANA timezone (node-cron's parser and its
 * field-by-field validation), a fixed interval, or one moment. Times are epoch ms; the next due
 * time is computed from a given instant, never from the wall clock, so the scheduler's injected
 * clock drives everything. Across a DST change a cron job keeps its wall-clock time: `0 9 * * *`
 * runs at 09:00 local on both sides; how a time that occurs twice or not at all runs is told at
 * `nextCronTime`. Day fields follow Vixie cron (both restricted: either matches), plus `L` (the
 * month's last day), `5L` (its last Friday) and `1#2` (its second Monday).
 */
import { parse, validateDetailed } from "node-cron";

/** A job's schedule as stored. */
export type Schedule =
  | { kind: "cron"; expr: string; tz: string }
  | { kind: "every"; everyMs: number; anchorMs: number }
  | { kind: "at"; atMs: number };

/** The shortest `every` interval, and the least time between two runs of a cron job. */
export const MIN_INTERVAL_MS = 60_000;

/** A schedule that cannot be used, with the field at fault. */
export class ScheduleError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "ScheduleError";
    this.field = field;
  }
}

/** Throws ScheduleError naming the field unless `tz` is an IANA timezone this runtime knows. */
export function checkTimezone(tz: string, field = "tz"): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
  } catch {
    throw new ScheduleError(field, `unknown timezone "${tz}" (expected an IANA name such as Europe/Berlin)`);
  }
}

/** Throws ScheduleError with node-cron's own messages unless `expr` is a valid cron expression. */
export function checkCron(expr: string, field = "cron"): void {
  const v = validateDetailed(expr);
  if (!v.valid) {
    const why = v.errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join("; ");
    throw new ScheduleError(field, `invalid cron expression "${expr}" (${why})`);
  }
  if (expr.trim().split(/\s+/).length === 6)
    throw new ScheduleError(
      field,
      `"${expr}" has a seconds field; jobs run at most once a minute (use 5 fields)`,
    );
  fieldsOf(expr, field);
}

/** Throws ScheduleError naming the field when `expr` has no run within eight years of `nowMs` in `tz`. */
export function checkFires(expr: string, tz: string, nowMs: number, field = "cron"): void {
  if (nextCronTime(expr, tz, nowMs) === undefined)
    throw new ScheduleError(field, `"${expr}" never fires (no matching day within eight years in ${tz})`);
}

interface Fields {
  minute: number[];
  hour: number[];
  dom: Set<number>;
  /** `L` in the day of month: the month's last day. */
  domLast: boolean;
  month: Set<number>;
  dow: Set<number>;
  /** `5L`: the month's last Friday (weekday numbers). */
  dowLast: Set<number>;
  /** `1#2`: the month's second Monday, as [weekday, n]. */
  dowNth: Array<[number, number]>;
  /**
   * Vixie cron: a day field that starts with `*` (or is `?`) is unrestricted; with both day fields
   * restricted, a day matching either runs. Macros count by their expansion (`@weekly` is
   * `0 0 * * 0`).
   */
  domStar: boolean;
  dowStar: boolean;
  /** Neither the minute nor the hour field starts with `*`: a fixed time of day (see below). */
  fixed: boolean;
}

/** The macros as Vixie cron expands them. */
const MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const fieldCache = new Map<string, Fields>();

function fieldsOf(expr: string, field = "cron"): Fields {
  const hit = fieldCache.get(expr);
  if (hit) return hit;
  const trimmed = expr.trim();
  const text = MACROS[trimmed.toLowerCase()] ?? trimmed;
  const p = parse(text);
  const parts = text.split(/\s+/);
  const [minuteRaw = "", hourRaw = "", domRaw = "", , dowRaw = ""] = parts.slice(-5);
  const starred = (raw: string) => raw.startsWith("*") || raw === "?";
  const f: Fields = {
    minute: [...new Set(p.minute)].sort((a, b) => a - b),
    hour: [...new Set(p.hour)].sort((a, b) => a - b),
    dom: new Set(),
    domLast: false,
    month: new Set(p.month),
    dow: new Set(),
    dowLast: new Set(),
    dowNth: [],
    domStar: starred(domRaw),
    dowStar: starred(dowRaw),
    fixed: !starred(minuteRaw) && !starred(hourRaw),
  };
  for (const d of p.dayOfMonth as Array<number | string>) {
    if (d === "L") f.domLast = true;
    else if (/^\d+$/.test(String(d))) f.dom.add(Number(d));
    else
      throw new ScheduleError(
        field,
        `"${expr}": "${d}" in the day of month is not supported (numbers, ranges, steps and L)`,
      );
  }
  for (const d of p.dayOfWeek as Array<number | string>) {
    const text = String(d);
    const nth = /^(\d)#([1-5])$/.exec(text);
    const last = /^(\d)L$/.exec(text);
    if (/^\d$/.test(text)) f.dow.add(Number(text) % 7);
    else if (nth) f.dowNth.push([Number(nth[1]) % 7, Number(nth[2])]);
    else if (last) f.dowLast.add(Number(last[1]) % 7);
    else
      throw new ScheduleError(
        field,
        `"${expr}": "${text}" in the day of week is not supported (numbers, names, ranges, steps, 5L and 1#2)`,
      );
  }
  if (fieldCache.size > 1_000) fieldCache.clear();
  fieldCache.set(expr, f);
  return f;
}

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  dow: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time of instant `ms` in `tz`. */
export function wallTime(ms: number, tz: string): Wall {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      weekday: "short",
    });
    formatters.set(tz, f);
  }
  const w: Wall = { year: 0, month: 0, day: 0, hour: 0, minute: 0, dow: 0 };
  for (const part of f.formatToParts(ms)) {
    if (part.type === "weekday") w.dow = WEEKDAYS.indexOf(part.value);
    else if (part.type in w) (w as unknown as Record<string, number>)[part.type] = Number(part.value);
  }
  return w;
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** The local date `utcDay` (a UTC midnight standing for it) matches the day fields. */
function dayMatches(f: Fields, utcDay: number): boolean {
  const date = new Date(utcDay);
  if (!f.month.has(date.getUTCMonth() + 1)) return false;
  const day = date.getUTCDate();
  const weekday = date.getUTCDay();
  const monthDays = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  const dom = f.dom.has(day) || (f.domLast && day === monthDays);
  const dow =
    f.dow.has(weekday) ||
    (f.dowLast.has(weekday) && day + 7 > monthDays) ||
    f.dowNth.some(([d, n]) => d === weekday && Math.ceil(day / 7) === n);
  if (f.domStar || f.dowStar) return (f.domStar || dom) && (f.dowStar || dow);
  return dom || dow;
}

/**
 * Offsets already read, by zone and instant: a job's next run asks for the same day bounds again
 * (and every job of a zone shares them), and each read is a formatToParts. Exact, so bounded by
 * size only: cleared when full.
 */
const offsets = new Map<string, number>();
const MAX_OFFSETS = 4_096;

/** Wall minus UTC at instant `ms` in `tz`, in ms. */
function offsetAt(ms: number, tz: string): number {
  const key = `${tz}\u0000${ms}`;
  const hit = offsets.get(key);
  if (hit !== undefined) return hit;
  const w = wallTime(ms, tz);
  const offset = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute) - Math.floor(ms / 60_000) * 60_000;
  if (offsets.size >= MAX_OFFSETS) offsets.clear();
  offsets.set(key, offset);
  return offset;
}

/** The first instant whose offset is `after`, between `lo` (offset `before`) and `hi`. */
function transitionAt(lo: number, hi: number, before: number, tz: string): number {
  let [a, b] = [lo, hi];
  while (b - a > 60_000) {
    const mid = Math.floor((a + b) / 120_000) * 60_000;
    if (offsetAt(mid, tz) === before) a = mid;
    else b = mid;
  }
  return b;
}

/** Search at most this far ahead (a Feb 29 job on a Monday can be years away). */
const HORIZON_DAYS = 8 * 366;

/**
 * The first minute strictly after `afterMs` at which `expr` is due in `tz`, or undefined when
 * there is none within eight years. Days are matched on the local calendar; each matching day's
 * times become instants by the day's UTC offset. On a day the offset changes: a wall time that
 * occurs twice runs once, at its first occurrence, for a fixed time of day (`30 2 * * *`), and at
 * both for a job with `*` in its minute or hour (it keeps its rhythm through the repeated hour); a
 * wall time that does not exist (clocks going forward) runs at the first instant after the gap for
 * a fixed time of day — the daily backup still runs that day, as Vixie cron, cronie and systemd
 * run it — and is skipped by a job with `*` in its minute or hour, whose next slot comes anyway.
 */
export function nextCronTime(expr: string, tz: string, afterMs: number): number | undefined {
  const f = fieldsOf(expr);
  const start = wallTime(afterMs, tz);
  const firstDay = Date.UTC(start.year, start.month - 1, start.day);
  for (let k = 0; k <= HORIZON_DAYS; k++) {
    const day = firstDay + k * 86_400_000;
    if (!dayMatches(f, day)) continue;
    // Offsets well before the local day begins and well after it ends (UTC offsets are −12…+14 h).
    const lo = day - 15 * 3_600_000;
    const hi = day + 39 * 3_600_000;
    const before = offsetAt(lo, tz);
    const after = offsetAt(hi, tz);
    if (before === after) {
      for (const h of f.hour) {
        if (k === 0 && h < start.hour) continue;
        for (const m of f.minute) {
          const t = day + (h * 60 + m) * 60_000 - before;
          if (t > afterMs) return t;
        }
      }
      continue;
    }
    // The offset changes on or around this day: every instant of every time, earliest first.
    const transition = transitionAt(lo, hi, before, tz);
    let best: number | undefined;
    for (const h of f.hour)
      for (const m of f.minute) {
        const wall = day + (h * 60 + m) * 60_000;
        const instants: number[] = [];
        for (const offset of [before, after]) {
          const t = wall - offset;
          if ((offset === before ? t < transition : t >= transition) && !instants.includes(t))
            instants.push(t);
        }
        instants.sort((a, b) => a - b);
        const runs =
          instants.length === 0 ? (f.fixed ? [transition] : []) : f.fixed ? instants.slice(0, 1) : instants;
        for (const t of runs) if (t > afterMs && (best === undefined || t < best)) best = t;
      }
    if (best !== undefined) return best;
  }
  return undefined;
}

/** The first due time strictly after `afterMs`, or undefined (a one-shot that has passed). */
export function nextDue(s: Schedule, afterMs: number): number | undefined {
  switch (s.kind) {
    case "cron":
      return nextCronTime(s.expr, s.tz, afterMs);
    case "every": {
      const n = Math.floor((afterMs - s.anchorMs) / s.everyMs) + 1;
      return s.anchorMs + Math.max(1, n) * s.everyMs;
    }
    case "at":
      return s.atMs > afterMs ? s.atMs : undefined;
  }
}

/** Parses `90m`, `2h`, `1d`, `45s`, `1h30m` into ms; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(?:(\d+)\s*d)?\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m(?:in)?)?\s*(?:(\d+)\s*s)?\s*$/i.exec(text);
  if (!m?.slice(1).some(Boolean)) return undefined;
  const [d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number];
  return (((d * 24 + h) * 60 + mi) * 60 + s) * 1000;
}

/** The instant of wall time `y-mo-d h:mi` in `tz` (the earlier one when it occurs twice). */
export function zonedTime(tz: string, y: number, mo: number, d: number, h: number, mi: number): number {
  const naive = Date.UTC(y, mo - 1, d, h, mi);
  // Two corrections cover any offset and a DST change between the guess and the answer.
  let t = naive;
  for (let i = 0; i < 2; i++) {
    const w = wallTime(t, tz);
    const shown = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute);
    t += naive - shown;
  }
  return t;
}

/**
 * Resolves a one-shot time: an ISO time (`2026-12-01T09:00`, read in `tz` without an offset),
 * `in 20m` / `in 2h`, or `tomorrow 9:00` / `today 18:30` in `tz`. Throws ScheduleError naming
 * `field` when it cannot be read or is not in the future.
 */
export function resolveAt(text: string, tz: string, nowMs: number, field = "at"): number {
  const t = text.trim();
  let at: number | undefined;
  const rel = /^in\s+(.+)$/i.exec(t);
  const day = /^(today|tomorrow)\s+(\d{1,2}):(\d{2})$/i.exec(t);
  if (rel) {
    const ms = parseDuration(rel[1] ?? "");
    if (ms !== undefined) at = nowMs + ms;
  } else if (day) {
    if (Number(day[2]) > 23 || Number(day[3]) > 59)
      throw new ScheduleError(field, `"${text}" is not a time of day (hours 0–23, minutes 0–59)`);
    const w = wallTime(nowMs, tz);
    const base =
      Date.UTC(w.year, w.month - 1, w.day) + (day[1]?.toLowerCase() === "tomorrow" ? 86_400_000 : 0);
    const b = new Date(base);
    at = zonedTime(
      tz,
      b.getUTCFullYear(),
      b.getUTCMonth() + 1,
      b.getUTCDate(),
      Number(day[2]),
      Number(day[3]),
    );
  } else if (/^\d{4}-\d{2}-\d{2}/.test(t)) {
    // Date.parse and Date.UTC roll a day or time that does not exist over into another one
    // (2027-02-30 → 2 March): each part is checked first.
    const parts = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?/.exec(t);
    const [y, mo, d, h, mi, sec] = [1, 2, 3, 4, 5, 6].map((i) => Number(parts?.[i] ?? 0)) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const monthDays = mo >= 1 && mo <= 12 ? new Date(Date.UTC(y, mo, 0)).getUTCDate() : 0;
    if (d < 1 || d > monthDays || h > 23 || mi > 59 || sec > 59)
      throw new ScheduleError(field, `"${text}" is not a real date and time (no such day, hour or minute)`);
    const local = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(t);
    if (local) at = zonedTime(tz, y, mo, d, h, mi) + sec * 1000;
    else if (!Number.isNaN(Date.parse(t))) at = Date.parse(t);
  }
  if (at === undefined || !Number.isFinite(at))
    throw new ScheduleError(
      field,
      `cannot read "${text}" (expected an ISO time, "in 20m" or "tomorrow 9:00")`,
    );
  if (at <= nowMs) throw new ScheduleError(field, `"${text}" is in the past`);
  return at;
}
