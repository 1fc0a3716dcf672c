/**
 * Sub-agents' contract (#26): a child is a session of its own, spawned by a parent session's
 * run; its row links the two and carries its task, the tools it may use, its state and, once it
 * ended, its result. Rows are durable, so a restart finds children to run again and results to
 * deliver. A result is delivered when the parent's run that claimed it commits: `claimResults`
 * records the claim and appends the results to the parent's transcript in one fenced step, and a
 * claim by a run that never committed is taken over by the next one (no result twice, none lost).
 */
import type { ChatTarget } from "../../channels/types.js";
import type { SessionFence } from "./lease-repo.js";

/** Where a child is in its life. `done`/`failed`/`cancelled` are ends: the result is final. */
export type SubagentState = "queued" | "running" | "done" | "failed" | "cancelled";

/** What the child inherits of the turn that spawned it: who it works for, where the parent answers. */
export interface SubagentOrigin {
  /** The chat the parent's turn answered in; null for background work. */
  target: ChatTarget | null;
  /** The parent turn's asker (the tool policy applies to the child as to the parent). */
  privateChat: boolean;
  groupChat: boolean;
  senderId?: string | undefined;
}

/** One child. */
export interface Subagent {
  id: string;
  parentSessionKey: string;
  /** The parent's run that spawned it. */
  parentRunId: string;
  childSessionKey: string;
  /** 1 for a child of a top-level session, 2 for a grandchild, … */
  depth: number;
  label: string;
  task: string;
  /** What the parent passed along (never its transcript); "" when nothing. */
  context: string;
  /** The tool names the child may use (the parent's offered tools ∩ what it asked for). */
  tools: string[];
  /** A model of the chain the child uses; null: the chain. */
  model: string | null;
  origin: SubagentOrigin;
  state: SubagentState;
  /** The child's current (or last) run. */
  runId: string | null;
  /** The final text, cut; null until it ended. */
  result: string | null;
  /** Where the whole result is saved (workspace-relative) when it was cut. */
  resultPath: string | null;
  error: string | null;
  /** The parent's run that received the result. */
  deliveredRunId: string | null;
  /** When a parent waiting with wait_agents is woken even if this child still runs; null: not awaited. */
  waitDeadline: number | null;
  createdAt: number;
  updatedAt: number;
  endedAt: number | null;
}

/** A child to spawn. */
export interface SubagentSpawn {
  id: string;
  parentSessionKey: string;
  parentRunId: string;
  /** `agent:<agentId>:sub:` — the child key is this, the parent key, `:` and the child's number. */
  childKeyPrefix: string;
  depth: number;
  label: string;
  task: string;
  context: string;
  tools: string[];
  model: string | null;
  origin: SubagentOrigin;
}

/** The limits a spawn is checked against, in the same step as its insert. */
export interface SpawnLimits {
  /** Children of the parent queued or running at once. */
  maxActive: number;
  /** Children one run of the parent may spawn (all its runs', with `acrossRuns`). */
  maxPerRun: number;
  /** Count every run of the parent session: a helper's runs are one task. */
  acrossRuns?: boolean;
}

/** Spawned, or refused by a limit (counted in the same step as the insert). */
export type SpawnOutcome =
  | { status: "spawned"; child: Subagent }
  | { status: "too_many_active"; active: number; limit: number }
  | { status: "too_many_in_run"; spawned: number; limit: number };

/** What a child's end means for its parent (SubagentRepo.endCheck). */
export interface SubagentEndCheck {
  parentSessionKey: string;
  /** Every child of the run that spawned it has ended. */
  batchDone: boolean;
  /** It was awaited (wait_agents) and every awaited child of the parent has ended. */
  waitDone: boolean;
  /** Its own children still queued or running (only a failed or cancelled child can leave some). */
  openChildren: number;
}

/** A child's end, written with its last turn's commit (CommitTurn.subagent). */
export interface SubagentEnd {
  id: string;
  state: "done" | "failed";
  result: string;
  resultPath?: string | undefined;
  error?: string | undefined;
}

/** The sub-agents repository (see the file header). */
export interface SubagentRepo {
  /**
   * Inserts a queued child unless the parent has `maxActive` children queued or running, or its
   * run `parentRunId` (with `acrossRuns`, the parent session) spawned `maxPerRun` already; the
   * child's number is the parent's count + 1.
   */
  spawn(spawn: SubagentSpawn, limits: SpawnLimits, now: number): Promise<SpawnOutcome>;
  get(id: string): Promise<Subagent | undefined>;
  /** The child whose own session is `childSessionKey`, if that session is a child's. */
  byChildSession(childSessionKey: string): Promise<Subagent | undefined>;
  /** A parent's children, oldest first. */
  listForParent(parentSessionKey: string): Promise<Subagent[]>;
  /** Children queued or running (every parent's), oldest first: what a restart runs again. */
  listActive(): Promise<Subagent[]>;
  /**
   * Parents with results to deliver: a child ended and no committed run of the parent received
   * its result (never claimed, or claimed by a run that did not commit).
   */
  parentsWithResults(): Promise<string[]>;
  /**
   * Its run `runId` starts: queued or running → running under `runId`. Returns the row as it
   * was before (its state says whether this is a first run or a redo), or undefined when the
   * child ended or was cancelled meanwhile.
   */
  start(id: string, runId: string, now: number): Promise<Subagent | undefined>;
  /**
   * `start` for a row the caller just read (`seen`): one compare-and-set when nothing changed
   * since, else `start`. Returns `seen` when it moved, like `start` returns the row before.
   */
  startFrom(seen: Subagent, runId: string, now: number): Promise<Subagent | undefined>;
  /**
   * After a child's turn committed: undefined while it has not ended; else its parent and whether
   * that ends a batch (no other child of the spawning run is queued or running) or a wait (the
   * child was awaited and no awaited child of the parent still runs).
   */
  endCheck(childSessionKey: string): Promise<SubagentEndCheck | undefined>;
  /**
   * Cancels a queued or running child; false when it had ended. `silent`: its parent is not
   * given the cancellation as a result (a person stopped it, or the parent is gone).
   */
  cancel(id: string, error: string, now: number, options?: { silent?: boolean }): Promise<boolean>;
  /** Sets the wait deadline of these children of `parentSessionKey` (wait_agents). */
  await(parentSessionKey: string, ids: readonly string[], deadline: number, now: number): Promise<void>;
  /**
   * For the parent's run `runId`, in one step under its session `lease`: claims every result no
   * committed run of the parent received, and appends a `trigger` (origin `subagent`) event per
   * result not appended before (`text(child)` makes its text) to the parent's transcript. Returns
   * the claimed children, or [] when the lease no longer holds.
   */
  claimResults(
    parentSessionKey: string,
    sessionId: string,
    runId: string,
    lease: SessionFence,
    text: (child: Subagent) => string,
    now: number,
  ): Promise<Subagent[]>;
}
