/**
 * The chat doors to assignments: `/task <goal>`, `/tasks` and `/task cancel <id>`, and the
 * agent's `task_start` tool for a request that is clearly long. The chat that starts one owns
 * it: progress, questions and the end summary go there.
 */
import { z } from "zod";
import type { ChatTarget } from "../channels/types.js";
import { cancelAssignment, newAssignment, startAssignment } from "../harness/assignments/assignments.js";
import { AssignmentInputError } from "../harness/assignments/errors.js";
import { firstLine } from "../harness/assignments/project-files.js";
import { ToolError } from "../harness/tools/tool-error.js";
import type { Tool } from "../harness/tools/types.js";
import type { TaskCommands } from "../gateway/commands.js";
import type { ContractCheck } from "../store/repos/assignment-repo.js";
import type { Assignments } from "./assignments.js";

const USAGE = "Usage: /task <goal> starts an assignment; /task cancel <id> stops one; /tasks lists them.";

/** The `/task` and `/tasks` commands of `tasks`. */
export function taskCommands(tasks: Assignments): TaskCommands {
  const { store, clock } = tasks.deps;
  return {
    async task(args, chat) {
      const text = args.trim();
      if (text === "" || text === "help") return USAGE;
      try {
        const cancel = /^cancel\s+(\S+)\s*$/i.exec(text);
        if (cancel?.[1]) {
          const a = await cancelAssignment(store, tasks.defaults.agentId, cancel[1], clock.now());
          tasks.deps.abort?.(a.sessionKey);
          return `⏹ Task ${a.id} cancelled: ${firstLine(a.goal, 80)}`;
        }
        const a = newAssignment({ goal: text, owner: chat ?? null }, tasks.defaults, clock.now());
        await startAssignment(store, a, clock.now());
        tasks.deps.poke();
        return `🗂 Task ${a.id} started: ${firstLine(a.goal, 100)}\nI work on it in the background and report here. /tasks lists tasks; /task cancel ${a.id} stops it.`;
      } catch (err) {
        if (err instanceof AssignmentInputError) return `Cannot do that: ${err.message}`;
        throw err;
      }
    },
    async list() {
      const open = await store.assignments.list(tasks.defaults.agentId, { open: true, limit: 20 });
      if (open.length === 0) return "No tasks running. /task <goal> starts one.";
      return [
        "Tasks:",
        ...open.map((a) => {
          const done = a.items.filter((i) => i.status === "done").length;
          return `${a.id} — ${a.state}, ${done}/${a.items.length} items, ${a.checkpoint.runs} runs — ${firstLine(a.goal, 60)}`;
        }),
      ].join("\n");
    },
  };
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
        const a = newAssignment(
          { goal: args.goal, owner: (ctx.replyTarget as ChatTarget | undefined) ?? null, contract },
          tasks.defaults,
          clock.now(),
        );
        await startAssignment(store, a, clock.now());
        tasks.deps.poke();
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
