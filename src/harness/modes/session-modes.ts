/**
 * Mode changes that are not chat commands: an assignment started with `--plan` (its session is
 * made in plan mode before its first run is queued), and an assignment's plan approved by its
 * owner (the answer to a request_approval asked in plan mode switches it to execute).
 */
import type { PendingQuestion } from "../../store/repos/assignment-repo.js";
import type { SessionRepo } from "../../store/repos/session-repo.js";
import { newId } from "../../util/ids.js";
import { isApproval } from "../tools/exec/exec-approvals.js";

/** The tool whose approval, asked in plan mode, ends it. */
export const PLAN_APPROVAL_TOOL = "request_approval";

/**
 * Puts `sessionKey` in plan mode, making its session when it has none (an assignment's session
 * before its first run: the run's fresh session id keeps the mode).
 */
export async function startInPlanMode(
  sessions: Pick<SessionRepo, "ensure" | "setMode">,
  sessionKey: string,
  now: number,
): Promise<void> {
  await sessions.ensure(sessionKey, newId("ses"), null, now);
  await sessions.setMode(sessionKey, "plan", now);
}

/**
 * The owner answered `question`: when it is a request_approval the session asked in plan mode
 * and the answer approves (isApproval: it starts with yes, ok, approve(d), sure, go ahead or do
 * it; an expired question never does), the session switches to execute mode. Returns whether it
 * switched. Anything else — a no, a change asked for, ask_owner — leaves plan mode on.
 */
export async function approvePlanOnAnswer(
  sessions: Pick<SessionRepo, "get" | "setMode">,
  sessionKey: string,
  question: Pick<PendingQuestion, "tool" | "answer" | "expired">,
  now: number,
): Promise<boolean> {
  if (question.tool !== PLAN_APPROVAL_TOOL || question.expired || question.answer === undefined) return false;
  if (!isApproval(question.answer)) return false;
  if ((await sessions.get(sessionKey))?.mode !== "plan") return false;
  return sessions.setMode(sessionKey, "execute", now);
}
