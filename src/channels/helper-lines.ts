/**
 * How a chat's preview shows its helpers at work: one line each, indented by depth —
 * "↳ vendors-2: web_fetch example.com/pricing" while it runs, "✓ vendors-2 done" or
 * "✗ vendors-2 failed" once it ended.
 */
import type { HelperStatus } from "./types.js";

/** Most helper lines one preview shows; the rest are counted in a last line. */
export const MAX_HELPER_LINES = 20;

/** The preview text of `helpers` (in the order given). */
export function helperLines(helpers: readonly HelperStatus[]): string {
  const lines = helpers.slice(0, MAX_HELPER_LINES).map(helperLine);
  const more = helpers.length - MAX_HELPER_LINES;
  if (more > 0) lines.push(`… and ${more} more`);
  return lines.join("\n");
}

/** One helper's line. */
export function helperLine(h: HelperStatus): string {
  const indent = "  ".repeat(Math.max(0, h.depth - 1));
  switch (h.state) {
    case "running":
      return `${indent}↳ ${h.label}: ${h.lastCall ?? "starting"}`;
    case "done":
      return `${indent}✓ ${h.label} done`;
    case "failed":
      return `${indent}✗ ${h.label} failed`;
    case "stopped":
      return `${indent}✗ ${h.label} stopped`;
  }
}
