/**
 * Learnings kept per agent: recorded once per assignment (or session) that reports them, and
 * promoted into MEMORY.md when LEARNING_PROMOTE_AT of them did, or when the owner says so.
 */
import type { Learning } from "../../store/repos/assignment-repo.js";
import type { Store } from "../../store/types.js";
import {
  LEARNING_PROMOTE_AT,
  cleanLearning,
  normalizeLearning,
  promoteToMemory,
} from "../memory/learnings.js";
import { AssignmentInputError } from "./errors.js";

type LearningStore = Pick<Store, "learnings">;

/** Records a learning from `source`; promotes it when it is now seen in enough of them. */
export async function recordLearning(
  store: LearningStore,
  workspaceDir: string,
  l: { agentId: string; text: string; scope?: string | null; source: string },
  now: number,
): Promise<{ learning: Learning; promoted: boolean }> {
  const text = cleanLearning(l.text);
  if (typeof text !== "string") throw new AssignmentInputError(text.error);
  const learning = await store.learnings.record(
    { agentId: l.agentId, norm: normalizeLearning(text), text, scope: l.scope ?? null, source: l.source },
    now,
  );
  // Only assignments count: a lesson from chats (their sources are session keys) waits for the owner.
  if (learning.state !== "candidate" || assignmentSources(learning) < LEARNING_PROMOTE_AT)
    return { learning, promoted: false };
  await promoteToMemory(workspaceDir, learning.text);
  await store.learnings.setState(learning.id, "promoted", now);
  return { learning: { ...learning, state: "promoted" }, promoted: true };
}

/** How many assignments (not chat sessions) reported a learning. */
export function assignmentSources(learning: Learning): number {
  return learning.sources.filter((s) => !s.startsWith("agent:")).length;
}

/** What the `learn` tool tells the model of a recorded learning. */
export function recordedLine({ learning, promoted }: { learning: Learning; promoted: boolean }): string {
  const seen = assignmentSources(learning);
  if (promoted) return `learned, and added to MEMORY.md (reported in ${seen} assignments)`;
  return `learned (#${learning.id}, reported in ${seen} of the ${LEARNING_PROMOTE_AT} assignments that add it to MEMORY.md)`;
}

/** The agent's learning `id`, or an AssignmentInputError naming the problem. */
export async function findLearning(store: LearningStore, agentId: string, id: string): Promise<Learning> {
  const n = Number(id.replace(/^#/, ""));
  const learning = Number.isInteger(n) && n > 0 ? await store.learnings.get(n) : undefined;
  if (!learning || learning.agentId !== agentId)
    throw new AssignmentInputError(`id: no learning "${id}" (see learnings list)`);
  return learning;
}

/** The owner's approval: into MEMORY.md now, whatever its count. */
export async function promoteLearning(
  store: LearningStore,
  workspaceDir: string,
  agentId: string,
  id: string,
  now: number,
): Promise<Learning> {
  const learning = await findLearning(store, agentId, id);
  if (learning.state === "promoted")
    throw new AssignmentInputError(`learning #${learning.id} is already in MEMORY.md`);
  await promoteToMemory(workspaceDir, learning.text);
  await store.learnings.setState(learning.id, "promoted", now);
  return { ...learning, state: "promoted" };
}

/** Drops a learning: it is never promoted (a line already in MEMORY.md stays until edited out). */
export async function dropLearning(
  store: LearningStore,
  agentId: string,
  id: string,
  now: number,
): Promise<Learning> {
  const learning = await findLearning(store, agentId, id);
  if (learning.state === "dropped")
    throw new AssignmentInputError(`learning #${learning.id} is already dropped`);
  await store.learnings.setState(learning.id, "dropped", now);
  return { ...learning, state: "dropped" };
}
