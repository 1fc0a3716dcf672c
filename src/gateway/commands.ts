/**
 * Chat commands every channel understands. They are handled by the router, never reach the
 * model, and are answered directly.
 */

import type { ChatTarget } from "../channels/types.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import { newId } from "../util/ids.js";
import type { LaneQueue } from "./lanes/lane-queue.js";
import { type SpendCaps, spendSummary } from "./status-snapshot.js";

/** The slice of the model router commands read. */
export interface CommandModels {
  readonly chain: ReadonlyArray<{ ref: string }>;
  currentRef(sessionKey: string, modelOverride?: string | null): string;
  /** Why `ref` cannot be chosen, or undefined. */
  refusal(ref: string): string | undefined;
}

/** The slice of the usage meter commands read. */
export interface CommandUsage {
  today(): { spendUsd: number; tokens: number };
  readonly limits: SpendCaps;
}

export type ChatCommand = "new" | "stop" | "status" | "model" | "compact" | "task" | "tasks" | "help";

/** Where a command came from: the chat, the sender, and whether it is a direct chat. */
export interface CommandFrom {
  chat: ChatTarget;
  senderId: string;
  isDirect: boolean;
}

/** `/task` and `/tasks` (multi-day assignments); each returns the reply. */
export interface TaskCommands {
  /** `/task <args>` (a goal, or `cancel <id>`). */
  task(args: string, from: CommandFrom | undefined): Promise<string>;
  /** `/tasks`: the chat's assignments. */
  list(from: CommandFrom | undefined): Promise<string>;
}

const COMMANDS: Record<ChatCommand, string> = {
  new: "start a fresh session (the old transcript is kept, but no longer sent to the model)",
  stop: "stop the turn that is running now",
  status: "show this session, the queue, the model in use and today's spend",
  model: "show the model chain; /model <provider/model> uses that model only here, /model default goes back",
  compact: "compact this conversation now (older turns become a summary; nothing is deleted)",
  task: "/task <goal> starts a multi-day assignment that reports here; /task cancel <id> stops one",
  tasks: "list the assignments in progress",
  help: "list these commands",
};

/** Parses `/cmd`, `/cmd@botname` or `/cmd args`; returns undefined for anything else. */
export function parseCommand(text: string): ChatCommand | undefined {
  const match = /^\/([a-z]+)(?:@[\w.]+)?(?:\s|$)/i.exec(text.trim());
  const name = match?.[1]?.toLowerCase();
  return name && name in COMMANDS ? (name as ChatCommand) : undefined;
}

/** Text of /help. */
export function helpText(): string {
  return ["Commands:", ...Object.entries(COMMANDS).map(([name, what]) => `/${name} — ${what}`)].join("\n");
}

/** Command list for platforms that register commands (Telegram setMyCommands). */
export function commandList(): Array<{ command: ChatCommand; description: string }> {
  return Object.entries(COMMANDS).map(([command, description]) => ({
    command: command as ChatCommand,
    description,
  }));
}

/** What answering a command needs. */
export interface CommandContext {
  store: Store;
  lanes: Pick<LaneQueue, "abortRunning" | "stats" | "isBusy" | "pendingCount">;
  clock: Clock;
  /** "provider/model" as configured. */
  modelRef: string;
  simulated: boolean;
  models?: CommandModels;
  usage?: CommandUsage;
  /** `/compact`: the session's next turn compacts first. */
  compact?(sessionKey: string): void;
  /** `/task`, `/tasks`. */
  tasks?: TaskCommands;
}

/** Runs a chat command for a session and returns the answer to send. */
export async function runCommand(
  command: ChatCommand,
  sessionKey: string,
  ctx: CommandContext,
  text = "",
  from?: CommandFrom,
): Promise<string> {
  const { store, clock, lanes } = ctx;
  switch (command) {
    case "new": {
      await store.sessions.reset(sessionKey, newId("ses"), clock.now());
      return "Started a new session. Earlier messages are kept on disk but no longer sent to the model.";
    }
    case "stop":
      return lanes.abortRunning(sessionKey, "user_stop")
        ? "Stopping the current turn."
        : "Nothing is running.";
    case "status": {
      const stats = lanes.stats();
      const session = await store.sessions.get(sessionKey);
      const inUse = ctx.models?.currentRef(sessionKey, session?.model) ?? ctx.modelRef;
      const lines = [
        `Session: ${sessionKey}${session ? ` (${session.sessionId})` : ""}`,
        `Model: ${inUse}${session?.model ? " (chosen with /model)" : ""}${ctx.simulated ? " — SIMULATED replies (no API key configured)" : ""}`,
        `This session: ${lanes.isBusy(sessionKey) ? "running" : "idle"}, ${lanes.pendingCount(sessionKey)} waiting`,
        `Gateway: ${stats.running} running, ${stats.pending.human + stats.pending.normal + stats.pending.background} waiting, ${stats.lanes} active sessions`,
      ];
      if (ctx.usage) lines.push(`Today (UTC): ${spendSummary(ctx.usage.today(), ctx.usage.limits)}`);
      return lines.join("\n");
    }
    case "model":
      return modelCommand(sessionKey, argumentOf(text), ctx);
    case "compact":
      if (!ctx.compact) return "Compaction is not available here.";
      ctx.compact(sessionKey);
      return "This conversation will be compacted at the start of its next turn: older turns become a summary (the full transcript is kept).";
    case "task":
      return ctx.tasks ? ctx.tasks.task(argumentOf(text), from) : "Assignments are not available here.";
    case "tasks":
      return ctx.tasks ? ctx.tasks.list(from) : "Assignments are not available here.";
    case "help":
      return helpText();
  }
}

/** The words after the command name. */
function argumentOf(text: string): string {
  return text
    .trim()
    .replace(/^\/\S+\s*/, "")
    .trim();
}

/** `/model`: the chain and the model in use; `/model <ref>` chooses one (strict); `/model default` clears. */
async function modelCommand(sessionKey: string, arg: string, ctx: CommandContext): Promise<string> {
  const { store, clock } = ctx;
  const session = await store.sessions.get(sessionKey);
  if (arg === "") {
    const chain = ctx.models?.chain.map((e) => e.ref) ?? [ctx.modelRef];
    const inUse = ctx.models?.currentRef(sessionKey, session?.model) ?? ctx.modelRef;
    return [
      `In use here: ${inUse}${session?.model ? " (chosen with /model: no fallback)" : ""}${ctx.simulated ? " — SIMULATED" : ""}`,
      `Chain: ${chain.join(" → ")}`,
      "/model <provider/model> to use one model here, /model default to go back to the chain.",
    ].join("\n");
  }
  if (arg === "default" || arg === "reset") {
    if (session?.model) await store.sessions.setModel(sessionKey, null, clock.now());
    return `Back to the model chain: ${ctx.models?.chain.map((e) => e.ref).join(" → ") ?? ctx.modelRef}.`;
  }
  const refusal = ctx.models ? ctx.models.refusal(arg) : "model choice is not available here";
  if (refusal) return `Cannot use ${arg}: ${refusal}.`;
  if (!session) await store.sessions.ensure(sessionKey, newId("ses"), null, clock.now());
  await store.sessions.setModel(sessionKey, arg, clock.now());
  return `This conversation now uses ${arg} only (no fallback: if it fails, you will see why). /model default goes back to the chain.`;
}
