/**
 * `switchyard hooks list [--json]`: every hook a turn runs, by event and index — the built-in
 * command guard first among beforeToolCall, then the configured ones (`hooks:`) with command,
 * tools, timeout and async — each with its last outcome (verdict, when, how long, why) as the
 * gateway using this home last saved it (`<home>/hooks-last.json`).
 */
import {
  COMMAND_GUARD_COMMAND,
  COMMAND_GUARD_KEY,
  type HookOutcome,
  hookKey,
  readHookOutcomes,
} from "../capabilities/hooks/hook-outcomes.js";
import { HOOK_EVENTS, type HookEntry } from "../capabilities/hooks/settings.js";
import { parseListAction, runSubcommand, subcommandHome } from "./subcommand.js";
import { formatTable } from "./table.js";

const USAGE_LINE = "usage: switchyard hooks list [--json]";

const FLAGS = {
  json: { type: "boolean", default: false },
  config: { type: "string" },
  home: { type: "string" },
} as const;

/** One row of `hooks list`. */
interface HookRow {
  event: string;
  /** `<event>[<i>]`, or `<event>[builtin]` for the command guard. */
  hook: string;
  command: string;
  tools?: string[];
  timeoutMs?: number;
  async?: boolean;
  last?: HookOutcome;
}

/** Runs `switchyard hooks …` (argv after `hooks`); resolves with the exit code. */
export async function runHooks(argv: string[]): Promise<number> {
  return runSubcommand("hooks", () => hooks(argv));
}

async function hooks(argv: string[]): Promise<number> {
  const v = parseListAction(argv, FLAGS, USAGE_LINE);
  const { config, home } = subcommandHome("hooks", v, true);
  const saved = readHookOutcomes(home);
  // A saved outcome counts only while the row still runs the same command.
  const last = (key: string, command: string): HookOutcome | undefined =>
    saved[key]?.command === command ? saved[key] : undefined;
  const guard = last(COMMAND_GUARD_KEY, COMMAND_GUARD_COMMAND);
  const rows: HookRow[] = [
    {
      event: "beforeToolCall",
      hook: COMMAND_GUARD_KEY,
      command: COMMAND_GUARD_COMMAND,
      tools: ["exec", "mcp:*"],
      ...(guard && { last: guard }),
    },
  ];
  for (const event of HOOK_EVENTS) {
    const entries: readonly HookEntry[] = config.hooks[event];
    for (const [i, h] of entries.entries()) {
      const key = hookKey(event, i);
      const outcome = last(key, h.command);
      const tools = "tools" in h ? h.tools : undefined;
      rows.push({
        event,
        hook: key,
        command: [h.command, ...h.args].join(" "),
        ...(tools && { tools }),
        timeoutMs: h.timeoutMs,
        ...(event === "afterReply" ? { async: h.async === true } : {}),
        ...(outcome && { last: outcome }),
      });
    }
  }
  // The guard's row first among beforeToolCall: after beforeMessage's rows.
  const ordered = [
    ...rows.filter((r) => r.event === "beforeMessage"),
    ...rows.filter((r) => r.event !== "beforeMessage"),
  ];
  if (v.json) {
    process.stdout.write(`${JSON.stringify(ordered, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(
    formatTable(
      [
        { header: "HOOK" },
        { header: "COMMAND" },
        { header: "TOOLS" },
        { header: "TIMEOUT", right: true },
        { header: "ASYNC" },
        { header: "LAST" },
      ],
      ordered.map((r) => [
        r.hook,
        r.command,
        r.tools?.join(",") ?? (r.event.endsWith("ToolCall") ? "all" : ""),
        r.timeoutMs === undefined ? "" : `${r.timeoutMs} ms`,
        r.async === undefined ? "" : r.async ? "yes" : "no",
        r.last ? describeOutcome(r.last) : "never ran",
      ]),
    ),
  );
  if (rows.length === 1) process.stdout.write("no hooks are configured (hooks:)\n");
  return 0;
}

/** `block 2024-01-15T09:00:00Z 12 ms: reason` on one line. */
function describeOutcome(o: HookOutcome): string {
  const when = new Date(o.at).toISOString().replace(/\.\d+Z$/, "Z");
  const ms = o.durationMs < 1 ? o.durationMs.toFixed(2) : Math.round(o.durationMs).toString();
  const reason = o.reason ? `: ${o.reason.split("\n", 1)[0]?.slice(0, 120)}` : "";
  return `${o.verdict} ${when} ${ms} ms${reason}`;
}
