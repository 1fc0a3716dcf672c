/**
 * When a job is due: a cron expression in an IANA timezone (node-cron's parser and its
 * field-by-field validation), a fixed interval, or one moment. Times are epoch ms; the next due
 * time is computed from a given instant, never from the wall clock, so the scheduler's injected
 * clock drives everything. Across a DST change a cron job keeps its wall-clock time: `0 9 * * *`
 * runs at 09:00 local on both sides. A wall time that occurs twice (clocks going back) runs
 * once; one that does not exist that day (clocks going forward) is skipped that day.
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
}

interface Fields {
  minute: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  month: Set<number>;
  dow: Set<number>;
  /** Vixie cron: with both day fields restricted, a day matching either runs. */
  domStar: boolean;
  dowStar: boolean;
}

const fieldCache = new Map<string, Fields>();

function fieldsOf(expr: string): Fields {
  const hit = fieldCache.get(expr);
  if (hit) return hit;
  const p = parse(expr);
  const parts = expr.trim().split(/\s+/);
  const [domRaw, , dowRaw] = parts.slice(-3);
  const f: Fields = {
    minute: new Set(p.minute),
    hour: new Set(p.hour),
    dom: new Set(p.dayOfMonth.map(Number)),
    month: new Set(p.month),
    dow: new Set(p.dayOfWeek.map((d) => Number(d) % 7)),
    domStar: domRaw === "*",
    dowStar: dowRaw === "*",
  };
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

function wallKey(w: Wall): number {
  return ((((w.year * 100 + w.month) * 100 + w.day) * 100 + w.hour) * 100 + w.minute) as number;
}

function dayMatches(f: Fields, w: Wall): boolean {
  if (!f.month.has(w.month)) return false;
  const dom = f.dom.has(w.day);
  const dow = f.dow.has(w.dow);
  if (f.domStar || f.dowStar) return (f.domStar || dom) && (f.dowStar || dow);
  return dom || dow;
}

/** Search at most this far ahead (a Feb 29 job on a Monday can be years away). */
const HORIZON_MS = 8 * 366 * 86_400_000;

/** The first minute strictly after `afterMs` at which `expr` is due in `tz`, or undefined. */
export function nextCronTime(expr: string, tz: string, afterMs: number): number | undefined {
  const f = fieldsOf(expr);
  const after = wallKey(wallTime(afterMs, tz));
  let t = Math.floor(afterMs / 60_000) * 60_000 + 60_000;
  const end = afterMs + HORIZON_MS;
  while (t <= end) {
    const w = wallTime(t, tz);
    if (!dayMatches(f, w)) {
      // Jump whole days to a local midnight (every jump is re-checked): to the next allowed day
      // of the month when only the day of month restricts, else to tomorrow; past the month's
      // end (or out of an excluded month) to the first of the next.
      const monthDays = new Date(Date.UTC(w.year, w.month, 0)).getUTCDate();
      let days = 1;
      if (!f.month.has(w.month)) days = monthDays - w.day + 1;
      else if (!f.domStar && f.dowStar) {
        let d = w.day + 1;
        while (d <= monthDays && !f.dom.has(d)) d++;
        days = d - w.day;
      }
      t += ((days - 1) * 24 * 60 + 24 * 60 - (w.hour * 60 + w.minute)) * 60_000;
      continue;
    }
    if (!f.hour.has(w.hour)) {
      t += (60 - w.minute) * 60_000;
      continue;
    }
    // A wall time that comes round again after clocks go back is not a new slot.
    if (f.minute.has(w.minute) && wallKey(w) > after) return t;
    t += 60_000;
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
    const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?$/.exec(t);
    if (iso)
      at = zonedTime(
        tz,
        Number(iso[1]),
        Number(iso[2]),
        Number(iso[3]),
        Number(iso[4] ?? 0),
        Number(iso[5] ?? 0),
      );
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
