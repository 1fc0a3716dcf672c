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
