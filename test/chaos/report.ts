/**
 * The human form of a chaos run's result: a few lines on what was sent, killed and found, the
 * problems, the last gateway's stderr when something went wrong, and the JSON summary line.
 */
import type { ChaosRunResult } from "./chaos-run.js";
import { passed } from "./verdict.js";

/** Lines of the last gateway's stderr shown when the run found problems. */
const STDERR_LINES = 15;

/** The report printed without --json (ends with the JSON summary line). */
export function humanReport(result: ChaosRunResult): string {
  const s = result.summary;
  const ok = passed(s);
  const moments = Object.entries(s.killsByMoment)
    .map(([moment, n]) => `${moment} ${n}`)
    .join(", ");
  const stall = s.restartToAnswerMs;
  const lines = [
    "",
    `chaos ${s.channel}: ${ok ? "PASS" : "FAIL"} in ${s.durationS} s (seed ${s.seed})`,
    `  ${s.messages} messages over ${s.chats} chats, ${s.kills} kills (${moments || "none"})`,
    `  answered ${s.answered}/${s.messages}; lost ${s.lost}, duplicated ${s.duplicated} (leftover previews ${s.leftoverPreviews}), telegram window ${s.telegramWindow}, out of order ${s.outOfOrder}, wrong chat ${s.wrongChat}, unrecognized ${s.unrecognized}`,
    `  restart → inherited conversation's answer beyond the model (start-up included): p50 ${fmt(stall.p50)}, max ${fmt(stall.max)}; stalls (> 2 s waiting after "listening on") ${s.stalls}`,
  ];
  if (s.details.length > 0) {
    lines.push("  problems:");
    for (const p of s.details)
      lines.push(`    ${p.kind} chat ${p.chat}${p.message ? ` ${p.message}` : ""}: ${p.shows}`);
  }
  for (const note of s.notes) lines.push(`  note: ${note}`);
  if (!ok && result.stderrTail.trim() !== "") {
    lines.push("  last gateway's stderr (tail):");
    for (const line of result.stderrTail.trimEnd().split("\n").slice(-STDERR_LINES))
      lines.push(`    ${line.slice(0, 300)}`);
  }
  if (result.keptHome) lines.push(`  gateway home kept at ${result.keptHome}`);
  lines.push(JSON.stringify(s), "");
  return lines.join("\n");
}

function fmt(ms: number | null): string {
  return ms === null ? "n/a" : `${ms} ms`;
}
