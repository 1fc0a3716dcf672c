/**
 * What a heartbeat turn says to the model and how its answer is read. The agent's checklist is
 * HEARTBEAT.md in the workspace; while it holds nothing to act on (headers, comments, empty
 * list items) no model call is made. The model answers HEARTBEAT_OK when nothing needs the
 * person's attention; such an acknowledgement is not delivered.
 */

/** The token a heartbeat answer starts or ends with when nothing needs attention. */
export const HEARTBEAT_OK = "HEARTBEAT_OK";

/** The heartbeat turn's instruction; the checklist follows it (see heartbeatTriggerText). */
export const HEARTBEAT_PROMPT = `This is a scheduled heartbeat, not a message from the person. Follow the checklist from HEARTBEAT.md below strictly. Do not repeat old tasks from earlier chats or infer new ones. If nothing needs the person's attention now, reply with exactly ${HEARTBEAT_OK}. Otherwise reply with the message they should get.`;

/** The text of a heartbeat turn: the instruction, then the checklist as it is now. */
export function heartbeatTriggerText(checklist: string): string {
  return `${HEARTBEAT_PROMPT}\n\n--- HEARTBEAT.md ---\n${checklist.trim()}\n--- end of HEARTBEAT.md ---`;
}

/**
 * True when HEARTBEAT.md gives the agent nothing to do: only blank lines, Markdown headers,
 * HTML comments, empty list items or fence markers. A missing file is not empty (the
 * agent may still have standing instructions elsewhere), so callers decide that case.
 */
export function isHeartbeatChecklistEmpty(text: string): boolean {
  const withoutComments = text.replace(/<!--[\s\S]*?-->/g, "");
  return withoutComments.split("\n").every((raw) => {
    const line = raw.trim();
    return (
      line === "" ||
      /^#{1,6}(\s|$)/.test(line) ||
      /^([-*+]|\d+[.)])(\s+\[[ xX]?\])?\s*$/.test(line) ||
      /^(```|~~~)/.test(line)
    );
  });
}

/**
 * Decides what of a heartbeat answer reaches the person. `HEARTBEAT_OK` at the start or end is
 * stripped; if it was there and at most `ackMaxChars` characters remain, nothing is delivered.
 * An answer without the token is delivered as it is (empty answers never are).
 */
export function heartbeatDelivery(answer: string, ackMaxChars: number): string | null {
  let text = answer.trim();
  let acknowledged = false;
  for (const strip of [/^\**HEARTBEAT_OK\**[\s.!:,—–-]*/i, /[\s:,—–-]*\**HEARTBEAT_OK\**[.!]?$/i]) {
    const stripped = text.replace(strip, "");
    if (stripped !== text) {
      acknowledged = true;
      text = stripped.trim();
    }
  }
  if (text === "") return null;
  if (acknowledged && text.length <= ackMaxChars) return null;
  return text;
}

/** Whether beats run now, and why not: what `status` shows of the heartbeat. */
export interface HeartbeatCondition {
  /** `off`: no beats at all; `skipped`: beats fire but make no model call; `on`: they run. */
  state: "off" | "skipped" | "on";
  /** Why it is off or skipped. */
  reason?: string;
}

/**
 * The heartbeat's condition from its settings and HEARTBEAT.md's text (`undefined`: no such
 * file). The first reason that applies wins, in the order a beat checks them.
 */
export function heartbeatCondition(o: {
  everyMs: number;
  checklist: string | undefined;
  /** False outside `heartbeat.activeHours`. */
  active?: boolean;
  /** True while the daily spend cap pauses background work. */
  spendPaused?: boolean;
}): HeartbeatCondition {
  if (o.everyMs === 0) return { state: "off", reason: "heartbeat.everyMs is 0" };
  if (o.active === false) return { state: "skipped", reason: "outside heartbeat.activeHours" };
  if (o.spendPaused)
    return { state: "skipped", reason: "the daily spend cap (limits.dailySpendUsd) is reached" };
  if (o.checklist === undefined)
    return { state: "skipped", reason: "there is no HEARTBEAT.md in the workspace: nothing to check" };
  if (isHeartbeatChecklistEmpty(o.checklist))
    return {
      state: "skipped",
      reason:
        "HEARTBEAT.md has nothing to act on (only headers, comments or empty items): add a checklist item",
    };
  return { state: "on" };
}
