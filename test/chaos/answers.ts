/**
 * The run's messages and answers. The user in chat 3 sends its 17th message as `c3 m17`; the
 * model answers `c3 m17 answered: ` and filler words, deterministic from the tag, 150–300
 * characters. Any bot text can then be traced back: its leading tag names the message, and it
 * is the complete answer, a partial one (a preview), or neither.
 */
import type { Responder } from "../fakes/model-simulator.js";

/** A user message's identity. */
export interface Tag {
  chat: number;
  seq: number;
}

const WORDS = [
  "amber",
  "basalt",
  "cedar",
  "delta",
  "ember",
  "fjord",
  "granite",
  "harbor",
  "indigo",
  "juniper",
  "kelp",
  "lagoon",
  "meadow",
  "nectar",
  "onyx",
  "pebble",
  "quartz",
  "river",
  "saffron",
  "tundra",
  "umber",
  "velvet",
  "willow",
  "xenon",
  "yarrow",
  "zephyr",
];

/** The text the user sends. */
export function userText(tag: Tag): string {
  return `c${tag.chat} m${tag.seq}`;
}

/** The tag as it heads an answer, with the space after it that ends the number. */
export function tagPrefix(tag: Tag): string {
  return `${userText(tag)} `;
}

/** The complete answer to a message: its tag, then 150–300 characters of filler words. */
export function answerText(tag: Tag): string {
  let h = hash(userText(tag));
  const length = 150 + (h % 151);
  let text = `${userText(tag)} answered:`;
  while (text.length < length) {
    h = next(h);
    text += ` ${WORDS[h % WORDS.length]}`;
  }
  return `${text}.`;
}

/** The message a text names by its leading tag (the number must be followed by a space or end). */
export function parseTag(text: string): Tag | undefined {
  const m = /^c(\d+) m(\d+)(?:\s|$)/.exec(text.trim());
  return m ? { chat: Number(m[1]), seq: Number(m[2]) } : undefined;
}

/** How a bot text relates to the answer its tag names. */
export type AnswerShape = "complete" | "partial" | "other";

/** Complete: the whole answer; partial: a proper beginning of it (a preview); else other. */
export function shapeOf(text: string, tag: Tag): AnswerShape {
  const answer = answerText(tag);
  const shown = text.trim();
  if (shown === answer) return "complete";
  return shown !== "" && answer.startsWith(shown) ? "partial" : "other";
}

/** The tag and shape of a bot text, if it names a message. */
export function classify(text: string): { tag: Tag; shape: AnswerShape } | undefined {
  const tag = parseTag(text);
  return tag ? { tag, shape: shapeOf(text, tag) } : undefined;
}

/**
 * Characters per streamed chunk so that the first chunk (what a preview first shows) always
 * holds the whole tag and the space after it: at least 8, more for long tags.
 */
export function chunkCharsFor(chats: number, messagesPerChat: number): number {
  return Math.max(8, tagPrefix({ chat: chats, seq: messagesPerChat }).length);
}

/** The tag a user text carries anywhere (the gateway may put a sender or time before it). */
export function findTag(text: string): Tag | undefined {
  const all = [...text.matchAll(/\bc(\d+) m(\d+)\b/g)];
  const m = all.at(-1);
  return m ? { chat: Number(m[1]), seq: Number(m[2]) } : undefined;
}

/** The model's answer to a request: the answer to the tag in its last user message. */
export const chaosResponder: Responder = (request) => {
  const tag = findTag(lastUserText(request.body));
  return { text: tag ? answerText(tag) : "no tag in the message" };
};

/** The last user text of an Anthropic Messages body (the gateway's `<context>` block left out). */
export function lastUserText(body: unknown): string {
  const messages = isRecord(body) && Array.isArray(body.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (!isRecord(message) || message.role !== "user") continue;
    const parts =
      typeof message.content === "string"
        ? [message.content]
        : Array.isArray(message.content)
          ? message.content.filter(isRecord).flatMap((p) => (p.type === "text" ? [String(p.text)] : []))
          : [];
    if (parts.length > 0) return parts.join("\n").replace(/^<context>[\s\S]*?<\/context>\n\n/, "");
  }
  return "";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** FNV-1a, 32 bits. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** One xorshift step. */
function next(h: number): number {
  let x = h || 1;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
}
