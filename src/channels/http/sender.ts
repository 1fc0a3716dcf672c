/**
 * Who is speaking on the HTTP and console channels: a sender name chosen by the client. Names
 * may use any script (`josé`, `Łukasz`, `山田`), so they are checked, never rewritten: a
 * rewritten name would silently merge two people into one session.
 */

/** Longest sender name, in characters. */
export const SENDER_MAX_CHARS = 128;

/** Letters and digits of any script (with their combining marks), and `. @ + - _`. */
const SENDER = /^[\p{L}\p{M}\p{N}._@+-]+$/u;

/** How much of a rejected value an error message repeats. */
const ECHO_MAX_CHARS = 40;

/**
 * Why `value` is not a valid sender name, or undefined when it is. The message names the field,
 * what was found (cut to a few dozen characters) and what is expected.
 */
export function senderProblem(value: unknown, field = "sender"): string | undefined {
  if (typeof value === "string") {
    const length = [...value].length;
    if (length >= 1 && length <= SENDER_MAX_CHARS && SENDER.test(value.normalize("NFC"))) return undefined;
  }
  return `"${field}" must be 1–${SENDER_MAX_CHARS} letters or digits (any script) or . @ + - _ (found ${describe(value)})`;
}

/** The canonical form of a valid sender name (NFC), so `josé` typed two ways is one person. */
export function normalizeSender(value: string): string {
  return value.normalize("NFC");
}

function describe(value: unknown): string {
  if (typeof value !== "string")
    return value === undefined
      ? "nothing"
      : (JSON.stringify(value)?.slice(0, ECHO_MAX_CHARS) ?? typeof value);
  const chars = [...value];
  if (chars.length === 0) return "an empty string";
  const shown = chars.length > ECHO_MAX_CHARS ? `${chars.slice(0, ECHO_MAX_CHARS).join("")}…` : value;
  return `${JSON.stringify(shown)}${chars.length > ECHO_MAX_CHARS ? ` (${chars.length} characters)` : ""}`;
}
