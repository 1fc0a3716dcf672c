/**
 * `switchyard sessions [list]` and `switchyard sessions show <key> [--last N]`: what the agent
 * did, read straight from the database (read-only), so it works whether or not the gateway runs.
 */
import { existsSync } from "node:fs";
import { resolveHome } from "../config/home.js";
import type { TranscriptEvent } from "../store/repos/transcript-repo.js";
import type { Store } from "../store/types.js";
import type { CliOptions } from "./main.js";
import { databasePath, openForReading } from "./open-database.js";
import { type SessionTreeRow, helpersOf, sessionTree, treeKeyCell } from "./session-tree.js";
import { UnknownIdError } from "./subcommand.js";

/** Sessions `list` prints at most; it says so when there are more. */
export const SESSIONS_LIST_LIMIT = 200;
/** Events `show` prints without `--last`. */
export const SHOW_DEFAULT_LAST = 50;
/** Tool-call arguments and tool results are cut to one line of about this many characters. */
const ARGS_MAX_CHARS = 120;
const RESULT_MAX_CHARS = 200;

const HOW_TO_FIND_KEYS =
  "list the session keys with: switchyard sessions list (keys look like agent:main:telegram:dm:42)";

/** Runs `sessions list` (the default) or `sessions show <key>`; returns the exit code. */
export async function runSessions(options: CliOptions, args: string[]): Promise<number> {
  const [action = "list", key] = args;
  if (action !== "list" && action !== "show") {
    process.stderr.write(`switchyard sessions: unknown action "${action}" (list, show <key>)\n`);
    return 2;
  }
  if (action === "list" && key !== undefined) {
    process.stderr.write(`switchyard sessions list: unexpected argument "${key}"\n`);
    return 2;
  }
  if (action === "show" && !key) {
    process.stderr.write(`usage: switchyard sessions show <key> [--last N]\n${HOW_TO_FIND_KEYS}\n`);
    return 2;
  }
  const home = resolveHome(options.home, process.env, process.cwd());
  const path = databasePath(home);
  if (!existsSync(path)) {
    if (action === "list") {
      if (options.json) process.stdout.write(`${JSON.stringify({ sessions: [], truncated: false })}\n`);
      else process.stdout.write(`no sessions yet: no database at ${path} (the gateway creates it)\n`);
      return 0;
    }
    throw new UnknownIdError(
      key ?? "",
      `no session "${key}": no database at ${path} yet (the gateway creates it)`,
    );
  }
  const store = openForReading(path);
  try {
    const now = Date.now();
    if (action === "show" && key) return await show(store, key, options);
    return await list(store, options, now);
  } finally {
    await store.close();
  }
}

async function list(store: Store, options: CliOptions, now: number): Promise<number> {
  const rows = await store.sessions.list(SESSIONS_LIST_LIMIT + 1);
  const truncated = rows.length > SESSIONS_LIST_LIMIT;
  const shown = rows.slice(0, SESSIONS_LIST_LIMIT);
  const helpers = await helpersOf(store, shown);
  if (options.json) {
    // A helper's session names its row: id, label, state and parent.
    const sessions = shown.map((s) => {
      const h = helpers.get(s.sessionKey);
      if (!h) return s;
      const subagent = { id: h.id, label: h.label, state: h.state, parentSessionKey: h.parentSessionKey };
      return { ...s, subagent };
    });
    process.stdout.write(`${JSON.stringify({ sessions, truncated }, null, 2)}\n`);
    return 0;
  }
  if (shown.length === 0) {
    process.stdout.write("no sessions yet\n");
    return 0;
  }
  process.stdout.write(formatSessionTable(sessionTree(shown, helpers), now));
  if (truncated) {
    const total = await store.sessions.count();
    process.stdout.write(`(the ${SESSIONS_LIST_LIMIT} most recent of ${total} sessions)\n`);
  }
  process.stdout.write("transcript of one: switchyard sessions show <key> [--last N]\n");
  return 0;
}

