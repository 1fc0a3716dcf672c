/**
 * The Models view's charts by day, drawn with uPlot. Imported lazily (its own chunk with uPlot),
 * so the first load does not pay for the charting library. uPlot sizes its elements through the
 * DOM, which the page's CSP (`style-src 'self'`) allows.
 */
import uPlot from "uplot";
import type { UsageRow } from "../../../src/admin/contract.js";

/** A chart drawn into an element; `destroy` removes it. */
export interface DrawnChart {
  resize(width: number): void;
  destroy(): void;
}

/** The colours of the series, read from the page's CSS variables (dark and light themes). */
function colour(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** Day keys (YYYY-MM-DD) → seconds since the epoch at UTC midnight, which uPlot's time axis takes. */
function daySeconds(rows: readonly UsageRow[]): number[] {
  return rows.map((r) => Date.parse(`${r.key}T00:00:00Z`) / 1000);
}

/** Draws tokens (input and output) by day into `into`. */
export function drawTokens(into: HTMLElement, rows: readonly UsageRow[], width: number): DrawnChart {
  const plot = new uPlot(
    {
      title: "Tokens by day",
      width,
      height: 220,
      series: [
        {},
        { label: "input", stroke: colour("--accent", "#2563eb"), width: 2 },
        { label: "output", stroke: colour("--accent-2", "#d97706"), width: 2 },
      ],
      axes: [{ stroke: colour("--fg-muted", "#666") }, { stroke: colour("--fg-muted", "#666"), size: 60 }],
    },
    [daySeconds(rows), rows.map((r) => r.inputTokens), rows.map((r) => r.outputTokens)],
    into,
  );
  return { resize: (w) => plot.setSize({ width: w, height: 220 }), destroy: () => plot.destroy() };
}

/** Draws spend (USD) by day into `into`. */
export function drawSpend(into: HTMLElement, rows: readonly UsageRow[], width: number): DrawnChart {
  const plot = new uPlot(
    {
      title: "Spend by day (USD)",
      width,
      height: 220,
      series: [
        {},
        {
          label: "USD",
          stroke: colour("--good", "#16a34a"),
          width: 2,
          fill: colour("--good-bg", "#16a34a22"),
        },
      ],
      axes: [
        { stroke: colour("--fg-muted", "#666") },
        {
          stroke: colour("--fg-muted", "#666"),
          size: 60,
          values: (_u, ticks) => ticks.map((t) => `$${t.toFixed(2)}`),
        },
      ],
    },
    [daySeconds(rows), rows.map((r) => r.costUsd)],
    into,
  );
  return { resize: (w) => plot.setSize({ width: w, height: 220 }), destroy: () => plot.destroy() };
}
