/**
 * Assignments as the owner handles them, whatever the door (`/task`, `switchyard task`, the
 * agent's `task_start`): made from a goal with checked input, started, cancelled, answered.
 * Each step is a store write plus, where work should happen, a wake in the assignment's
 * session: the scheduler runs it as background work, in this process or the one hosting it.
 */
import { randomBytes } from "node:crypto";
import type { ReplyTarget } from "../tools/types.js";
import type {
  Assignment,
  AssignmentLimits,
  AssignmentState,
  Checkpoint,
  ContractCheck,
  PendingQuestion,
} from "../../store/repos/assignment-repo.js";
import type { Store } from "../../store/types.js";
import { validateContract } from "./contract.js";
import { AssignmentInputError } from "./errors.js";

/** States an assignment never leaves. */
export const FINAL_STATES: readonly AssignmentState[] = ["stalled", "done", "failed", "cancelled"];

/** States in which an assignment still runs (or waits to). */
export const OPEN_STATES: readonly AssignmentState[] = ["active", "sleeping", "requires_action"];

/** True while the assignment still runs or waits to. */
export function isOpen(a: Pick<Assignment, "state">): boolean {
  return OPEN_STATES.includes(a.state);
}

/** The counters of a new assignment. */
export const NEW_CHECKPOINT: Checkpoint = {
  runs: 0,
  turns: 0,
  tokens: 0,
  costUsd: 0,
  unchangedRuns: 0,
  fingerprint: null,
  completionRefusals: 0,
  failuresInRow: 0,
  lastDirective: null,
  summary: null,
  reportedAt: null,
  unreported: [],
};

/** A goal's length bounds, in characters. */
export const GOAL_MAX_CHARS = 4_000;

/** What a new assignment gets from the configuration. */
export interface AssignmentDefaults {
  agentId: string;
  limits: AssignmentLimits;
  allowCommands: boolean;
}

/** The session every run of an assignment runs in. */
export function assignmentSessionKey(agentId: string, id: string): string {
  return `agent:${agentId}:task:${id}`;
}

/** True for an assignment's session key (its wakes run the assignment). */
export function isAssignmentSession(sessionKey: string): boolean {
  return /^agent:[^:]+:task:[a-z0-9]+$/.test(sessionKey);
}

/** Checks the goal: 1 to GOAL_MAX_CHARS characters after trimming. */
function checkGoal(goal: string): string {
  const g = goal.trim();
  if (g === "") throw new AssignmentInputError("goal: expected a goal, got an empty one");
  if (g.length > GOAL_MAX_CHARS)
    throw new AssignmentInputError(
      `goal: ${g.length} characters is too long (at most ${GOAL_MAX_CHARS}); put the details in a file in the workspace and name it`,
    );
  return g;
}

/** A new assignment (not stored): checked goal and contract, limits from the defaults. */
export function newAssignment(
  input: {
    goal: string;
    owner: ReplyTarget | null;
    contract?: readonly ContractCheck[];
    /** The sender who asked for it (only they answer its questions); default anyone in the chat. */
    requestedBy?: string | null;
    /** The owner chat is private (default true: the CLI's operator, a direct chat). */
    privateChat?: boolean;
  },
  d: AssignmentDefaults,
  now: number,
): Assignment {
  const goal = checkGoal(input.goal);
  const contract = validateContract(input.contract ?? [], { allowCommands: d.allowCommands });
  const id = `t${randomBytes(4).readUInt32BE(0).toString(36).padStart(7, "0")}`;
  return {
    id,
    agentId: d.agentId,
    goal,
    // A chat as the gateway named it (ReplyTarget restates ChatTarget for the harness).
    owner: input.owner as Assignment["owner"],
    requestedBy: input.requestedBy ?? null,
    privateChat: input.privateChat ?? true,
    sessionKey: assignmentSessionKey(d.agentId, id),
    state: "active",
    stateReason: null,
    limits: d.limits,
    contract,
    items: [],
    checkpoint: { ...NEW_CHECKPOINT },
    question: null,
    createdAt: now,
    updatedAt: now,
  };
}

type AssignmentStore = Pick<Store, "assignments" | "wakes">;

/** Stores a new assignment and queues its first run now. */
export async function startAssignment(store: AssignmentStore, a: Assignment, now: number): Promise<void> {
  await store.assignments.create(a);
  await queueRun(store, a, now, "start");
}

/**
 * Queues the assignment's next run at `at` (a wake in its session), unless one is waiting by
 * then; a later waiting one gives way. (A run's end writes its wake with its state instead:
 * AssignmentRepo.finishRun.)
 */
