/**
 * What an assignment's run starts from: a fresh run from the handoff (a new session, the project
 * files, the contract's gaps); a run resumed after a question with the owner's answer as the
 * tool's result; and, either way, a note naming the helpers that outran a wait_agents wait.
 */
import { contractGaps } from "../../harness/assignments/contract.js";
import { handoffText } from "../../harness/assignments/handoff.js";
import type { ProjectFiles } from "../../harness/assignments/project-files.js";
import { approvePlanOnAnswer } from "../../harness/modes/session-modes.js";
import type { Assignment } from "../../store/repos/assignment-repo.js";
import type { TranscriptPayload } from "../../store/repos/transcript-repo.js";
import type { Store } from "../../store/types.js";
import type { Clock } from "../../util/clock.js";
import { newId } from "../../util/ids.js";
import { outranTheirWait } from "../subagents/helper-waits.js";
import { waitTimedOutText } from "../subagents/subagent-text.js";
import type { FinishContext } from "./assignment-finish.js";

/** What the inputs are made from. */
export interface RunInputDeps {
  store: Store;
  clock: Clock;
  files: ProjectFiles;
  checks: FinishContext["checks"];
}

/** The run's first inputs: the owner's answer (resumed), or the handoff in a fresh session. */
export async function runInputs(a: Assignment, runNo: number, d: RunInputDeps): Promise<TranscriptPayload[]> {
  const { store, clock, files } = d;
  const resume = a.question?.answer !== undefined ? a.question : null;
  if (resume) {
    // The owner's yes to a plan asked for in plan mode: this run follows it (execute mode).
    await approvePlanOnAnswer(store.sessions, a.sessionKey, resume, clock.now());
    return [
      {
        type: "tool_result",
        toolCallId: resume.toolCallId,
        name: resume.tool,
        content: resume.expired ? (resume.answer ?? "") : `The owner answered: ${resume.answer}`,
        isError: false,
      },
    ];
  }
  await files.ensure(a.id);
  // A fresh context: a new session id (made, for the first run).
  await store.sessions.reset(a.sessionKey, newId("ses"), clock.now());
  const gaps = a.contract.length > 0 ? await contractGaps(a.contract, d.checks) : [];
  return [
    { type: "trigger", origin: "assignment", text: handoffText(a, runNo, await files.handoff(a.id), gaps) },
  ];
}

/**
 * The helpers an earlier run waited on (wait_agents) that still run after the wait's deadline,
 * as a note to the run (read from their rows, so a run after a restart says it too); undefined
 * when there are none.
 */
export async function helperWaitNote(
  store: Pick<Store, "subagents">,
  sessionKey: string,
  now: number,
): Promise<TranscriptPayload | undefined> {
  const late = outranTheirWait(await store.subagents.listForParent(sessionKey), now);
  return late.length > 0 ? { type: "trigger", origin: "subagent", text: waitTimedOutText(late) } : undefined;
}
