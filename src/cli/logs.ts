/**
 * `switchyard logs [--last N] [-f]`: the gateway's log, pretty-printed. The gateway appends JSON
 * lines to `<home>/logs/switchyard.log` and rotates it by size to `switchyard.log.1` (newest)
 * … `switchyard.log.<maxFiles>`; `--last` reads back across those files, `-f` keeps following
 * the current file, across rotations, until Ctrl-C.
 */
import { type Stats, closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { resolveHome } from "../config/home.js";
import { rotatedLogFiles } from "../util/logger.js";
import type { CliOptions } from "./main.js";

/** Lines `logs` prints without `--last`. */
export const LOGS_DEFAULT_LAST = 100;
/** How often `-f` looks for new lines and rotations. */
const FOLLOW_POLL_MS = 200;
const CHUNK_BYTES = 64 * 1024;

/**
 * The gateway's current log file under `home` (where `switchyard gateway` writes it); rotated
 * files sit beside it (`.1`, `.2`, …).
 */
export function gatewayLogFile(home: string): string {
  return join(home, "logs", "switchyard.log");
}

/** Runs the command; resolves with the exit code (with `-f`, after SIGINT or SIGTERM). */
export async function runLogs(options: CliOptions): Promise<number> {
  const home = resolveHome(options.home, process.env, process.cwd());
  const file = gatewayLogFile(home);
  const files = rotatedLogFiles(file);
  if (files.length === 0) {
    process.stderr.write(`switchyard logs: no log file at ${file} (the gateway writes it once it has run)\n`);
    return 1;
  }
  const format = await lineFormatter(process.stdout.isTTY === true);
  const print = (line: string) => process.stdout.write(format(line));

  // The current file is opened before reading back, so following starts exactly where the
  // read-back stopped.
  const current = openIfExists(file);
  const wanted = options.last ?? LOGS_DEFAULT_LAST;
  const lines: string[] = [];
  let start = 0;
  if (current) {
    // While following, a last line still being written is printed once it is complete.
    const read = lastLines(current.fd, current.size, wanted, !options.follow);
    lines.push(...read.lines);
    start = read.end;
  }
  for (const older of files.filter((f) => f !== file)) {
    if (lines.length >= wanted) break;
    const opened = openIfExists(older);
    if (!opened) continue;
    try {
      lines.unshift(...lastLines(opened.fd, opened.size, wanted - lines.length, true).lines);
    } finally {
      closeSync(opened.fd);
    }
  }
  for (const line of lines) print(line);
  if (!options.follow) {
    if (current) closeSync(current.fd);
    return 0;
  }
  return follow(file, current ? { ...current, position: start } : undefined, print);
}

interface Opened {
  fd: number;
  size: number;
  ino: number;
}

function openIfExists(path: string): Opened | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const st = fstatSync(fd);
  return { fd, size: st.size, ino: st.ino };
}

/**
 * The last `n` lines of the first `size` bytes of `fd`, read backwards in chunks. A last line
 * without its newline is left out (the writer is still writing it) unless `includePartial`;
 * `end` is where the returned lines stop, so following can continue there.
 */
function lastLines(
  fd: number,
  size: number,
  n: number,
  includePartial = false,
): { lines: string[]; end: number } {
  const chunks: Buffer[] = [];
  let position = size;
  let newlines = 0;
  // n lines need n + 1 newlines before them, or the start of the file.
  while (position > 0 && newlines <= n) {
    const length = Math.min(CHUNK_BYTES, position);
    position -= length;
    const chunk = Buffer.alloc(length);
    readSync(fd, chunk, 0, length, position);
    for (const byte of chunk) if (byte === 0x0a) newlines++;
    chunks.unshift(chunk);
  }
  const text = Buffer.concat(chunks);
  const lastNewline = text.lastIndexOf(0x0a);
  const whole = includePartial ? text.length : lastNewline + 1;
  const lines = text.subarray(0, whole).toString("utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  return { lines: lines.slice(-n), end: position + whole };
}

/**
 * Prints lines appended to `file` until SIGINT or SIGTERM. Every poll reads the open file to its
 * end, then checks the path: another file there (rotation renamed ours) → the old one is read
 * to its end once more and the new one is followed from its start; a shorter file (truncated)
 * → read again from the start; no file (mid-rotation) → wait.
 */
function follow(
  file: string,
  initial: (Opened & { position: number }) | undefined,
  print: (line: string) => void,
): Promise<number> {
  let open = initial;
  let partial = "";
  // Keeps a character whose bytes straddle two reads whole.
  let decoder = new StringDecoder("utf8");
  const buffer = Buffer.alloc(CHUNK_BYTES);
  const drain = () => {
    if (!open) return;
    for (;;) {
      const read = readSync(open.fd, buffer, 0, buffer.length, open.position);
      if (read === 0) break;
      open.position += read;
      const text = partial + decoder.write(buffer.subarray(0, read));
      const lines = text.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) print(line);
    }
  };
  const poll = () => {
    drain();
    let st: Stats;
    try {
      st = statSync(file);
    } catch {
      return; // renamed away and not yet created again
    }
    if (open && st.ino === open.ino) {
      if (st.size < open.position) {
        open.position = 0;
        partial = "";
        decoder = new StringDecoder("utf8");
      }
      return;
    }
    if (open) {
      drain();
      const rest = partial + decoder.end();
      if (rest !== "") print(rest);
      partial = "";
      decoder = new StringDecoder("utf8");
      closeSync(open.fd);
      open = undefined;
    }
    const next = openIfExists(file);
    if (next) {
      open = { ...next, position: 0 };
      drain();
    }
  };
  return new Promise((resolve) => {
    const timer = setInterval(poll, FOLLOW_POLL_MS);
    const stop = () => {
      clearInterval(timer);
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      process.stdout.off("error", stop);
      if (open) closeSync(open.fd);
      open = undefined;
      resolve(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    // A closed pipe (`switchyard logs -f | head`) ends following instead of crashing.
    process.stdout.on("error", stop);
  });
}

/**
 * Turns one log line into printable text ending in a newline: JSON objects through pino-pretty
 * (colors only on a terminal), anything else as it is.
 */
async function lineFormatter(colorize: boolean): Promise<(line: string) => string> {
  // Loaded here, not at the top: every other command would pay for it at start-up.
  const { prettyFactory } = await import("pino-pretty");
  const pretty = prettyFactory({
    colorize,
    translateTime: "SYS:yyyy-mm-dd HH:MM:ss.l",
    ignore: "pid,hostname",
    messageKey: "msg",
  });
  return (line: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return `${line}\n`;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return `${line}\n`;
    const text = pretty(parsed);
    return text.endsWith("\n") ? text : `${text}\n`;
  };
}
