/** Small statistics and timing helpers for the benchmarks. */
import { setTimeout as delay } from "node:timers/promises";

/** Nearest-rank percentile (`p` in 0..100) of `values`; NaN when empty. Does not mutate. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** The median (nearest rank, lower middle). */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Rounds to `digits` significant decimals for printing (keeps at least one decimal). */
export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toFixed(digits);
}

/** Sleeps `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return delay(ms);
}

/** Progress line on stderr (stdout carries only the table and the JSON line). */
export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
