/**
 * Compaction's text work: the compacted span as plain text, chunking by tokens, the identifiers
 * a summary must keep, and the summary's audit.
 */
import type { TranscriptEvent } from "../store/repos/transcript-repo.js";
import { estimateTokens, estimateTokensOnce } from "./context/tokens.js";
import type { TurnContext } from "./hooks.js";
import type { ChatMessage } from "./providers/types.js";
import { toChatMessages } from "./transcript.js";

const SUMMARY_FLOOR_CHARS = 200;

/** What the agent is told in its silent turn before a summary. */
export const FLUSH_NOTE =
  "[The conversation is about to be compacted: older turns will be replaced by a summary.] Save anything that must outlast this with memory_write now (decisions, facts about your person, commitments, progress). Then reply with just NO_REPLY. Nothing you write here is sent.";
/** The summarizer's instructions. */
export const SUMMARY_INSTRUCTIONS = `You compact a conversation between an AI agent and its person so the agent can continue it. Write a structured summary in the agent's voice with these sections:
## Goal — what the person wants overall.
## Decisions — what was decided and why.
## Progress — what is done, with counts ("17 of 43").
## Last step — what was just done.
## Next step — what comes next.
## Facts — everything the agent will need again.
Keep every identifier verbatim: UUIDs, hashes, URLs, file paths, ids, numbers, names. Do not invent anything. Be complete but brief.`;

/** The span as plain text for the summarizer. */
export function renderSpan(events: readonly TranscriptEvent[]): string {
  return toChatMessages(events)
    .map((m) =>
      m.role === "tool"
        ? `[tool ${m.name} result] ${m.content}`
        : m.role === "assistant"
          ? `[agent] ${m.content}${m.toolCalls.map((c) => `\n[agent calls ${c.name} ${c.argumentsJson}]`).join("")}`
          : `[person] ${m.content}`,
    )
    .join("\n");
}

export function chunkByTokens(text: string, maxTokens: number): string[] {
  const maxChars = maxTokens * 4;
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += maxChars) chunks.push(text.slice(i, i + maxChars));
  return chunks.length > 0 ? chunks : [""];
}

const IDENTIFIER_PATTERNS = [
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  /\bhttps?:\/\/[^\s)\]"'<>]+/g,
  /\b[0-9a-f]{12,64}\b/g,
];

/** Identifiers a summary must keep: UUIDs, URLs, long hex hashes. */
export function identifiersIn(text: string): string[] {
  const found = new Set<string>();
  for (const re of IDENTIFIER_PATTERNS) for (const m of text.matchAll(re)) found.add(m[0]);
  return [...found].slice(0, 200);
}

/** Why a summary fails its audit, or undefined when it passes. */
export function auditSummary(summary: string, identifiers: readonly string[]): string | undefined {
  if (summary.trim() === "") return "the summary is empty";
  if (summary.length < SUMMARY_FLOOR_CHARS)
    return `the summary is shorter than ${SUMMARY_FLOOR_CHARS} characters`;
  const missing = identifiers.filter((id) => !summary.includes(id));
  return missing.length > 0 ? `missing ${missing.slice(0, 20).join(", ")}` : undefined;
}

/** Tokens of messages as sent: their text plus the wire format's structure. */
export function estimateMessages(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) {
    // The wire format's own tokens (roles, block types, ids) come on top of the text.
    n += 12 + estimateTokens(m.content);
    if (m.role === "assistant") for (const c of m.toolCalls) n += estimateTokens(c.argumentsJson) + 8;
  }
  return n;
}

/** Tokens of a context: system and messages. */
export function estimateContext(context: TurnContext): number {
  return estimateTokensOnce(context.system) + estimateMessages(context.messages);
}

/**
 * Index of the first event kept verbatim: the newest events within `keep` tokens, moved to the
 * start of a turn (a user message or trigger) so no tool call is parted from its result.
 */
export function recentBoundary(events: readonly TranscriptEvent[], keep: number): number {
  let tokens = 0;
  let i = events.length;
  while (i > 0) {
    const t = estimateTokens(JSON.stringify(events[i - 1]?.payload ?? ""));
    if (tokens + t > keep) break;
    tokens += t;
    i--;
  }
  while (i < events.length) {
    const p = events[i]?.payload;
    if (p?.type === "user" || p?.type === "trigger") break;
    i++;
  }
  // Keep at least the last turn verbatim.
  if (i >= events.length) {
    for (let j = events.length - 1; j >= 0; j--) {
      const p = events[j]?.payload;
      if (p?.type === "user" || p?.type === "trigger") return j;
    }
  }
  return i;
}
