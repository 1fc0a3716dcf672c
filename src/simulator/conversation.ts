/**
 * Reads a request body of either protocol (OpenAI Chat Completions, Anthropic Messages) into a
 * {@link SimulatedConversation}: the newest ask, the tool calls made since with their results,
 * and the tools on offer. The simulator keeps no state between requests: this is all it knows.
 */
import type { ConversationCall, SimulatedConversation } from "./types.js";

/** OpenAI tool results carry no error flag: the gateway starts a failed one with "error". */
const OPENAI_ERROR_RESULT = /^error\b/;

/** The conversation of a request body (an empty ask and no calls when it has none). */
export function readConversation(body: unknown): SimulatedConversation {
  const record = isRecord(body) ? body : {};
  const messages = Array.isArray(record.messages) ? record.messages.filter(isRecord) : [];
  let ask = "";
  let calls: ConversationCall[] = [];
  const byId = new Map<string, ConversationCall>();
  const answer = (id: unknown, content: string, isError: boolean): void => {
    const call = typeof id === "string" ? byId.get(id) : undefined;
    if (call) call.result = { content, isError };
  };
  for (const message of messages) {
    const blocks = Array.isArray(message.content) ? message.content.filter(isRecord) : [];
    if (message.role === "assistant") {
      const openai = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
      for (const c of openai) {
        const fn = isRecord(c.function) ? c.function : {};
        addCall(String(fn.name ?? ""), parseArgs(fn.arguments), c.id);
      }
      for (const b of blocks) if (b.type === "tool_use") addCall(String(b.name ?? ""), b.input ?? {}, b.id);
      continue;
    }
    if (message.role === "tool") {
      const content = textOf(message.content);
      answer(message.tool_call_id, content, OPENAI_ERROR_RESULT.test(content));
      continue;
    }
    if (message.role !== "user") continue;
    for (const b of blocks)
      if (b.type === "tool_result") answer(b.tool_use_id, textOf(b.content), b.is_error === true);
    const said = textOf(
      typeof message.content === "string" ? message.content : blocks.filter((b) => b.type === "text"),
    );
    if (said !== "") {
      ask = said.replace(/^<context>[\s\S]*?<\/context>\n\n/, "");
      calls = [];
      byId.clear();
    }
  }
  return { ask, calls, offered: offeredTools(record.tools) };

  function addCall(name: string, args: unknown, id: unknown): void {
    const call: ConversationCall = { name, args };
    calls.push(call);
    if (typeof id === "string") byId.set(id, call);
  }
}

/** Tool names of OpenAI (`{ function: { name } }`) and Anthropic (`{ name }`) tool lists. */
function offeredTools(tools: unknown): ReadonlySet<string> {
  const names = new Set<string>();
  for (const t of Array.isArray(tools) ? tools.filter(isRecord) : []) {
    const name = isRecord(t.function) ? t.function.name : t.name;
    if (typeof name === "string") names.add(name);
  }
  return names;
}

/** A string, or the text parts of a content array joined by newlines. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(isRecord)
    .flatMap((part) => (part.type === "text" ? [String(part.text)] : []))
    .join("\n");
}

function parseArgs(json: unknown): unknown {
  if (typeof json !== "string") return {};
  try {
    return JSON.parse(json);
  } catch {
    return {};
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
