/**
 * `switchyard task add|list|show|cancel|answer`: the owner's side of assignments from the
 * terminal. It writes the shared database (the assignment and a wake in its session), so a
 * running gateway starts or resumes the work within a few seconds, without a restart. Bad
 * input: one line naming the field, exit 2, nothing stored.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { UsageError, parseOrUsage, runSubcommand, subcommandHome } from "./subcommand.js";
import type { ChatTarget } from "../channels/types.js";
import { channelModules } from "../channels/registry.js";
import { configuredAccounts } from "../cron/config-channels.js";
import { JobInputError, deliveryOf, describeDelivery } from "../cron/jobs.js";
import {
  answerAssignment,
  assignmentDefaults,
  cancelAssignment,
  findAssignment,
  newAssignment,
  startAssignment,
} from "../harness/assignments/assignments.js";
import { describeCheck } from "../harness/assignments/contract.js";
import { AssignmentInputError } from "../harness/assignments/errors.js";
import { planFilePath } from "../harness/modes/plan-mode.js";
import { startInPlanMode } from "../harness/modes/session-modes.js";
import type { Assignment, AssignmentRun, ContractCheck } from "../store/repos/assignment-repo.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { count, formatTable, usd } from "./table.js";

/** The one usage line printed after a bad option or action. */
const USAGE_LINE = `usage: switchyard task add "<goal>"|list|show <id>|cancel <id>|answer <id> "<text>" [options] (switchyard task help: the options)`;

const USAGE = `usage: switchyard task <action> [options]

  add     "<goal>" [--deliver <channel>:<account>:<chat>[:<thread>]]
          [--require-file PATH]... [--require-match "PATH=~REGEX"]... [--require-command "CMD"]...
          [--max-runs N] [--plan] [--json]
          start an assignment; --deliver: the chat that gets progress, questions and the
          summary (without it no messages are sent); --require-*: its contract (paths are
          relative to the workspace; command checks need assignments.commandChecks: true);
          --plan: it starts in plan mode (read-only tools, writes projects/<id>/PLAN.md and
          asks for approval; a yes switches it to execute mode)
  list    [--all] [--json]: open assignments (every one with --all), newest first
  show    <id> [--json]: one assignment: items, contract, question, last runs, totals
  cancel  <id>
  answer  <id> "<text>": answer the question it waits on; it resumes within a few seconds
  help    show this text
`;

const FLAGS = {
  deliver: { type: "string" },
  "require-file": { type: "string", multiple: true },
  "require-match": { type: "string", multiple: true },
  "require-command": { type: "string", multiple: true },
  "max-runs": { type: "string" },
  plan: { type: "boolean", default: false },
  all: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  config: { type: "string" },
  home: { type: "string" },
} as const;

/** Runs `switchyard task …` (argv after `task`); resolves with the exit code. */
export async function runTask(argv: string[]): Promise<number> {
  return runSubcommand("task", () => task(argv), [AssignmentInputError, JobInputError]);
}

/** The arguments, with their tokens: the contract keeps the order its options were given in. */
function parse(argv: string[]) {
  return parseOrUsage(
    () => parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true, tokens: true }),
    USAGE_LINE,
  );
}

