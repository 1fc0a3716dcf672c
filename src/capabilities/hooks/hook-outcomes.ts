/**
 * What every hook run ended with, for `/metrics` and `switchyard hooks list`: each run is
 * counted (`switchyard_hook_runs_total{event,hook,verdict}`) and timed
 * (`switchyard_hook_duration_seconds{event}`), and the last outcome of each configured hook (and
 * of the built-in command guard) is kept in `<home>/hooks-last.json`, written atomically at most
 * once a second and on stop, so the CLI (another process) can show it. No store table: a lost
 * last outcome (a crash within the second) costs nothing but a stale line.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Counter, Histogram } from "../../gateway/metrics.js";
import { writeFileAtomic } from "../../harness/memory/atomic-write.js";
import type { Clock, TimerHandle } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { HookEvent } from "./settings.js";

/** The file in the gateway's home holding each hook's last outcome. */
export const HOOK_OUTCOMES_FILE = "hooks-last.json";
/** The key of the built-in command guard's row (the first beforeToolCall row). */
export const COMMAND_GUARD_KEY = "beforeToolCall[builtin]";
/** The built-in guard's command as `hooks list` shows it. */
export const COMMAND_GUARD_COMMAND = "built-in: command guard (exec, MCP command arguments)";
/** Shortest time between two writes of the outcomes file. */
export const OUTCOMES_WRITE_EVERY_MS = 1_000;
/** Characters of a reason kept in the outcomes file. */
const REASON_MAX_CHARS = 300;

/** A verdict as recorded: the runner's types, and `reply` for a beforeMessage answer. */
export type RecordedVerdict = "allow" | "reply" | "block" | "failed" | "ignored";

/** The last outcome of one hook, as `hooks list` shows it. */
export interface HookOutcome {
  /** The command it ran (a row whose command changed since is not shown). */
  command: string;
  verdict: RecordedVerdict;
  /** When it ended, epoch ms. */
  at: number;
  durationMs: number;
  /** Why it blocked or failed (cut), absent when it allowed. */
  reason?: string;
}

/** `hook` label and row key of one configured hook: `<event>[<index>]`. */
export function hookKey(event: HookEvent, index: number): string {
  return `${event}[${index}]`;
}

/** The counter and histogram of hook runs (registered on the gateway's metrics by the module). */
export interface HookMetrics {
  runs: Counter;
  duration: Histogram;
}

/** New hook metrics (not yet registered anywhere). */
export function hookMetrics(): HookMetrics {
  return {
    runs: new Counter("switchyard_hook_runs_total", "Hook runs by event, hook and verdict."),
    duration: new Histogram(
      "switchyard_hook_duration_seconds",
      "Time a hook took, spawn to verdict, by event.",
      [0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    ),
  };
}

/** What HookOutcomes is built with. */
export interface HookOutcomesOptions {
  /** The gateway's home: the outcomes file goes there. */
  home: string;
  metrics: HookMetrics;
  clock: Clock;
  logger: Logger;
}

/** Owns the last outcome of each hook and its debounced file; counts and times every run. */
export class HookOutcomes {
  readonly #o: HookOutcomesOptions;
  readonly #last: Record<string, HookOutcome>;
  #timer: TimerHandle | undefined;
  #lastWriteAt = Number.NEGATIVE_INFINITY;
  #writing: Promise<void> = Promise.resolve();

  /** Starts from the file's outcomes (a restart keeps them). */
  constructor(options: HookOutcomesOptions) {
    this.#o = options;
    this.#last = readHookOutcomes(options.home);
  }

  /** Counts and times one run of the hook at `key`, and keeps it as that hook's last outcome. */
  record(event: HookEvent, key: string, outcome: HookOutcome): void {
    const { runs, duration } = this.#o.metrics;
    runs.inc({ event, hook: key, verdict: outcome.verdict });
    duration.observe(outcome.durationMs / 1000, { event });
    const reason = outcome.reason?.slice(0, REASON_MAX_CHARS);
    this.#last[key] = { ...outcome, ...(reason !== undefined && { reason }) };
    this.#schedule();
  }

  /** Writes what is not written yet (called on stop); resolves when it is on disk. */
  async flush(): Promise<void> {
    this.#o.clock.clearTimeout(this.#timer);
    if (this.#timer === undefined) return this.#writing;
    this.#timer = undefined;
    return this.#write();
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    const wait = Math.max(0, this.#lastWriteAt + OUTCOMES_WRITE_EVERY_MS - this.#o.clock.now());
    this.#timer = this.#o.clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.#write().catch(() => {}); // #write logs its own failure
      },
      wait,
      { unref: true },
    );
  }

  #write(): Promise<void> {
    this.#lastWriteAt = this.#o.clock.now();
    const text = `${JSON.stringify(this.#last, null, 2)}\n`;
    const file = path.join(this.#o.home, HOOK_OUTCOMES_FILE);
    this.#writing = this.#writing
      .then(() => writeFileAtomic(file, text, { durable: false }))
      .catch((err: unknown) => {
        this.#o.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          "hook outcomes not saved",
        );
      });
    return this.#writing;
  }
}

/** The last outcomes kept in `home` by key; empty when the file is missing or unreadable. */
export function readHookOutcomes(home: string): Record<string, HookOutcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path.join(home, HOOK_OUTCOMES_FILE), "utf8"));
  } catch {
    return {};
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
  const out: Record<string, HookOutcome> = {};
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (isOutcome(value)) out[key] = value;
  }
  return out;
}

function isOutcome(v: unknown): v is HookOutcome {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.command === "string" &&
    typeof o.verdict === "string" &&
    typeof o.at === "number" &&
    typeof o.durationMs === "number"
  );
}
