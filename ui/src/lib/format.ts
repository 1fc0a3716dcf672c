/** Numbers as the page shows them. */

/** A whole number with thousands separators ("12,345"). */
export function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** Dollars: two decimals, four below one cent ("$0.0042", "$1.20"). */
export function usd(n: number): string {
  return `$${n !== 0 && Math.abs(n) < 0.01 ? n.toFixed(4) : n.toFixed(2)}`;
}

/** A byte count ("812 B", "14.2 KB"). */
export function bytes(n: number): string {
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`;
}
