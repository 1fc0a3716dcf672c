/**
 * Times as people read them: relative ("in 4 min", "2 h ago") with the absolute time kept for a
 * tooltip, and durations ("1.2 s", "3 min").
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * `at` relative to `now` (both ms since the epoch): under 10 s "just now"; under a minute
 * seconds; under an hour minutes; under two days hours; then days. Past: "… ago"; future: "in …".
 */
export function relativeTime(at: number, now: number): string {
  const diff = at - now;
  const abs = Math.abs(diff);
  if (abs < 10_000) return "just now";
  let amount: string;
  if (abs < MINUTE) amount = `${Math.round(abs / 1000)} s`;
  else if (abs < HOUR) amount = `${Math.round(abs / MINUTE)} min`;
  else if (abs < 2 * DAY) amount = `${Math.round(abs / HOUR)} h`;
  else amount = `${Math.round(abs / DAY)} d`;
  return diff > 0 ? `in ${amount}` : `${amount} ago`;
}

/** The absolute time, for a `title`: "2026-11-29 23:45:02" in the browser's time zone. */
export function absoluteTime(at: number): string {
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A duration: "850 ms", "12.3 s", "4 min", "2.5 h", "3 d". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < MINUTE) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < HOUR) return `${Math.round(ms / MINUTE)} min`;
  if (ms < DAY) return `${(ms / HOUR).toFixed(1)} h`;
  return `${(ms / DAY).toFixed(1)} d`;
}
