/**
 * `/plan`, `/execute` and `/mode`: a session's mode from the chat. Without an argument they act
 * on the chat's own session, and only a direct chat may change it (the router admitted the
 * sender already); with a task id, on an assignment started in this chat by this sender (its
 * owner). `/mode` shows the mode anywhere. Every answer is one line.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { ChatTarget } from "../../channels/types.js";
import type { CommandFrom, ExtraCommand } from "../../gateway/commands.js";
import { findAssignment } from "../../harness/assignments/assignments.js";
import { AssignmentInputError } from "../../harness/assignments/errors.js";
import { planFilePath } from "../../harness/modes/plan-mode.js";
import type { SessionMode } from "../../store/repos/session-repo.js";
import type { Store } from "../../store/types.js";
import type { Clock } from "../../util/clock.js";
import { newId } from "../../util/ids.js";

/** What the mode commands need. */
export interface ModeCommandsOptions {
  store: Pick<Store, "sessions" | "assignments">;
  agentId: string;
  workspaceDir: string;
  clock: Clock;
}

/** The session a command acts on: the chat's own, or an assignment's (`label` names it in replies). */
interface Target {
  sessionKey: string;
  label: string;
  assignment: boolean;
}

/** The three mode commands (see the file header). */
export function modeCommands(o: ModeCommandsOptions): ExtraCommand[] {
  const plan: ExtraCommand = {
    name: "plan",
    description: "plan first: only read-only tools and PLAN.md until /execute (/plan <task id> for a task)",
    run: (args, sessionKey, from) =>
      withTarget(o, "plan", args, sessionKey, from, async (t) => {
        const mode = await modeOf(o, t.sessionKey);
        const file = planFilePath(t.sessionKey);
        if (mode === "plan") return `${t.label} is already in plan mode; the plan goes into ${file}.`;
        await setMode(o, t.sessionKey, "plan");
        return t.assignment
          ? `📝 ${t.label} is in plan mode: its next run writes ${file} and asks you to approve it; your yes switches it to execute.`
          : `📝 Plan mode: I look around and write the plan into ${file}, changing nothing else; /execute when you approve it.`;
      }),
  };
  const execute: ExtraCommand = {
    name: "execute",
    description: "leave plan mode and follow the plan in PLAN.md (/execute <task id> for a task)",
    run: (args, sessionKey, from) =>
      withTarget(o, "execute", args, sessionKey, from, async (t) => {
        const mode = await modeOf(o, t.sessionKey);
        const file = planFilePath(t.sessionKey);
        if (mode === "execute") return `${t.label} is already in execute mode, following ${file}.`;
        if (mode !== "plan") return `${t.label} is not in plan mode (it is ${mode}): /plan starts planning.`;
        await setMode(o, t.sessionKey, "execute");
        const missing = existsSync(path.join(o.workspaceDir, file)) ? "" : ` (${file} is not written yet)`;
        return `▶️ Execute mode: ${t.assignment ? `${t.label.toLowerCase()} follows` : "I follow"} the plan in ${file}${missing}, with every tool again; /mode normal ends it.`;
      }),
  };
  const mode: ExtraCommand = {
    name: "mode",
    description: "show the mode (plan, execute or normal); /mode normal ends plan or execute mode",
    async run(args, sessionKey, from) {
      const words = args.split(/\s+/).filter((w) => w !== "");
      const normal = words[0]?.toLowerCase() === "normal";
      const rest = normal ? words.slice(1) : words;
      if (rest.length > 1 || (!normal && rest.length === 1 && /^(plan|execute)$/i.test(rest[0] ?? "")))
        return "Usage: /mode shows the mode; /mode normal ends plan or execute mode; /mode [normal] <task id> for a task.";
      if (normal)
        return withTarget(o, "mode normal", rest.join(" "), sessionKey, from, async (t) => {
          if ((await modeOf(o, t.sessionKey)) === "normal") return `${t.label} is already in normal mode.`;
          await setMode(o, t.sessionKey, "normal");
          return `${t.label} is back in normal mode: every tool again, and the plan no longer rides in the context.`;
        });
      // Showing changes nothing: anyone admitted here may look.
      const t = rest[0] ? await assignmentTarget(o, rest[0], from) : chatTarget(sessionKey);
      if (typeof t === "string") return t;
      return describeMode(o, t, await modeOf(o, t.sessionKey));
    },
  };
  return [plan, execute, mode];
}

/** One line: the mode of `t`, with its plan file when the mode has one. */
function describeMode(o: ModeCommandsOptions, t: Target, mode: SessionMode): string {
  const file = planFilePath(t.sessionKey);
  const written = existsSync(path.join(o.workspaceDir, file)) ? "" : ", not written yet";
  const whose = t.assignment ? `Mode of ${t.label.toLowerCase()}` : "Mode";
  if (mode === "plan")
    return `${whose}: plan — read-only tools; the plan goes into ${file} (in the workspace${written}); ${t.assignment ? "the owner's yes to it" : "/execute"} follows it.`;
  if (mode === "execute")
    return `${whose}: execute — following the plan in ${file} (in the workspace${written}); /mode normal ends it.`;
  return `${whose}: normal — /plan plans first.`;
}

/**
 * Runs `change` on the session a mode change names: an assignment when `args` holds a task id,
 * else the chat's own, which only a direct chat may change. Otherwise the one-line refusal.
 */
async function withTarget(
  o: ModeCommandsOptions,
  command: string,
  args: string,
  sessionKey: string,
  from: CommandFrom | undefined,
  change: (t: Target) => Promise<string>,
): Promise<string> {
  const id = args.trim();
  if (id !== "") {
    if (/\s/.test(id)) return `Usage: /${command} [task id] — one task id at most.`;
    const t = await assignmentTarget(o, id, from);
    return typeof t === "string" ? t : change(t);
  }
  if (!from?.isDirect)
    return `Cannot use /${command} here: only a direct chat, or the owner of a task (/${command} <task id>), may change modes.`;
  return change(chatTarget(sessionKey));
}

function chatTarget(sessionKey: string): Target {
  return { sessionKey, label: "This chat", assignment: false };
}

/** The assignment `id` when it was started in this chat by this sender (or by no one in particular), else why not. */
async function assignmentTarget(
  o: ModeCommandsOptions,
  id: string,
  from: CommandFrom | undefined,
): Promise<Target | string> {
  const a = await findAssignment(o.store, o.agentId, id).catch((err: unknown) => {
    if (err instanceof AssignmentInputError) return undefined;
    throw err;
  });
  const mine =
    a !== undefined &&
    from !== undefined &&
    sameChat(a.owner, from.chat) &&
    (a.requestedBy === null || a.requestedBy === from.senderId);
  if (!a || !mine) return `Cannot do that: no task "${id}" of yours in this chat (/tasks lists them).`;
  return { sessionKey: a.sessionKey, label: `Task ${a.id}`, assignment: true };
}

async function modeOf(o: ModeCommandsOptions, sessionKey: string): Promise<SessionMode> {
  return (await o.store.sessions.get(sessionKey))?.mode ?? "normal";
}

/** Sets the mode, making the session when it has none yet (a mode chosen before the first message). */
async function setMode(o: ModeCommandsOptions, sessionKey: string, mode: SessionMode): Promise<void> {
  const now = o.clock.now();
  if (!(await o.store.sessions.setMode(sessionKey, mode, now))) {
    await o.store.sessions.ensure(sessionKey, newId("ses"), null, now);
    await o.store.sessions.setMode(sessionKey, mode, now);
  }
}

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
