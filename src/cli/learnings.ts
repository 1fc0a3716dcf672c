/**
 * `switchyard learnings list|promote|drop`: the lessons agents reported, and the owner's word on
 * them. A learning is promoted into the workspace's MEMORY.md (`## Learned`) by itself once
 * enough assignments reported it; `promote` does it now, `drop` makes sure it never is. Bad
 * input: one line naming the problem, exit 2.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { UsageError, parseOrUsage, runSubcommand, subcommandHome } from "./subcommand.js";
import { AssignmentInputError } from "../harness/assignments/errors.js";
import {
  assignmentSources,
  dropLearning,
  findLearning,
  promoteLearning,
} from "../harness/assignments/learning-log.js";
import type { Learning } from "../store/repos/assignment-repo.js";
import { LEARNED_SECTION } from "../harness/memory/learnings.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { formatTable } from "./table.js";

/** The one usage line printed after a bad option or action. */
const USAGE_LINE = `usage: switchyard learnings list [--json] | promote <id> | drop <id>`;

const USAGE = `usage: switchyard learnings <action> [options]

  list     [--json]: every learning agents reported: its state and how many assignments did
  promote  <id>: write it into the workspace's MEMORY.md (## ${LEARNED_SECTION}) now
  drop     <id>: never promote it (a line already in MEMORY.md stays until edited out)
  help     show this text
`;

const FLAGS = {
  json: { type: "boolean", default: false },
  config: { type: "string" },
  home: { type: "string" },
} as const;

/** Runs `switchyard learnings …` (argv after `learnings`); resolves with the exit code. */
export async function runLearnings(argv: string[]): Promise<number> {
  return runSubcommand("learnings", () => learnings(argv), [AssignmentInputError]);
}

async function learnings(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseOrUsage(
    () => parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true }),
    USAGE_LINE,
  );
  const [action, id, ...extra] = positionals;
  if (action === "help" || action === undefined) {
    process.stdout.write(USAGE);
    return action ? 0 : 2;
  }
  if (action !== "list" && action !== "promote" && action !== "drop")
    throw new UsageError(`unknown action "${action}"`, USAGE_LINE);
  const unexpected = action === "list" ? id : extra[0];
  if (unexpected !== undefined) throw new UsageError(`unexpected argument "${unexpected}"`);
  if (action !== "list" && id === undefined)
    throw new UsageError(`${action} needs a learning id (see switchyard learnings list)`);
  const { config, home, workspaceDir } = subcommandHome("learnings", v, action === "list");
  const agentId = config.agent.id;
  const now = Date.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    switch (action) {
      case "list": {
        const all = await store.learnings.list(agentId);
        if (v.json) out(JSON.stringify(all, null, 2));
        else if (all.length === 0) out("no learnings yet (agents report them as they work)");
        else
          process.stdout.write(
            formatTable(
              [{ header: "ID", right: true }, { header: "STATE" }, { header: "SEEN IN" }, { header: "TEXT" }],
              all.map((l) => [String(l.id), l.state, seenIn(l), l.text]),
            ),
          );
        return 0;
      }
      case "promote": {
        // An unknown id is named before a missing workspace.
        await findLearning(store, agentId, id as string);
        if (!existsSync(workspaceDir)) {
          process.stderr.write(
            `switchyard learnings: no workspace at ${workspaceDir} (the gateway creates it when it starts)\n`,
          );
          return 1;
        }
        const l = await promoteLearning(store, workspaceDir, agentId, id as string, now);
        out(`promoted learning #${l.id} into ${join(workspaceDir, "MEMORY.md")} (## ${LEARNED_SECTION})`);
        return 0;
      }
      case "drop": {
        const l = await dropLearning(store, agentId, id as string, now);
        out(`dropped learning #${l.id}: it is never promoted`);
        return 0;
      }
    }
  } finally {
    await store.close();
  }
}

/** "2 assignments", "1 assignment, 2 chats": where a learning was reported. */
function seenIn(l: Learning): string {
  const tasks = assignmentSources(l);
  const chats = l.sources.length - tasks;
  const parts = [`${tasks} assignment${tasks === 1 ? "" : "s"}`];
  if (chats > 0) parts.push(`${chats} chat${chats === 1 ? "" : "s"}`);
  return parts.join(", ");
}