async function task(argv: string[]): Promise<number> {
  const { values: v, positionals, tokens } = parse(argv);
  const [action, ...rest] = positionals;
  if (action === "help" || action === undefined) {
    process.stdout.write(USAGE);
    return action ? 0 : 2;
  }
  if (!["add", "list", "show", "cancel", "answer"].includes(action))
    throw new UsageError(`unknown action "${action}"`, USAGE_LINE);
  const { config, home, workspaceDir } = subcommandHome("task", v, action === "list" || action === "show");
  const agentId = config.agent.id;
  const now = Date.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const idArg = (): string => {
    const [id, ...extra] = rest;
    if (id === undefined) throw new UsageError(`${action} needs an assignment id (see switchyard task list)`);
    if (action !== "answer" && extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    return id;
  };
  // Checked before the database is opened: bad input stores nothing.
  let fresh: Assignment | undefined;
  if (action === "add") {
    const owner =
      v.deliver === undefined ? null : ownerOf(v.deliver, configuredAccounts(config, channelModules));
    const defaults = assignmentDefaults(agentId, config.assignments);
    if (v["max-runs"] !== undefined)
      defaults.limits = { ...defaults.limits, maxRuns: maxRuns(v["max-runs"]) };
    fresh = newAssignment({ goal: rest.join(" "), owner, contract: contractOf(tokens) }, defaults, now);
  }
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    switch (action) {
      case "add": {
        const a = fresh as Assignment;
        // In plan mode before its first run is queued: that run already plans.
        if (v.plan) await startInPlanMode(store.sessions, a.sessionKey, now);
        await startAssignment(store, a, now);
        if (v.json) {
          out(JSON.stringify(a, null, 2));
          return 0;
        }
        out(`started assignment ${a.id}: ${oneLine(a.goal, 60)}`);
        out(
          a.owner
            ? `  owner: ${chat(a.owner)} (progress, questions and the summary go there)`
            : "  owner: none: no messages are sent; follow it here",
        );
        for (const c of a.contract) out(`  contract: ${describeCheck(c)}`);
        out(`  limits: ${a.limits.maxRuns} runs of at most ${a.limits.maxTurnsPerRun} model calls`);
        if (v.plan)
          out(
            `  plan mode: it writes ${planFilePath(a.sessionKey)} and asks for approval before it changes anything`,
          );
        out(`a running gateway starts it within a few seconds; follow it with: switchyard task show ${a.id}`);
        return 0;
      }
      case "list": {
        if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
        const all = await store.assignments.list(agentId, { open: !v.all });
        if (v.json) out(JSON.stringify(all, null, 2));
        else if (all.length === 0)
          out(
            v.all
              ? "no assignments (start one with switchyard task add)"
              : "no open assignments (--all: every one)",
          );
        else
          process.stdout.write(
            formatTable(
              [
                { header: "ID" },
                { header: "STATE" },
                { header: "ITEMS", right: true },
                { header: "RUNS", right: true },
                { header: "GOAL" },
              ],
              all.map((a) => [
                a.id,
                a.state,
                `${a.items.filter((i) => i.status === "done").length}/${a.items.length}`,
                String(a.checkpoint.runs),
                oneLine(a.goal, 60),
              ]),
            ),
          );
        return 0;
      }
      case "show": {
        const a = await findAssignment(store, agentId, idArg());
        const runs = await store.assignments.runs(a.id, 5);
        const wake = (await store.wakes.list(a.sessionKey))[0];
        const projectDir = `${join(workspaceDir, "projects", a.id)}/`;
        if (v.json) {
          const nextWake = wake ? new Date(wake.dueAt).toISOString() : null;
          out(JSON.stringify({ assignment: a, runs, nextWake, projectDir }, null, 2));
        } else for (const line of describe(a, runs, wake?.dueAt, projectDir)) out(line);
        return 0;
      }
      case "cancel": {
        const a = await cancelAssignment(store, agentId, idArg(), now);
        out(`cancelled ${a.id}`);
        return 0;
      }
      case "answer": {
        const [, ...words] = rest;
        const a = await answerAssignment(store, agentId, idArg(), words.join(" "), now);
        out(`answer passed on to ${a.id}: a running gateway resumes it within a few seconds`);
        return 0;
      }
    }
    return 2;
  } finally {
    await store.close();
  }
}

/** `--deliver`: a chat (checked against the configured channel accounts), or `none`. */
function ownerOf(text: string, channels: ReadonlySet<string>): ChatTarget | null {
  if (text === "none") return null;
  if (text === "last")
    throw new JobInputError(
      "deliver",
      '"last" is not a chat (expected <channel>:<account>:<chat>[:<thread>] or none)',
    );
  const d = deliveryOf(text, channels);
  return d.kind === "chat" ? d.target : null;
}

function maxRuns(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new AssignmentInputError(`max-runs: found "${text}", expected a whole number of at least 1`);
  return n;
}

