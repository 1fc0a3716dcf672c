/**
 * Plain-text tables for the commands that print rows (`auth status`, `usage`): a header line,
 * columns two spaces apart, numbers right-aligned, and nothing from the database that could
 * drive the terminal.
 */

/** A column: its header and whether its cells are right-aligned (numbers). */
export interface Column {
  header: string;
  right?: boolean;
}

/**
 * The rows under a header line, each cell padded to its column's widest cell; trailing spaces
 * trimmed; every line ends in a newline. Control characters in cells become "\uFFFD".
 */
export function formatTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const cells = [columns.map((c) => c.header), ...rows.map((r) => r.map(printable))];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  return cells
    .map(
      (row) =>
        `${columns
          .map((c, i) => {
            const cell = row[i] ?? "";
            const width = widths[i] ?? 0;
            return c.right ? cell.padStart(width) : cell.padEnd(width);
          })
          .join("  ")
          .trimEnd()}\n`,
    )
    .join("");
}

/** A whole number with thousands separators: `48,210`. */
export function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** US dollars: four decimals under $1 (`$0.0420`), else two (`$12.34`). */
export function usd(amount: number): string {
  return `$${amount.toFixed(Math.abs(amount) < 1 ? 4 : 2)}`;
}

/** An amount of US dollars to the millionth, for JSON: sums of prices carry float noise. */
export function roundUsd(amount: number): number {
  return Math.round(amount * 1e6) / 1e6;
}

/** A time span ahead, roughly: `12 s`, `4 min`, `3 h 5 min`; never 0 (at least `1 s`). */
export function span(ms: number): string {
  if (ms < 59_500) return `${Math.max(1, Math.round(ms / 1_000))} s`;
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 120) return `${minutes} min`;
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ""}`;
}

/** Control characters (line ends included) shown as "\uFFFD": a cell is one line of plain text. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "\uFFFD");
}
