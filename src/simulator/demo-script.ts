/**
 * The simulator's demo script: with no model API key, a few requests are answered with the
 * tool calls a real model would make, so a newcomer sees reminders, memory and assignments work.
 *   "remind me in N minutes (to X)"  → cron_add, then a line saying when
 *   "remember that …"                → memory_write (MEMORY.md), then a confirming line
 *   an assignment run (`/task goal`) → work_item_add, write_file (the file the goal names, else
 *                                      result.md in the project folder), work_item_update done,
 *                                      work_complete
 *   the reminder's own run           → a line reminding of X
 * Stateless: the next step follows from the conversation in the request (the newest ask and
 * the calls after it). Every text says it is simulated; a tool not on offer or a failed call
 * ends the demo with one line naming it.
 */
import type { ConversationCall, ScriptedTurn, SimulatedConversation } from "./types.js";

/** How every reply of the default responder begins. */
export const SIMULATED = "Simulated reply (no model API key is configured)";

/** A recognised "remind me in N minutes (to X)". */
export interface ReminderAsk {
  /** Minutes from now (hours are converted). */
  minutes: number;
  /** What to be reminded of, when said. */
  what?: string;
}

/** A recognised assignment run: the handoff of `src/harness/assignments/handoff.ts`. */
export interface AssignmentAsk {
  goal: string;
  /** The workspace file the goal names, else `result.md` in the project folder. */
  file: string;
  /** The lines asked for ("a two-line poem" → 2), when the goal says. */
  lines?: number;
}

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};
const NUMBER = String.raw`(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)`;
const REMIND_IN = new RegExp(
  String.raw`\bremind me\s+(?:to\s+(.+?)\s+)?in\s+${NUMBER}\s*(minutes?|mins?|m|hours?|hrs?|h)\b(?:\s+to\s+(.+))?`,
  "is",
);
const REMEMBER = /^\s*(?:please\s+)?remember\s+that\s+(.+)$/is;
const HANDOFF = /^Assignment \S+, run \d+ of at most \d+\./;
const GOAL = /\n## Goal\n([\s\S]*?)\n\n## Work items\n/;
const OUTPUT_DIR = /Put outputs in (\S+?)\/ unless the goal says where/;
const FILE_NAME = /(?<![\w/.-])((?:[\w-]+\/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])/g;
const LINE_COUNT = new RegExp(String.raw`\b${NUMBER}[- ]lines?\b`, "i");
const REMINDER_RUN =
  /^Scheduled job "[^"]*" \(not a message from the person\): Remind the person to (.+?)\.?$/s;
/** The message of a reminder job, as its run reads it (REMINDER_RUN). */
const reminderMessage = (what: string) => `Remind the person to ${what}.`;

/** "remind me in 2 minutes to stretch", "remind me to stretch in an hour"; undefined otherwise. */
export function recogniseReminder(text: string): ReminderAsk | undefined {
  const m = REMIND_IN.exec(text);
  if (!m) return undefined;
  const amount = numberOf(m[2] ?? "");
  if (amount === undefined || amount < 1) return undefined;
  const minutes = /^h/i.test(m[3] ?? "") ? amount * 60 : amount;
  const what = clean(m[1] ?? m[4] ?? "");
  return what === "" ? { minutes } : { minutes, what };
}

/** The fact of "remember that my cat is called Tom" ("My cat is called Tom."); undefined otherwise. */
export function recogniseMemory(text: string): string | undefined {
  const fact = clean(REMEMBER.exec(text)?.[1] ?? "");
  return fact === "" ? undefined : `${fact.charAt(0).toUpperCase()}${fact.slice(1)}.`;
}

/** The goal and output file of an assignment run's first message; undefined for other text. */
export function recogniseAssignment(text: string): AssignmentAsk | undefined {
  if (!HANDOFF.test(text)) return undefined;
  const goal = GOAL.exec(text)?.[1]?.trim();
  if (!goal) return undefined;
  const named = [...goal.matchAll(FILE_NAME)].map((m) => m[1] ?? "").find((f) => !/^(e\.g|i\.e)$/i.test(f));
  const file = named ?? `${OUTPUT_DIR.exec(text)?.[1] ?? "."}/result.md`;
  const count = LINE_COUNT.exec(goal)?.[1];
  const lines = count === undefined ? undefined : numberOf(count);
  return lines === undefined ? { goal, file } : { goal, file, lines: Math.min(lines, 50) };
}

/** What a reminder job the demo set asks for, when its run comes ("stretch"); undefined otherwise. */
export function recogniseReminderRun(text: string): string | undefined {
  return REMINDER_RUN.exec(text)?.[1];
}

/** One tool call of a demo: built from the calls before it. */
interface DemoStep {
  tool: string;
  args(before: readonly ConversationCall[]): unknown;
  /** A failed call that is made again (with new args) instead of ending the demo. */
  retryOn?: RegExp;
}

/** A demo: its calls in order, then its closing text. */
interface Demo {
  steps: DemoStep[];
  done(calls: readonly ConversationCall[]): string;
}

/** Attempts of a step whose failures are retried. */
const MAX_ATTEMPTS = 3;

