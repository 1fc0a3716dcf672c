/**
 * The chat doors to assignments: `/task <goal>`, `/tasks` and `/task cancel <id>`, and the
 * agent's `task_start` tool for a request that is clearly long. The chat that starts one owns
 * it: progress, questions and the end summary go there.
 */
import { z } from "zod";
import type { ChatTarget } from "../../channels/types.js";
import {
  cancelAssignment,
  findAssignment,
  newAssignment,
  startAssignment,
} from "../../harness/assignments/assignments.js";
import { AssignmentInputError } from "../../harness/assignments/errors.js";
import { firstLine } from "../../harness/assignments/project-files.js";
import { planFilePath } from "../../harness/modes/plan-mode.js";
import { startInPlanMode } from "../../harness/modes/session-modes.js";
import { ToolError } from "../../harness/tools/tool-error.js";
import type { Tool } from "../../harness/tools/types.js";
import type { ExtraCommand } from "../../gateway/commands.js";
import type { ContractCheck } from "../../store/repos/assignment-repo.js";
import type { Assignments } from "./assignments.js";

const USAGE =
  "Usage: /task <goal> starts an assignment (/task --plan <goal>: it plans first, for your approval); /task cancel <id> stops one; /tasks lists them.";

/** The same chat: channel, account, chat and thread. */
function sameChat(a: ChatTarget | null, b: ChatTarget): boolean {
  return (
    a !== null &&
    a.channel === b.channel &&
    a.accountId === b.accountId &&
    a.chatId === b.chatId &&
    (a.threadId ?? null) === (b.threadId ?? null)
  );
}

/**
 * The `/task` and `/tasks` commands of `tasks`. A chat sees and cancels only its own
 * assignments; one started here is private (MEMORY.md loaded) only in a direct chat, and only
 * its sender answers its questions.
 */
export function taskCommands(tasks: Assignments): ExtraCommand[] {
  const { store, clock } = tasks.deps;
  const agentId = tasks.defaults.agentId;
  const task: ExtraCommand = {
    name: "task",
    description: "/task <goal> starts a multi-day assignment that reports here; /task cancel <id> stops one",
    async run(args, _sessionKey, from) {
      const text = args.trim();
      if (text === "" || text === "help" || !from) return USAGE;
      try {
        const cancel = /^cancel\b\s*(.*)$/i.exec(text);
        if (cancel) {
          const id = cancel[1]?.trim() ?? "";
          if (!/^#?\S+$/.test(id)) return `Cannot do that: id: expected one assignment id. ${USAGE}`;
          const mine = await findAssignment(store, agentId, id).catch(() => undefined);
          if (!mine || !sameChat(mine.owner, from.chat))
            return `Cannot do that: id: no assignment "${id}" started in this chat (/tasks lists them)`;
          const a = await cancelAssignment(store, agentId, mine.id, clock.now());
          tasks.deps.lanes?.abortRunning(a.sessionKey, "user_stop");
          return `⏹ Task ${a.id} cancelled: ${firstLine(a.goal, 80)}`;
        }
        const privateChat = from.isDirect && from.chat.channel !== "http";
        const planned = /^--plan(?:\s+|$)/i.exec(text);
        const goal = planned ? text.slice(planned[0].length) : text;
        const input = { goal, owner: from.chat, requestedBy: from.senderId, privateChat };
        const a = newAssignment(input, tasks.defaults, clock.now());
        // In plan mode before its first run is queued: that run already plans.
        if (planned) await startInPlanMode(store.sessions, a.sessionKey, clock.now());
        await startAssignment(store, a, clock.now());
        tasks.deps.poke(true);
        const how = planned
          ? `I write a plan first (${planFilePath(a.sessionKey)}) and ask you to approve it; your yes starts the work.`
          : "I work on it in the background and report here.";
        return `🗂 Task ${a.id} started: ${firstLine(a.goal, 100)}\n${how} /tasks lists tasks; /task cancel ${a.id} stops it.`;
      } catch (err) {
        if (err instanceof AssignmentInputError) return `Cannot do that: ${err.message}`;
        throw err;
      }
    },
  };
  const list: ExtraCommand = {
    name: "tasks",
    description: "list the assignments in progress",
    async run(_args, _sessionKey, from) {
      const all = await store.assignments.list(agentId, { open: true, limit: 200 });
      const here = from ? all.filter((a) => sameChat(a.owner, from.chat)).slice(0, 20) : [];
      if (here.length === 0) return "No tasks running in this chat. /task <goal> starts one.";
      return [
        "Tasks:",
        ...here.map((a) => {
          const done = a.items.filter((i) => i.status === "done").length;
          return `${a.id} — ${a.state}, ${done}/${a.items.length} items, ${a.checkpoint.runs} runs — ${firstLine(a.goal, 60)}`;
        }),
      ].join("\n");
    },
  };
  return [task, list];
}

const startParameters = z.strictObject({
  goal: z.string().describe("The whole goal, with what done looks like"),
  requiredFiles: z
    .array(z.string().min(1))
    .max(20)
    .optional()
    .describe("Workspace paths that must exist when it is done (checked by the gateway)"),
});

/** `task_start`: the agent starts an assignment owned by the chat it is answering. */
export function assignmentChatTools(tasks: Assignments): Tool[] {
  const { store, clock } = tasks.deps;
  const start: Tool<typeof startParameters> = {
    name: "task_start",
    groups: ["assignment"],
    description:
      "Start a multi-day assignment: long work that goes on in the background over many runs, reporting to this chat. Use it when the request clearly takes more than one turn (research, a long document, a multi-step project), and tell the person you did, with its id.",
    parameters: startParameters,
    async run(args, ctx) {
      if (tasks.runs.get(ctx.runId))
        throw new ToolError("failed", "an assignment cannot start another one; add work items instead");
      const contract: ContractCheck[] = (args.requiredFiles ?? []).map((path) => ({
        kind: "file_exists",
        path,
      }));
      try {
        const input = {
          goal: args.goal,
          owner: (ctx.replyTarget as ChatTarget | undefined) ?? null,
          contract,
          // Only the person asking answers its questions; MEMORY.md only if they asked privately.
          requestedBy: ctx.asker?.senderId ?? null,
          privateChat: ctx.asker?.privateChat ?? false,
        };
        const a = newAssignment(input, tasks.defaults, clock.now());
        await startAssignment(store, a, clock.now());
        tasks.deps.poke(true);
        return {
          content: `assignment ${a.id} started; it runs in the background and reports to this chat (/tasks, /task cancel ${a.id})`,
        };
      } catch (err) {
        if (err instanceof AssignmentInputError) throw new ToolError("invalid_arguments", err.message);
        throw err;
      }
    },
  };
  return [start];
}