export async function queueRun(
  store: AssignmentStore,
  a: Pick<Assignment, "sessionKey" | "owner">,
  at: number,
  why: string,
  now = at,
): Promise<void> {
  const pending = await store.wakes.list(a.sessionKey);
  if (pending.some((w) => w.dueAt <= at)) return;
  for (const w of pending) await store.wakes.cancel(w.id, a.sessionKey);
  await store.wakes.add(
    { sessionKey: a.sessionKey, dueAt: at, reason: why, target: a.owner },
    { maxPending: 1, minGapMs: 0 },
    now,
  );
}

/** The agent's assignment `id` (or the one its unique prefix names); throws naming the problem. */
export async function findAssignment(
  store: Pick<Store, "assignments">,
  agentId: string,
  id: string,
): Promise<Assignment> {
  const wanted = id.trim().replace(/^#/, "");
  if (wanted === "") throw new AssignmentInputError("id: expected an assignment id (see task list)");
  const exact = await store.assignments.get(wanted);
  if (exact && exact.agentId === agentId) return exact;
  const matches = (await store.assignments.list(agentId)).filter((a) => a.id.startsWith(wanted));
  if (matches.length === 1 && matches[0]) return matches[0];
  if (matches.length > 1)
    throw new AssignmentInputError(`id: "${wanted}" matches ${matches.length} assignments; give more of it`);
  throw new AssignmentInputError(`id: no assignment "${wanted}" (see task list)`);
}

/** Cancels an open assignment and its waiting wakes. */
export async function cancelAssignment(
  store: AssignmentStore,
  agentId: string,
  id: string,
  now: number,
): Promise<Assignment> {
  const a = await findAssignment(store, agentId, id);
  if (
    !(await store.assignments.setState(a.id, "cancelled", "cancelled by the owner", now, {
      from: OPEN_STATES,
    }))
  )
    throw new AssignmentInputError(
      `assignment ${a.id} is already ${(await store.assignments.get(a.id))?.state ?? a.state}`,
    );
  for (const w of await store.wakes.list(a.sessionKey)) await store.wakes.cancel(w.id, a.sessionKey);
  return { ...a, state: "cancelled" };
}

/** Answers the question an assignment waits on; its next run (queued now) gets it as the tool's result. */
export async function answerAssignment(
  store: AssignmentStore,
  agentId: string,
  id: string,
  text: string,
  now: number,
): Promise<Assignment> {
  const a = await findAssignment(store, agentId, id);
  const answer = text.trim();
  if (answer === "") throw new AssignmentInputError("answer: expected some text, got none");
  if (answer.length > GOAL_MAX_CHARS)
    throw new AssignmentInputError(
      `answer: ${answer.length} characters is too long (at most ${GOAL_MAX_CHARS})`,
    );
  if (a.state !== "requires_action" || !a.question)
    throw new AssignmentInputError(
      `assignment ${a.id} is not waiting for an answer (it is ${a.state}${FINAL_STATES.includes(a.state) ? "" : "; nothing was asked"})`,
    );
  const question = { ...a.question, answer };
  if (!(await recordAnswer(store, a, question, now)))
    throw new AssignmentInputError(`assignment ${a.id} is no longer waiting for an answer`);
  return { ...a, state: "active", question };
}

/**
 * Stores `question` (answered) on `a` while it still waits on it, and queues the run that reads
 * the answer now; false when it no longer waits (answered or cancelled meanwhile).
 */
export async function recordAnswer(
  store: AssignmentStore,
  a: Assignment,
  question: PendingQuestion,
  now: number,
): Promise<boolean> {
  const moved = await store.assignments.setState(a.id, "active", "the owner answered", now, {
    from: ["requires_action"],
    work: { question },
  });
  if (moved) await queueRun(store, a, now, "the owner answered");
  return moved;
}

/** The `assignments` config section, as the defaults read it. */
export interface AssignmentSettings {
  maxTurnsPerRun: number;
  maxRunMinutes: number;
  maxRuns: number;
  maxTokens?: number | undefined;
  maxCostUsd?: number | undefined;
  commandChecks: boolean;
}

/** A new assignment's defaults from the agent id and the `assignments` config section. */
export function assignmentDefaults(agentId: string, s: AssignmentSettings): AssignmentDefaults {
  return {
    agentId,
    limits: {
      maxTurnsPerRun: s.maxTurnsPerRun,
      maxRunMinutes: s.maxRunMinutes,
      maxRuns: s.maxRuns,
      maxTokens: s.maxTokens ?? null,
      maxCostUsd: s.maxCostUsd ?? null,
    },
    allowCommands: s.commandChecks,
  };
}
