/**
 * Which workspace files are memory (MEMORY.md and memory/**), how a path the model gives is
 * normalized and checked, and the calendar date that names a daily note in a time zone.
 */
import path from "node:path";
import { ToolError } from "../tools/tool-error.js";

/** The curated long-term memory file, at the workspace root. */
export const MEMORY_FILE = "MEMORY.md";
/** The folder of daily notes and other memory files, at the workspace root. */
export const MEMORY_DIR = "memory";

const ALLOWED = `memory tools work on ${MEMORY_FILE} and files under ${MEMORY_DIR}/ (such as ${MEMORY_DIR}/2025-03-14.md)`;

/**
 * Normalizes a memory path the model gave (`./memory//x.md`, `memory\x.md` → `memory/x.md`)
 * and checks that it names MEMORY.md or a file under memory/. Throws ToolError
 * `path_outside_workspace` for absolute paths and any `..` segment, `invalid_arguments` for a
 * NUL character or another workspace file, each message naming what is allowed. Symlinks are
 * not looked at here: resolve the result with `resolveInWorkspace`.
 */
export function memoryFilePath(input: string): string {
  if (input.includes("\0"))
    throw new ToolError("invalid_arguments", `path ${JSON.stringify(input)} contains a NUL character`);
  const slashed = input.trim().replace(/\\/g, "/");
  if (slashed.startsWith("/") || /^[A-Za-z]:/.test(slashed)) {
    throw new ToolError(
      "path_outside_workspace",
      `path ${JSON.stringify(input)} is absolute; ${ALLOWED}, relative to the workspace root`,
    );
  }
  const segments = slashed.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) {
    throw new ToolError("path_outside_workspace", `path ${JSON.stringify(input)} contains "..": ${ALLOWED}`);
  }
  const rel = segments.join("/");
  if (rel === MEMORY_FILE || (segments[0] === MEMORY_DIR && segments.length > 1)) return rel;
  if (rel === MEMORY_DIR) {
    throw new ToolError("invalid_arguments", `${MEMORY_DIR}/ is a folder; ${ALLOWED}`);
  }
  throw new ToolError(
    "invalid_arguments",
    `${JSON.stringify(input)} is not a memory file: ${ALLOWED}; read other workspace files with read_file`,
  );
}

/** The daily note of a date: `memory/2025-03-14.md`. */
export function dailyNotePath(date: string): string {
  return `${MEMORY_DIR}/${date}.md`;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** The last date worked out per zone, with its minute. */
const lastDates = new Map<string, { minute: number; date: string }>();

/**
 * The calendar date (`YYYY-MM-DD`) at `nowMs` in the IANA `timeZone`. Throws a RangeError naming
 * the zone when Intl does not know it.
 */
export function localDate(nowMs: number, timeZone: string): string {
  // Zones move by whole minutes: the date is worked out once a minute per zone, not per call.
  const minute = Math.floor(nowMs / 60_000);
  const known = lastDates.get(timeZone);
  if (known?.minute === minute) return known.date;
  const parts = formatterFor(timeZone).formatToParts(new Date(nowMs));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  const date = `${part("year").padStart(4, "0")}-${part("month")}-${part("day")}`;
  if (lastDates.size >= 64) lastDates.clear();
  lastDates.set(timeZone, { minute, date });
  return date;
}

/** The calendar day before `date` (`YYYY-MM-DD`), by the calendar, not by 24 hours. */
export function previousDate(date: string): string {
  const [y, m, d] = date.split("-").map(Number);
  const day = new Date(Date.UTC(y ?? 1970, (m ?? 1) - 1, (d ?? 1) - 1));
  return day.toISOString().slice(0, 10);
}

/**
 * Throws a RangeError `<field> must be an IANA time zone such as "Europe/Berlin", got "…"`
 * unless Intl knows `timeZone`; returns it.
 */
export function checkTimeZone(timeZone: string, field: string): string {
  try {
    formatterFor(timeZone);
  } catch (err) {
    throw new RangeError(
      `${field} must be an IANA time zone such as "Europe/Berlin" or "UTC", got ${JSON.stringify(timeZone)}`,
      { cause: err },
    );
  }
  return timeZone;
}

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    // en-CA orders the parts as the ISO date does; only the parts are used anyway.
    formatter = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** True when `candidate` is `root` or inside it (both absolute, already resolved). */
export function isInsideDir(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
