/**
 * Contracts of the benchmark program: a benchmark is a function that returns table rows.
 * Nothing here runs.
 */

/** One line of the printed table, plus its machine-readable figures for the JSON line. */
export interface BenchRow {
  /** What is measured, with its unit, e.g. "Lane-queue overhead per task (µs)". */
  benchmark: string;
  /** The figure as printed, e.g. "p50 0.81 / p99 1.9". */
  figure: string;
  /** The stated target, or "—" when none is stated. */
  target: string;
  /** Whether the figure meets the target; undefined when there is no target. */
  met?: boolean;
  /** Raw figures, keyed by name with their unit as suffix (`p50Ms`, `usPerTask`). */
  values: Record<string, number>;
}

/**
 * One benchmark. `run` measures, bounded in time and count, cleans up after itself (child
 * processes killed, temp dirs removed, servers closed) even when it throws, and returns its rows.
 */
export interface Benchmark {
  /** Stable kebab-case id, used to select benchmarks on the command line. */
  id: string;
  run(): Promise<BenchRow[]>;
}
