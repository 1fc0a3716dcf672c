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

/** The gateway's own commands; capabilities add theirs (ExtraCommand, e.g. /task). */
export type ChatCommand = "new" | "stop" | "status" | "model" | "compact" | "help";

/**
 * A chat command a capability brings (the assignments' /task and /tasks): handled by the router
 * like the gateway's own, listed in /help and registered with the platforms that list commands.
 */
export interface ExtraCommand {
  /** Lower-case letters only, not one of the gateway's own. */
  name: string;
  description: string;
  /** `args`: the words after the command; returns the reply. */
  run(args: string, sessionKey: string, from: CommandFrom | undefined): Promise<string>;
}

/** Where a command came from: the chat, the sender, and whether it is a direct chat. */
export interface CommandFrom {
  chat: ChatTarget;
  senderId: string;
  isDirect: boolean;
}

const COMMANDS: Record<ChatCommand, string> = {
  new: "start a fresh session (the old transcript is kept, but no longer sent to the model)",
  stop: "stop the turn that is running now",
  status: "show this session, the queue, the model in use and today's spend",
  model: "show the model chain; /model <provider/model> uses that model only here, /model default goes back",
  compact: "compact this conversation now (older turns become a summary; nothing is deleted)",
  help: "list these commands",
};

/**
 * Parses `/cmd`, `/cmd@botname` or `/cmd args` naming one of the gateway's commands or of
 * `extra`; returns its name, or undefined for anything else.
 */
export function parseCommand(text: string, extra: readonly ExtraCommand[] = []): string | undefined {
  const match = /^\/([a-z]+)(?:@[\w.]+)?(?:\s|$)/i.exec(text.trim());
  const name = match?.[1]?.toLowerCase();
  if (!name) return undefined;
  return name in COMMANDS || extra.some((c) => c.name === name) ? name : undefined;
}

/** Text of /help: the gateway's commands, then the capabilities'. */
export function helpText(extra: readonly ExtraCommand[] = []): string {
  return ["Commands:", ...commandList(extra).map((c) => `/${c.command} — ${c.description}`)].join("\n");
}

/**
 * Every command with its description (Telegram setMyCommands, Discord's slash commands, /help).
 * Throws when an extra command's name is not lower-case letters or repeats another's.
 */
export function commandList(
  extra: readonly ExtraCommand[] = [],
): Array<{ command: string; description: string }> {
  const seen = new Set(Object.keys(COMMANDS));
  for (const c of extra) {
    if (!/^[a-z]+$/.test(c.name)) throw new Error(`chat command "${c.name}" must be lower-case letters`);
    if (seen.has(c.name)) throw new Error(`chat command /${c.name} is defined twice`);
    seen.add(c.name);
  }
  const own = Object.entries(COMMANDS).map(([command, description]) => ({ command, description }));
  // /help stays last.
  return [
    ...own.filter((c) => c.command !== "help"),
    ...extra.map((c) => ({ command: c.name, description: c.description })),
    ...own.filter((c) => c.command === "help"),
  ];
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
  /** The capabilities' commands (`/task`, `/tasks`). */
  extra?: readonly ExtraCommand[];
  /** `/stop`: what the capabilities stop too (a chat's helpers), as phrases for the reply. */
  stopMore?(sessionKey: string): Promise<string[]>;
}

/** Runs a chat command for a session and returns the answer to send. */
export async function runCommand(
  command: string,
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
    case "stop": {
      const turn = lanes.abortRunning(sessionKey, "user_stop");
      const more = (await ctx.stopMore?.(sessionKey)) ?? [];
      if (!turn && more.length === 0) return "Nothing is running.";
      return `Stopping ${[...(turn ? ["the current turn"] : []), ...more].join(" and ")}.`;
    }
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
    case "help":
      return helpText(ctx.extra);
  }
  const extra = ctx.extra?.find((c) => c.name === command);
  return extra
    ? extra.run(argumentOf(text), sessionKey, from)
    : `Unknown command /${command}. /help lists them.`;
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
