/**
 * Logging: pino JSON lines, one child logger per subsystem (`{ name: "gateway.lanes" }`,
 * `harness.run`, `provider.anthropic`, ...). Every serialized line passes through secret
 * redaction before it is written, so no call site can leak a key, token or Authorization value.
 * On a TTY, lines are pretty-printed; with `file`, JSON lines are also appended there, and the
 * file is rotated by size (see {@link rotatedLogFiles} for the names).
 */
import {
  chmodSync,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { type DestinationStream, type Logger as PinoLogger, type StreamEntry, pino } from "pino";
import { SecretList } from "./redact.js";

export type Logger = PinoLogger;

/** How the root logger writes. */
export interface LoggerOptions {
  /** pino level; default "info". */
  level?: string;
  /** "auto" (default): pretty on a TTY stdout, JSON otherwise. */
  format?: "auto" | "json" | "pretty";
  /** Where lines go instead of stdout (tests). */
  destination?: DestinationStream;
  /**
   * Also append JSON lines to this file. Missing folders are created with mode 0700, the file
   * with 0600. When it reaches `maxFileMb` it is renamed `<file>.1` (older ones shift to `.2` …)
   * and a fresh file is started. A failure of the file (unwritable folder, full disk) is reported
   * once through `onFileError` and never stops logging to the main destination.
   */
  file?: string;
  /** Size at which `file` rotates, in MB (1 MB = 1024 × 1024 bytes); default 10, at least 1. */
  maxFileMb?: number;
  /**
   * Exact rotation size in bytes, overriding `maxFileMb`; at least 1. For tests, which cannot
   * write megabytes quickly; configuration offers only `maxFileMb`.
   */
  maxFileBytes?: number;
  /** Rotated files kept in addition to the current one; default 5, at least 1. */
  maxFiles?: number;
  /** Receives the one line describing a file failure; default: written to stderr. */
  onFileError?: (line: string) => void;
  /** Exact secret values to redact in addition to the known shapes. */
  secrets?: SecretList;
  /** Also gets every (redacted) JSON line, whatever the format (the control page's log tail). */
  tap?: { write(line: string): void };
}

const MB = 1024 * 1024;
const DEFAULT_MAX_FILE_MB = 10;
const DEFAULT_MAX_FILES = 5;

/**
 * Creates the root logger. Throws TypeError for a bad `maxFileMb`, `maxFileBytes` or `maxFiles`;
 * never throws because of the file itself.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = options.secrets ?? new SecretList();
  const level = options.level ?? "info";
  const pretty =
    options.format === "pretty" ||
    (options.format !== "json" && !options.destination && process.stdout.isTTY === true);
  let main: DestinationStream = options.destination ?? pino.destination({ dest: 1, sync: false });
  if (pretty) main = prettyStream();
  const streams: StreamEntry[] = [{ stream: main, level: level as StreamEntry["level"] }];
  if (options.file) {
    streams.push({ stream: rotatingFile(options.file, options), level: level as StreamEntry["level"] });
  }
  if (options.tap) streams.push({ stream: options.tap, level: level as StreamEntry["level"] });
  return pino(
    {
      level,
      base: { pid: process.pid },
      hooks: { streamWrite: (line: string) => secrets.redact(redactSecretFields(line)) },
    },
    streams.length === 1 ? main : pino.multistream(streams),
  );
}

/** A string value under a key that names a secret, at any depth of a JSON line. */
const SECRET_FIELD = /("(?:apiKey|token|authorization)"\s*:\s*")(?:[^"\\]|\\.)*"/gi;

/**
 * `"apiKey"`, `"token"` and `"authorization"` values of a serialized line, whatever their shape
 * (the known shapes are SecretList's): on the text, so no log call's object is copied for it (a
 * redacting copy of every object cost ~5 µs and ~10 KB a line).
 */
export function redactSecretFields(line: string): string {
  SECRET_FIELD.lastIndex = 0;
  if (!SECRET_FIELD.test(line)) return line;
  SECRET_FIELD.lastIndex = 0;
  return line.replace(SECRET_FIELD, '$1[REDACTED]"');
}

/** A logger that drops everything (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

/**
 * The log files of `file` that exist, newest first: `file` itself (if present), then `<file>.1`,
 * `<file>.2`, … as rotation named them.
 */
