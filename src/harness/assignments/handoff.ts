/**
 * The first message of every fresh run of an assignment: the goal, the work items, the
 * contract's gaps, how the last run ended, and the agent's own files (capped). It replaces the
 * transcript: a run starts from this, so run 200 costs what run 1 cost.
 */
import type { Assignment } from "../../store/repos/assignment-repo.js";
import { describeCheck } from "./contract.js";
import { itemLine } from "./live-run.js";
import { AGENT_FILES, projectDir } from "./project-files.js";

/** Work items listed in full; the rest are counted (work_item_list shows them). */
const ITEMS_SHOWN = 40;

export function handoffText(
  a: Assignment,
  runNo: number,
  files: { sessionState: string; workingBuffer: string; notes: string },
  gaps: readonly string[],
): string {
  const dir = projectDir(a.id);
  const lines = [
    `Assignment ${a.id}, run ${runNo} of at most ${a.limits.maxRuns}. Background work: no person is reading along.`,
    runNo === 1
      ? "This is the first run."
      : "This run starts with a fresh context: what earlier runs left is below, in the project files.",
    "",
    "## Goal",
    a.goal,
    "",
    "## Work items",
  ];
  if (a.items.length === 0) lines.push("None yet: break the goal into steps with work_item_add.");
  for (const i of a.items.slice(0, ITEMS_SHOWN)) lines.push(itemLine(i, 200));
  if (a.items.length > ITEMS_SHOWN) lines.push(`… ${a.items.length - ITEMS_SHOWN} more (work_item_list)`);
  if (a.contract.length > 0) {
    lines.push("", "## Contract (checked by the gateway before work_complete is accepted)");
    for (const c of a.contract) lines.push(`- ${describeCheck(c)}`);
    if (gaps.length > 0) lines.push("Not met yet:", ...gaps.map((g) => `- ${g}`));
  }
  const answered = a.checkpoint.lastAnswer;
  if (answered)
    lines.push(
      "",
      "## The owner's last answer",
      `You asked: ${answered.question}`,
      `They answered: ${answered.answer}`,
    );
  const last = a.checkpoint.lastDirective;
  if (last) lines.push("", `## Last run`, `${last.directive}: ${last.reason}`);
  lines.push(
    "",
    `## ${dir}/${AGENT_FILES.sessionState}`,
    files.sessionState || "(empty)",
    "",
    `## ${dir}/${AGENT_FILES.workingBuffer}`,
    files.workingBuffer || "(empty)",
    "",
    `## ${dir}/${AGENT_FILES.notes} (its end)`,
    files.notes || "(empty)",
    "",
    "## How to work",
    `- Do the next steps with your tools; mark work items in_progress and done as you go. Put outputs in ${dir}/ unless the goal says where.`,
    `- Keep ${AGENT_FILES.sessionState} current (write_file, or end_run's state): the next run starts from it. Notes worth keeping go to ${AGENT_FILES.notes}.`,
    "- When every item is done, call work_complete with a summary for the owner. If you need the owner, use ask_owner or request_approval.",
    `- This run may make ${a.limits.maxTurnsPerRun} model calls; to stop earlier, call end_run (continue now, or sleep until something is ready).`,
  );
  return lines.join("\n");
}
