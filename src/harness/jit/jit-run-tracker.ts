/**
 * Keeps one run's counts as the loop goes and builds the `JitSnapshot` for each model call, so
 * the loop only reports events: a model call starting, a tool call, a compaction, a work item
 * touched. Pure: time comes from the caller; nothing here does I/O.
 */
import { jitToolKind } from "./tool-kinds.js";
import type { JitSnapshot, JitToolCall, JitWorkItems } from "./types.js";

/** Options of a `JitRunTracker`. */
export interface JitRunTrackerOptions {
  /** The run's start, epoch ms (from the injected clock). */
  startedAtMs: number;
  /** The run's model-call limit; undefined when unlimited. */
  maxModelCalls?: number;
  /** The run's tool-call limit (`maxToolCallsPerRun`); undefined when unlimited. */
  maxToolCalls?: number;
  /** How many recent tool calls the snapshot keeps. Default: 8. */
  recentWindow?: number;
}

/** The workspace paths a call's JSON arguments name: a string `path` and the strings of `paths`. */
export function argumentPaths(argumentsJson: string): string[] {
  if (!argumentsJson.includes('"path')) return [];
  let args: unknown;
  try {
    args = JSON.parse(argumentsJson);
  } catch {
    return [];
  }
  if (typeof args !== "object" || args === null) return [];
  const out: string[] = [];
  const { path, paths } = args as { path?: unknown; paths?: unknown };
  if (typeof path === "string") out.push(path);
  if (Array.isArray(paths)) for (const p of paths) if (typeof p === "string") out.push(p);
  return out;
}

/** Owns one run's JIT counts (one tracker per run; it starts with an empty fired set). */
export class JitRunTracker {
  /** The ids of rules fired in this run; pass to `JitEngine.evaluate`. */
  readonly fired = new Set<string>();
  readonly #options: JitRunTrackerOptions;
  readonly #window: number;
  #modelCall = 0;
  #toolCallsMade = 0;
  readonly #toolCounts: Record<string, number> = {};
  #readsSinceLastWrite = 0;
  readonly #recent: JitToolCall[] = [];
  #compactions = 0;
  #lastCompactionAtCall: number | undefined;
  #workItems: { done: number; total: number } | undefined;
  #lastTouchAtCall = 0;

  constructor(options: JitRunTrackerOptions) {
    this.#options = options;
    this.#window = options.recentWindow ?? 8;
  }

  /**
   * A model call is about to be made; returns its snapshot (call numbers start at 1). The
   * snapshot shares the tracker's counts and window (no copies): evaluate it before the next event.
   */
  beforeModelCall(nowMs: number): JitSnapshot {
    this.#modelCall++;
    const o = this.#options;
    const items = this.#workItems;
    const workItems: JitWorkItems | undefined = items && {
      ...items,
      callsSinceTouched: this.#toolCallsMade - this.#lastTouchAtCall,
    };
    return {
      modelCall: this.#modelCall,
      ...(o.maxModelCalls !== undefined ? { maxModelCalls: o.maxModelCalls } : {}),
      ...(o.maxToolCalls !== undefined ? { maxToolCalls: o.maxToolCalls } : {}),
      toolCallsMade: this.#toolCallsMade,
      toolCounts: this.#toolCounts,
      readsSinceLastWrite: this.#readsSinceLastWrite,
      recentCalls: this.#recent,
      ...(workItems ? { workItems } : {}),
      compactions: this.#compactions,
      ...(this.#lastCompactionAtCall !== undefined
        ? { modelCallsSinceCompaction: this.#modelCall - 1 - this.#lastCompactionAtCall }
        : {}),
      minutesInRun: Math.max(0, Math.floor((nowMs - o.startedAtMs) / 60_000)),
    };
  }

  /** A tool call of the current model call ran (or was refused: it still shows the pattern). */
  toolCall(name: string, argumentsJson: string): void {
    this.#toolCallsMade++;
    this.#toolCounts[name] = (this.#toolCounts[name] ?? 0) + 1;
    const kind = jitToolKind(name);
    if (kind === "read") this.#readsSinceLastWrite++;
    else if (kind === "write") this.#readsSinceLastWrite = 0;
    this.#recent.push({ name, modelCall: this.#modelCall, paths: argumentPaths(argumentsJson) });
    if (this.#recent.length > this.#window) this.#recent.shift();
  }

  /** The context was compacted after the current model call (before the next one). */
  compacted(): void {
    this.#compactions++;
    this.#lastCompactionAtCall = this.#modelCall;
  }

  /** The assignment's work items now (an assignment run); `touched` when a call changed them. */
  workItems(done: number, total: number, touched: boolean): void {
    this.#workItems = { done, total };
    if (touched) this.#lastTouchAtCall = this.#toolCallsMade;
  }
}
