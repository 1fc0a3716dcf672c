/**
 * Logging: pino JSON lines, one child logger per subsystem (`{ name: "gateway.lanes" }`,
 * `harness.run`, `provider.anthropic`, ...). Every serialized line passes through secret
 * redaction before it is written, so no call site can leak a key, token or Authorization value.
 * On a TTY, lines are pretty-printed; with `file`, JSON lines are also appended there.
 */
import { createRequire } from "node:module";
import { type DestinationStream, type Logger as PinoLogger, type StreamEntry, pino } from "pino";
import { SecretList } from "./redact.js";

export type Logger = PinoLogger;

export interface LoggerOptions {
  /** pino level; default "info". */
  level?: string;
  /** "auto" (default): pretty on a TTY stdout, JSON otherwise. */
  format?: "auto" | "json" | "pretty";
  /** Where lines go instead of stdout (tests). */
  destination?: DestinationStream;
  /** Also append JSON lines to this file (folders are created). */
  file?: string;
  /** Exact secret values to redact in addition to the known shapes. */
  secrets?: SecretList;
}

/** Creates the root logger. */
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
    streams.push({
      stream: pino.destination({ dest: options.file, mkdir: true, sync: false }),
      level: level as StreamEntry["level"],
    });
  }
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: {
        paths: ["apiKey", "token", "*.apiKey", "*.token", "headers.authorization", "*.headers.authorization"],
        censor: "[REDACTED]",
      },
      hooks: { streamWrite: (line: string) => secrets.redact(line) },
    },
    streams.length === 1 ? main : pino.multistream(streams),
  );
}

/** A logger that drops everything (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
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
