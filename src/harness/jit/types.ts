/**
 * Contracts of just-in-time (JIT) instructions (#25 item 3): before each model call the run's
 * state is summarised in a `JitSnapshot`, every enabled `JitRule` looks at it, and a rule that
 * fires adds one short line to that call's volatile part only. Nothing here runs.
 */

/** The stable id of a built-in rule; config `agent.jit.disable` names these. */
export type BuiltinJitRuleId =
  | "turn-limit"
  | "after-compaction"
  | "stale-work-items"
  | "reads-without-deliverable"
  | "planning-without-doing"
  | "serial-reads"
  | "repeated-compaction";

/** One tool call of the run as a rule sees it. */
export interface JitToolCall {
  /** The tool's name, e.g. `read_file` or `mcp:github:get_issue`. */
  readonly name: string;
  /** The 1-based model call that asked for it; calls of one step share it. */
  readonly modelCall: number;
  /** The workspace paths its arguments named (`path`, `paths`), in order; empty when none. */
  readonly paths: readonly string[];
}

/** An assignment run's work items. */
export interface JitWorkItems {
  /** Items marked done. */
  readonly done: number;
  /** All items of the assignment. */
  readonly total: number;
  /** Tool calls made since any work item was last added or updated (or since the run began). */
  readonly callsSinceTouched: number;
}

/**
 * The run's state just before one model call. Built by the turn loop; rules only read it.
 * Counts are for the current run only (a run is one inbound message or one assignment wake).
 */
export interface JitSnapshot {
  /** The 1-based number of the model call about to be made. */
  readonly modelCall: number;
  /** The run's model-call limit (`maxTurnsPerRun`); undefined when unlimited. */
  readonly maxModelCalls?: number;
  /** The run's tool-call limit (`maxToolCallsPerRun`); undefined when unlimited. */
  readonly maxToolCalls?: number;
  /** Tool calls made so far in the run. */
  readonly toolCallsMade: number;
  /** Tool calls so far, by tool name. */
  readonly toolCounts: Readonly<Record<string, number>>;
  /** Read calls (see `JIT_TOOL_KINDS`) since the last write call, or since the run began. */
  readonly readsSinceLastWrite: number;
  /** The last few tool calls, oldest first (the loop keeps a bounded window, e.g. 8). */
  readonly recentCalls: readonly JitToolCall[];
  /** The assignment's work items; undefined outside assignment runs. */
  readonly workItems?: JitWorkItems;
  /** Compactions so far in the run. */
  readonly compactions: number;
  /** Model calls made since the last compaction; undefined when none happened (0: just now). */
  readonly modelCallsSinceCompaction?: number;
  /** Whole minutes since the run began. */
  readonly minutesInRun: number;
}

/** A rule: looks at a snapshot and returns its one line, or undefined when it does not fire. */
export interface JitRule {
  /** Stable kebab-case id, recorded with each firing and named by `disable`. */
  readonly id: string;
  /** Fires at most once per run when true. */
  readonly once: boolean;
  /** Pure and deterministic: the same snapshot gives the same answer. One line, < 160 chars. */
  evaluate(snapshot: JitSnapshot): string | undefined;
}

/** One firing: which rule and the line it adds to this model call. */
export interface JitFiring {
  readonly ruleId: string;
  readonly line: string;
}