export function rotatedLogFiles(file: string): string[] {
  const name = basename(file);
  let entries: string[];
  try {
    entries = readdirSync(dirname(file));
  } catch {
    return [];
  }
  const rotated: Array<{ n: number; path: string }> = [];
  for (const entry of entries) {
    const match = entry.startsWith(`${name}.`) ? /^\d+$/.exec(entry.slice(name.length + 1)) : null;
    if (match) rotated.push({ n: Number(match[0]), path: join(dirname(file), entry) });
  }
  rotated.sort((a, b) => a.n - b.n);
  return [...(entries.includes(name) ? [file] : []), ...rotated.map((r) => r.path)];
}

/**
 * The file destination (`file`, `file.1` … `file.N`, renamed on rotation), wrapped so a failure
 * is reported once and later lines are dropped.
 */
function rotatingFile(file: string, options: LoggerOptions): DestinationStream {
  const maxBytes = rotationBytes(options);
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
  if (!Number.isInteger(maxFiles) || maxFiles < 1) {
    throw new TypeError(`logger maxFiles: found ${maxFiles}, expected a whole number of at least 1`);
  }
  const onFileError = options.onFileError ?? ((line: string) => process.stderr.write(`${line}\n`));
  let failed = false;
  const fail = (err: unknown) => {
    if (failed) return;
    failed = true;
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === "EISDIR" ? "it is a folder, not a file" : err instanceof Error ? err.message : String(err);
    onFileError(`switchyard: cannot write the log file ${file}: ${reason}; logging continues on stdout only`);
  };
  const dropped: DestinationStream = { write: () => {} };
  try {
    // Only the log folder itself is made owner-only; folders above it get the usual mode.
    mkdirSync(dirname(dirname(file)), { recursive: true });
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Only tightens a file an older version left readable by others; new files get 0600 below.
    chmodSync(file, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
      fail(err);
      return dropped;
    }
  }
  try {
    return new RotatingFile(file, maxBytes, maxFiles, fail);
  } catch (err) {
    fail(err);
    return dropped;
  }
}

/**
 * Lines appended to a file synchronously, the file rotated once it reaches `maxBytes` (at most
 * one line over): `file` becomes `file.1`, `file.1` becomes `file.2`, …, past `file.<maxFiles>`
 * the oldest is dropped. Synchronous on purpose: an append costs a few µs on the event loop,
 * where a stream's write through libuv's pool cost ~70 µs of CPU across threads per line, and a
 * crash of the process loses no line already logged.
 */
class RotatingFile implements DestinationStream {
  readonly #file: string;
  readonly #maxBytes: number;
  readonly #maxFiles: number;
  readonly #fail: (err: unknown) => void;
  #fd: number | undefined;
  #size = 0;

  constructor(file: string, maxBytes: number, maxFiles: number, fail: (err: unknown) => void) {
    this.#file = file;
    this.#maxBytes = maxBytes;
    this.#maxFiles = maxFiles;
    this.#fail = fail;
    this.#open();
  }

  write(line: string): void {
    if (this.#fd === undefined) return;
    try {
      this.#size += writeSync(this.#fd, line);
      if (this.#size >= this.#maxBytes) this.#rotate();
    } catch (err) {
      this.#close();
      this.#fail(err);
    }
  }

  #open(): void {
    this.#fd = openSync(this.#file, "a", 0o600);
    this.#size = fstatSync(this.#fd).size;
  }

  #close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Already unusable: nothing more is written to it.
    }
  }

  #rotate(): void {
    this.#close();
    for (let n = this.#maxFiles - 1; n >= 1; n--)
      renameIfThere(`${this.#file}.${n}`, `${this.#file}.${n + 1}`);
    renameIfThere(this.#file, `${this.#file}.1`);
    this.#open();
  }
}

function renameIfThere(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

function rotationBytes(options: LoggerOptions): number {
  if (options.maxFileBytes !== undefined) {
    const bytes = options.maxFileBytes;
    if (!Number.isInteger(bytes) || bytes < 1) {
      throw new TypeError(`logger maxFileBytes: found ${bytes}, expected a whole number of at least 1`);
    }
    return bytes;
  }
  const mb = options.maxFileMb ?? DEFAULT_MAX_FILE_MB;
  if (!Number.isFinite(mb) || mb < 1) {
    throw new TypeError(`logger maxFileMb: found ${mb}, expected a number of at least 1`);
  }
  return Math.round(mb * MB);
}

/** pino-pretty is loaded only when pretty output is wanted: production never pays for it. */
function prettyStream(): DestinationStream {
  const require = createRequire(import.meta.url);
  const pinoPretty = require("pino-pretty") as (opts: object) => DestinationStream;
  return pinoPretty({
    colorize: true,
    translateTime: "HH:MM:ss.l",
    ignore: "pid,hostname",
    messageKey: "msg",
  });
}
