/** Renders benchmark rows: a markdown table for people, one JSON line for tools. */
import type { BenchRow } from "./types.js";

/** A markdown table with columns benchmark | figure | target (a ✗ marks a missed target). */
export function renderTable(rows: readonly BenchRow[]): string {
  const cell = (s: string) => s.replaceAll("|", "\\|");
  const lines = ["| benchmark | figure | target |", "| --- | --- | --- |"];
  for (const row of rows) {
    const mark = row.met === false ? " ✗" : row.met === true ? " ✓" : "";
    lines.push(`| ${cell(row.benchmark)} | ${cell(row.figure)} | ${cell(row.target)}${mark} |`);
  }
  return lines.join("\n");
}

/** One JSON line: `{"bench":"switchyard","node":…,"rows":[…]}`. */
export function renderJson(rows: readonly BenchRow[], meta: Record<string, unknown>): string {
  return JSON.stringify({ bench: "switchyard", ...meta, rows });
}
