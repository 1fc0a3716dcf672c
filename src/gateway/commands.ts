/**
 * Chat commands every channel understands. They are handled by the router, never reach the
 * model, and are answered directly.
 */

import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import { newId } from "../util/ids.js";
import type { LaneQueue } from "./lanes/lane-queue.js";

export type ChatCommand = "new" | "stop" | "status" | "help";

const COMMANDS: Record<ChatCommand, string> = {
  new: "start a fresh session (the old transcript is kept, but no longer sent to the model)",
  stop: "stop the turn that is running now",
  status: "show this session, the queue and the model in use",
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
}

/** Runs a chat command for a session and returns the answer to send. */
export async function runCommand(
  command: ChatCommand,
  sessionKey: string,
  ctx: CommandContext,
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
      return [
        `Session: ${sessionKey}${session ? ` (${session.sessionId})` : ""}`,
        `Model: ${ctx.modelRef}${ctx.simulated ? " — SIMULATED replies (no API key configured)" : ""}`,
        `This session: ${lanes.isBusy(sessionKey) ? "running" : "idle"}, ${lanes.pendingCount(sessionKey)} waiting`,
        `Gateway: ${stats.running} running, ${stats.pending.human + stats.pending.normal + stats.pending.background} waiting, ${stats.lanes} active sessions`,
      ].join("\n");
    }
    case "help":
      return helpText();
  }
}
