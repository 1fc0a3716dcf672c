/** A tool call in a few words, as a chat's helper list shows it: "web_fetch example.com/pricing". */
import type { ToolCall } from "../../harness/providers/types.js";

/** Longest summary of a call's arguments, in characters (the tool's name comes on top). */
export const CALL_SUMMARY_MAX_CHARS = 60;

/** The argument a call is best known by, where a tool has one (else its first text argument). */
const KEY_ARGS = ["url", "path", "query", "command", "pattern", "task", "name"];

/**
 * `name` and its main argument (a URL without its scheme, a path, a query…), on one line, cut
 * to CALL_SUMMARY_MAX_CHARS; just `name` when the arguments hold no text.
 */
export function callSummary(call: Pick<ToolCall, "name" | "argumentsJson">): string {
  const arg = mainArgument(call.argumentsJson);
  if (arg === undefined) return call.name;
  const text = arg
    .replace(/^https?:\/\/(www\.)?/i, "")
    .replace(/\s+/g, " ")
    .trim();
  if (text === "") return call.name;
  const cut = text.length > CALL_SUMMARY_MAX_CHARS ? `${text.slice(0, CALL_SUMMARY_MAX_CHARS - 1)}…` : text;
  return `${call.name} ${cut}`;
}

function mainArgument(json: string): string | undefined {
  let args: unknown;
  try {
    args = JSON.parse(json);
  } catch {
    return undefined; // the model's arguments were not JSON: the tool refuses them anyway
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return undefined;
  const record = args as Record<string, unknown>;
  for (const key of KEY_ARGS) if (typeof record[key] === "string") return record[key];
  return Object.values(record).find((v): v is string => typeof v === "string");
}
