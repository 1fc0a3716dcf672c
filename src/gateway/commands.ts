/**
 * Chat commands every channel understands. They are handled by the router, never reach the
 * model, and are answered directly.
 */

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