async function show(store: Store, key: string, options: CliOptions): Promise<number> {
  const session = await store.sessions.get(key);
  if (!session) throw new UnknownIdError(key, `no session "${key}"; ${HOW_TO_FIND_KEYS}`);
  const last = options.last ?? SHOW_DEFAULT_LAST;
  // One more than shown tells whether older events exist.
  const read = await store.transcript.tail(key, session.sessionId, last + 1);
  const events = read.slice(-last);
  if (options.json) {
    const body = { sessionKey: key, sessionId: session.sessionId, events };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  const more = read.length > last ? "; older events not shown (--last N for more)" : "";
  process.stdout.write(
    `session ${key} (id ${session.sessionId}): ${events.length} event${events.length === 1 ? "" : "s"}${more}\n`,
  );
  if (events.length === 0) process.stdout.write("nothing in this session yet (since its last /new)\n");
  for (const event of events) process.stdout.write(formatTranscriptEvent(event));
  return 0;
}

/**
 * The sessions as an aligned table with a header line, one row per session; a helper's session
 * sits under its parent's, indented, with its label and state (session-tree.ts).
 */
export function formatSessionTable(tree: readonly SessionTreeRow[], now: number): string {
  const rows = tree.map((row) => {
    const s = row.session;
    return [
      treeKeyCell(row),
      s.channel,
      `${localTime(s.lastActivityAt)} (${ago(s.lastActivityAt, now)})`,
      String(s.messages),
      s.running ? "running" : "idle",
    ];
  });
  const header = ["KEY", "CHANNEL", "LAST ACTIVITY", "MESSAGES", "STATE"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    `${cells
      .map((cell, i) => (i === 3 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd()}\n`;
  return [header, ...rows].map(line).join("");
}

/**
 * One transcript event as readable text ending in a newline: `[time] user (Ada): text`,
 * `[time] assistant: text` and one `[time] → tool name(args)` line per tool call, tool results
 * cut to one line (`← result` or `← error`), notices and heartbeat triggers labeled.
 */
export function formatTranscriptEvent(event: TranscriptEvent): string {
  const at = `[${localTime(event.createdAt)}]`;
  const p = event.payload;
  switch (p.type) {
    case "user": {
      const who = p.isGroup ? `${p.senderName}, group` : p.senderName;
      const lines = [`${at} user (${clean(who)}): ${indented(p.text)}`];
      if (p.context?.length) lines.push(`  (after ${p.context.length} unaddressed group message(s))`);
      if (p.replyTo) lines.push(`  ↪ in reply to: ${oneLine(p.replyTo, ARGS_MAX_CHARS)}`);
      for (const a of p.attachments ?? []) lines.push(`  [${a.kind}: ${clean(a.path)}]`);
      return `${lines.join("\n")}\n`;
    }
    case "assistant": {
      const lines =
        p.text.trim() !== "" || p.toolCalls.length === 0 ? [`${at} assistant: ${indented(p.text)}`] : [];
      for (const call of p.toolCalls) {
        lines.push(
          `${at} → tool ${clean(call.name)}(${oneLine(compactJson(call.argumentsJson), ARGS_MAX_CHARS)})`,
        );
      }
      return `${lines.join("\n")}\n`;
    }
    case "tool_result": {
      const label = p.isError ? "error" : "result";
      return `${at} ← ${label} ${clean(p.name)}: ${oneLine(p.content, RESULT_MAX_CHARS)}\n`;
    }
    case "notice":
      return `${at} notice: ${indented(p.text)}\n`;
    case "trigger":
      return `${at} ${p.origin} trigger: ${oneLine(p.text, RESULT_MAX_CHARS)}\n`;
    case "jit":
      return `${at} jit ${clean(p.rule)} (before model call ${p.call}): ${oneLine(p.line, RESULT_MAX_CHARS)}\n`;
    case "compaction": {
      const cleared = Object.keys(p.cleared).length;
      const head = `${at} ── compaction (about ${p.tokensBefore} tokens before; events before #${p.keepFromId} summarized${cleared > 0 ? `, ${cleared} tool results cleared` : ""}) ──`;
      return `${head}\n${p.summary ? `  summary: ${indented(p.summary)}\n` : ""}`;
    }
  }
}

/** Local date and time to the second: `2024-01-15 13:04:05`. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** How long before `now`, roughly: `just now`, `7 min ago`, `3 h ago`, `12 days ago`. */
export function ago(ms: number, now: number): string {
  const minutes = Math.floor((now - ms) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

/** Tool arguments without the model's whitespace; the raw text when it is not JSON. */
function compactJson(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json));
  } catch {
    return json;
  }
}

/** Whitespace runs (newlines included) become one space; longer than `max` is cut with "…". */
function oneLine(text: string, max: number): string {
  const flat = clean(text).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Multi-line text with its continuation lines indented under the label. */
function indented(text: string): string {
  return clean(text).replace(/\n/g, "\n  ");
}

/**
 * Line ends become "\n"; other control characters except tab are shown as "\uFFFD": what the
 * model or a tool wrote must not drive the terminal (escape sequences).
 */
function clean(text: string): string {
  return (
    text
      .replace(/\r\n?/g, "\n")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "\uFFFD")
  );
}
