/**
 * The last log lines of this process, for the control page's Logs view: the logger writes each
 * (already redacted) JSON line here too; a ring buffer keeps the newest `capacity` and listeners
 * get each as it is written. Parsing is lazy: a line is stored as written and turned into a
 * LogLine only when someone reads it, so an unused page costs one array slot per line.
 */
import type { LogLine } from "./contract.js";

const LEVELS: Record<number, LogLine["level"]> = {
  10: "trace",
  20: "debug",
  30: "info",
  40: "warn",
  50: "error",
  60: "fatal",
};

/** A level name's rank (for "this level and above"); unknown names rank as info. */
export function levelRank(level: string): number {
  for (const [rank, name] of Object.entries(LEVELS)) if (name === level) return Number(rank);
  return 30;
}

const FIELDS_MAX = 2_000;

/** Owns the ring buffer of recent log lines and the listeners of new ones. */
export class LogTail {
  readonly #capacity: number;
  readonly #raw: Array<string | undefined>;
  readonly #listeners = new Set<(line: LogLine) => void>();
  #seq = 0;

  /** @param capacity lines kept (default 1,000). */
  constructor(capacity = 1_000) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`LogTail capacity must be an integer ≥ 1, got ${capacity}`);
    this.#capacity = capacity;
    this.#raw = new Array(capacity);
  }

  /** The pino destination's `write`: one JSON line (or several, newline-separated). */
  write(chunk: string): void {
    for (const text of chunk.split("\n")) {
      if (text === "") continue;
      const seq = ++this.#seq;
      this.#raw[seq % this.#capacity] = text;
      if (this.#listeners.size === 0) continue;
      const line = parseLine(seq, text);
      for (const listener of this.#listeners) listener(line);
    }
  }

  /** The newest lines at `level` or above, oldest first, at most `limit`. */
  lines(level = "trace", limit = 200): LogLine[] {
    const min = levelRank(level);
    const out: LogLine[] = [];
    const oldest = Math.max(1, this.#seq - this.#capacity + 1);
    for (let seq = this.#seq; seq >= oldest && out.length < limit; seq--) {
      const text = this.#raw[seq % this.#capacity];
      if (text === undefined) continue;
      const line = parseLine(seq, text);
      if (levelRank(line.level) >= min) out.push(line);
    }
    return out.reverse();
  }

  /** Calls `listener` with each new line; returns the unsubscribe function. */
  subscribe(listener: (line: LogLine) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** A pino JSON line as a LogLine; a line that is not JSON is kept as an info message. */
export function parseLine(seq: number, text: string): LogLine {
  let obj: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
      throw new TypeError("not an object");
    obj = parsed as Record<string, unknown>;
  } catch {
    return { seq, time: Date.now(), level: "info", name: "", msg: text.slice(0, FIELDS_MAX), fields: "{}" };
  }
  const { level, time, msg, name, pid: _pid, hostname: _hostname, ...rest } = obj;
  const fields = JSON.stringify(rest);
  return {
    seq,
    time: typeof time === "number" ? time : Date.now(),
    level: LEVELS[typeof level === "number" ? level : 30] ?? "info",
    name: typeof name === "string" ? name : "",
    msg: typeof msg === "string" ? msg : "",
    fields: fields.length > FIELDS_MAX ? `${fields.slice(0, FIELDS_MAX)}…` : fields,
  };
}