/**
 * The demo's next turn for a conversation: a tool call, or the closing text once every call
 * succeeded; a failure or a tool not on offer ends it with one line. Undefined when the ask is
 * not a demo request (the caller echoes it).
 */
export function demoTurn(conversation: SimulatedConversation): ScriptedTurn | undefined {
  const demo = demoFor(conversation.ask);
  if (!demo) return undefined;
  const missing = demo.steps.map((s) => s.tool).filter((t) => !conversation.offered.has(t));
  if (missing.length > 0)
    return {
      text: `${SIMULATED}: the demo script would call ${missing.join(", ")} here, but this request does not offer it.`,
    };
  const { calls } = conversation;
  let step = 0;
  let attempts = 0;
  for (const call of calls) {
    const current = demo.steps[step];
    if (!current || call.name !== current.tool) continue; // not the demo's: ignored
    const result = call.result ?? { content: "no result came back", isError: true };
    if (!result.isError) {
      step++;
      attempts = 0;
      continue;
    }
    if (current.retryOn?.test(result.content) && ++attempts < MAX_ATTEMPTS) continue;
    return { text: `${SIMULATED}: ${call.name} failed — ${oneLine(result.content)}` };
  }
  const next = demo.steps[step];
  if (!next) return { text: demo.done(calls) };
  return { toolCalls: [{ name: next.tool, args: next.args(calls) }] };
}

function demoFor(ask: string): Demo | undefined {
  const assignment = recogniseAssignment(ask);
  if (assignment) return assignmentDemo(assignment);
  const reminder = recogniseReminder(ask);
  if (reminder) return reminderDemo(reminder);
  const fact = recogniseMemory(ask);
  if (fact) return memoryDemo(fact);
  const what = recogniseReminderRun(ask);
  if (what) return { steps: [], done: () => `${SIMULATED}: ⏰ a reminder — time to ${what}.` };
  return undefined;
}

function reminderDemo(ask: ReminderAsk): Demo {
  const slug = (ask.what ?? "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 30);
  const base = `reminder-${slug.replace(/-+$/, "") || "ping"}`;
  const when = ask.minutes === 1 ? "1 minute" : `${ask.minutes} minutes`;
  return {
    steps: [
      {
        tool: "cron_add",
        // A name already taken: the next call adds -2, -3.
        retryOn: /already exists/,
        args: (before) => {
          const tries = before.filter((c) => c.name === "cron_add").length;
          return {
            name: tries === 0 ? base : `${base}-${tries + 1}`,
            message: reminderMessage(ask.what ?? "check on what they asked to be reminded of"),
            at: `in ${ask.minutes}m`,
          };
        },
      },
    ],
    done: (calls) => {
      const at = /next run (\S+?);/.exec(resultOf(calls, "cron_add"))?.[1];
      return `${SIMULATED}: reminder set with cron_add — in ${when}${at ? ` (${at})` : ""}${ask.what ? `, to ${ask.what}` : ""}.`;
    },
  };
}

function memoryDemo(fact: string): Demo {
  return {
    steps: [{ tool: "memory_write", args: () => ({ target: "memory", text: fact }) }],
    done: () => `${SIMULATED}: noted in MEMORY.md with memory_write — "${fact}"`,
  };
}

function assignmentDemo(ask: AssignmentAsk): Demo {
  const title = ask.goal.length > 100 ? `${ask.goal.slice(0, 99)}…` : ask.goal;
  return {
    steps: [
      { tool: "work_item_add", args: () => ({ title }) },
      { tool: "write_file", args: () => ({ path: ask.file, content: fileContent(ask) }) },
      {
        tool: "work_item_update",
        args: (before) => ({
          id: Number(/#(\d+)/.exec(resultOf(before, "work_item_add"))?.[1] ?? 1),
          status: "done",
          notes: `wrote ${ask.file} (simulated)`,
        }),
      },
      {
        tool: "work_complete",
        args: () => ({
          summary: `${SIMULATED}: wrote ${ask.file} with placeholder text; a real model would do the work itself.`,
        }),
      },
    ],
    done: () => `${SIMULATED}: the assignment is done; ${ask.file} holds its placeholder result.`,
  };
}

function fileContent(ask: AssignmentAsk): string {
  if (ask.lines === undefined)
    return `# ${ask.goal}\n\n${SIMULATED}: a real model would write the result here.\n`;
  return Array.from({ length: ask.lines }, (_, i) => `Simulated line ${i + 1} of ${ask.lines}.\n`).join("");
}

/** The content of the newest successful call of `tool` ("" when none). */
function resultOf(calls: readonly ConversationCall[], tool: string): string {
  const call = calls.findLast((c) => c.name === tool && c.result?.isError === false);
  return call?.result?.content ?? "";
}

function numberOf(word: string): number | undefined {
  const n = /^\d+$/.test(word) ? Number(word) : NUMBER_WORDS[word.toLowerCase()];
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

/** Trimmed, one line, without a closing full stop, question or exclamation mark. */
function clean(text: string): string {
  return oneLine(text)
    .replace(/[.!?]+$/, "")
    .trim();
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
