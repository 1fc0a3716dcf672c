/**
 * Assignments: long work the agent carries over many bounded runs without a person (a goal,
 * its owner's chat, work items, an optional contract, limits and the counters the stop
 * decision reads), their run log, and the learnings agents report. Each column group has one
 * writer at a time: the run holding the assignment's session writes items and checkpoint; a
 * state change that can race (a cancel from the CLI, an answer from the owner) is a
 * conditional update on the state it expects.
 */
import type { ChatTarget } from "../../channels/types.js";

/** Where an assignment is. `stalled`, `done`, `failed` and `cancelled` are final. */
export type AssignmentState =
  | "active"
  | "sleeping"
  | "requires_action"
  | "stalled"
  | "done"
  | "failed"
  | "cancelled";

/** A work item's status. */
export type WorkItemStatus = "open" | "in_progress" | "blocked" | "done" | "dropped";

/** One work item: a step of the assignment the agent tracks. */
export interface WorkItem {
  id: number;
  title: string;
  status: WorkItemStatus;
  notes: string;
  updatedAt: number;
}

/** Limits of one assignment (defaults from `assignments` in the config). */
export interface AssignmentLimits {
  /** Model calls per run. */
  maxTurnsPerRun: number;
  /** Minutes per run (checked between model calls). */
  maxRunMinutes: number;
  /** Runs in all. */
  maxRuns: number;
  /** Tokens in all (input + output), or null: no cap beyond the usage caps. */
  maxTokens: number | null;
  /** Spend in all, USD, or null. */
  maxCostUsd: number | null;
}

/** One required output the harness checks, not the model. */
export type ContractCheck =
  | { kind: "file_exists"; path: string }
  | { kind: "file_contains"; path: string; pattern: string }
  | { kind: "command"; command: string };

/** How a run ended and what comes next. */
export type LoopDirective = "continue" | "sleep" | "pause" | "done";

/** A question to the owner a run is paused on (ask_owner, request_approval). */
export interface PendingQuestion {
  tool: string;
  toolCallId: string;
  /** The session id the call was made in: the answer resumes it. */
  sessionId: string;
  text: string;
  options?: string[];
  askedAt: number;
  remindAt: number;
  expiresAt: number;
  reminded: boolean;
  /** The owner's answer, once given; the next run records it as the tool's result. */
  answer?: string;
  /** No answer came before `expiresAt`: `answer` says so. */
  expired?: boolean;
  /** The question reached the outbox (a restart asks again when it did not). */
  sent?: boolean;
  /** The inbox row of the owner's message that answered it (a re-route after a crash finds it). */
  answeredBy?: number;
}

/** Machine state the stop decision and the next run read (mirrored in checkpoint.json). */
export interface Checkpoint {
  runs: number;
  /** Model calls over all runs. */
  turns: number;
  /** Tokens and spend of its runs and of its helpers (`helpers` says how much of it is theirs). */
  tokens: number;
  costUsd: number;
  /**
   * The helpers' usage (calls billed to its session with origin `subagent`) counted in `tokens`
   * and `costUsd` so far: each run's end adds what was billed since, so none counts twice.
   */
  helpers?: { tokens: number; costUsd: number };
  /** Runs in a row that ended with the progress fingerprint unchanged. */
  unchangedRuns: number;
  fingerprint: string | null;
  /** Stops without work_complete, refused so far. */
  completionRefusals: number;
  /** Runs in a row that failed (a provider error). */
  failuresInRow: number;
  lastDirective: { directive: LoopDirective; reason: string; at: number } | null;
  /** The agent's summary from work_complete. */
  summary: string | null;
  /** When the owner last got a progress message, and the finished items not told yet. */
  reportedAt: number | null;
  unreported: string[];
  /** The last question a run resumed with and its answer, for the handoff of later runs. */
  lastAnswer?: { question: string; answer: string } | null;
  /** The end message reached the outbox (a restart sends it when it did not). */
  endNotified?: boolean;
}

/** One assignment. */
export interface Assignment {
  id: string;
  agentId: string;
  goal: string;
  /** The chat that gets progress, questions and the end summary; null: none (CLI, no --deliver). */
  owner: ChatTarget | null;
  /** The sender who started it: only they answer its questions in the owner chat (null: anyone there). */
  requestedBy: string | null;
  /** The owner chat is private (a direct chat, or the CLI): runs load MEMORY.md and daily notes. */
  privateChat: boolean;
  /** Its own session, every run in it. */
  sessionKey: string;
  state: AssignmentState;
  /** Why it is in its state (a stall, the budget, the question asked), for `task show`. */
  stateReason: string | null;
  limits: AssignmentLimits;
  contract: ContractCheck[];
  items: WorkItem[];
  checkpoint: Checkpoint;
  question: PendingQuestion | null;
  createdAt: number;
  updatedAt: number;
}