/** The contract from the --require-* options, in the order given (validateContract names checks by it). */
function contractOf(tokens: ReturnType<typeof parse>["tokens"]): ContractCheck[] {
  const checks: ContractCheck[] = [];
  for (const t of tokens) {
    if (t.kind !== "option" || t.value === undefined) continue;
    if (t.name === "require-file") checks.push({ kind: "file_exists", path: t.value });
    else if (t.name === "require-command") checks.push({ kind: "command", command: t.value });
    else if (t.name === "require-match") {
      const at = t.value.indexOf("=~");
      if (at < 0)
        throw new AssignmentInputError(`require-match: "${oneLine(t.value, 60)}" is not PATH=~REGEX`);
      checks.push({ kind: "file_contains", path: t.value.slice(0, at), pattern: t.value.slice(at + 2) });
    }
  }
  return checks;
}

/** The lines of `task show`. */
function describe(
  a: Assignment,
  runs: AssignmentRun[],
  wakeAt: number | undefined,
  projectDir: string,
): string[] {
  const lines = [
    `assignment ${a.id}: ${a.state}${a.stateReason ? ` (${oneLine(a.stateReason, 200)})` : ""}`,
    `  goal: ${block(a.goal)}`,
    `  owner: ${a.owner ? chat(a.owner) : "none (no messages are sent)"}`,
    `  created ${iso(a.createdAt)}, updated ${iso(a.updatedAt)}`,
    `  project folder: ${projectDir}`,
  ];
  lines.push(a.items.length === 0 ? "  work items: none yet" : "  work items:");
  for (const i of a.items)
    lines.push(
      `    #${i.id} [${i.status}] ${oneLine(i.title, 120)}${i.notes ? ` — ${oneLine(i.notes, 200)}` : ""}`,
    );
  lines.push(a.contract.length === 0 ? "  contract: none" : "  contract:");
  for (const c of a.contract) lines.push(`    ${describeCheck(c)}`);
  const q = a.question;
  if (q) {
    lines.push(
      `  question (${q.tool}, asked ${iso(q.askedAt)}, expires ${iso(q.expiresAt)}): ${oneLine(q.text, 500)}`,
    );
    if (q.options?.length) lines.push(`    options: ${q.options.join(" | ")}`);
    lines.push(
      q.answer !== undefined
        ? `    answered: ${oneLine(q.answer, 500)}`
        : `    answer with: switchyard task answer ${a.id} "<text>"`,
    );
  }
  lines.push(
    runs.length === 0 ? "  runs: none yet" : `  last ${runs.length === 1 ? "run" : `${runs.length} runs`}:`,
  );
  for (const r of runs)
    lines.push(
      `    #${r.runNo}  ${iso(r.startedAt)}  ${r.directive ?? (r.endedAt === null ? "running" : "ended")}${r.reason ? ` — ${oneLine(r.reason, 120)}` : ""}  (${r.turns} turns, ${count(r.tokens)} tokens)`,
    );
  const c = a.checkpoint;
  lines.push(
    `  totals: ${c.runs}/${a.limits.maxRuns} runs, ${c.turns} turns, ${count(c.tokens)} tokens${a.limits.maxTokens ? `/${count(a.limits.maxTokens)}` : ""}, ${usd(c.costUsd)}${a.limits.maxCostUsd ? `/${usd(a.limits.maxCostUsd)}` : ""}`,
  );
  lines.push(`  next wake: ${wakeAt === undefined ? "none" : iso(wakeAt)}`);
  if (c.summary) lines.push(`  summary: ${block(c.summary)}`);
  return lines;
}

function chat(t: ChatTarget): string {
  return describeDelivery({ kind: "chat", target: t });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Text as lines indented under a label, control characters (but line ends) shown as U+FFFD. */
function block(text: string): string {
  return (
    text
      .replace(/\r\n?/g, "\n")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing them is the point
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "\uFFFD")
      .trim()
      .split("\n")
      .join("\n    ")
  );
}

/** Text on one line (control characters and runs of whitespace as one space), cut to `max` characters. */
function oneLine(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const flat = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