/** One run of an assignment, as its log keeps it. */
export interface AssignmentRun {
  assignmentId: string;
  runNo: number;
  runId: string;
  startedAt: number;
  endedAt: number | null;
  directive: LoopDirective | null;
  reason: string | null;
  turns: number;
  tokens: number;
  costUsd: number;
}

/** What `finishRun` writes (see there). */
export interface RunFinish {
  assignmentId: string;
  runNo: number;
  log: Pick<AssignmentRun, "endedAt" | "directive" | "reason" | "turns" | "tokens" | "costUsd">;
  state: AssignmentState;
  reason: string | null;
  from: readonly AssignmentState[];
  work: { items: WorkItem[]; checkpoint: Checkpoint; question: PendingQuestion | null };
  /** The next run (or the question's reminder): a wake in `sessionKey`. */
  next?: { sessionKey: string; dueAt: number; reason: string; target: ChatTarget | null };
}

/** What may be written together by the run holding the assignment (never the state). */
export interface AssignmentWork {
  items?: WorkItem[];
  checkpoint?: Checkpoint;
  question?: PendingQuestion | null;
}

/** The assignments (see the file header). */
export interface AssignmentRepo {
  create(a: Assignment): Promise<void>;
  get(id: string): Promise<Assignment | undefined>;
  bySession(sessionKey: string): Promise<Assignment | undefined>;
  /** The agent's assignments, newest first; `open`: only those not in a final state. */
  list(agentId: string, options?: { open?: boolean; limit?: number }): Promise<Assignment[]>;
  /** Assignments waiting on a question whose owner is this chat (channel, account, chat, thread). */
  waitingOn(target: ChatTarget): Promise<Assignment[]>;
  /** The assignment whose question the message of inbox row `inboxId` answered, if any. */
  answeredBy(inboxId: number): Promise<Assignment | undefined>;
  /** Writes items, checkpoint or the question. */
  saveWork(id: string, work: AssignmentWork, now: number): Promise<void>;
  /**
   * Moves to `state` only from one of `from` (all when omitted); false when it was elsewhere
   * (a cancel got there first). Work given is written in the same step.
   */
  setState(
    id: string,
    state: AssignmentState,
    reason: string | null,
    now: number,
    options?: { from?: readonly AssignmentState[]; work?: AssignmentWork },
  ): Promise<boolean>;
  /** Logs a run's start; its end is `finishRun`. */
  startRun(run: Omit<AssignmentRun, "endedAt" | "directive" | "reason">): Promise<void>;
  /**
   * A run's end in one step: its row in the run log; then, while the state is still one of
   * `end.from`, the new state with the work and the next run's wake in place of any waiting in
   * the assignment's session. When the state had moved (a cancel got there first) only the
   * items and checkpoint are kept, and it returns false.
   */
  finishRun(end: RunFinish, now: number): Promise<boolean>;
  /** The last `limit` runs, newest first. */
  runs(assignmentId: string, limit: number): Promise<AssignmentRun[]>;
}

/** A learning's state: seen so far, written into MEMORY.md, or dropped by the owner. */
export type LearningState = "candidate" | "promoted" | "dropped";

/** One learning an agent reported, deduplicated by its normalized text. */
export interface Learning {
  id: number;
  agentId: string;
  /** Normalized text (the dedupe key). */
  norm: string;
  /** As first reported. */
  text: string;
  scope: string | null;
  /** The assignments (or sessions, outside an assignment) that reported it. */
  sources: string[];
  state: LearningState;
  createdAt: number;
  updatedAt: number;
}

/** Learnings (see Learning). */
export interface LearningRepo {
  /** Records that `source` reported it (once per source); returns the learning as it is now. */
  record(
    l: { agentId: string; norm: string; text: string; scope: string | null; source: string },
    now: number,
  ): Promise<Learning>;
  get(id: number): Promise<Learning | undefined>;
  list(agentId: string): Promise<Learning[]>;
  setState(id: number, state: LearningState, now: number): Promise<boolean>;
}
