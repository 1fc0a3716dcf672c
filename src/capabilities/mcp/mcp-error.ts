/** Why an MCP server could not be used or a call to it failed, as one line the model can read. */

/**
 * `restarting`: the server crashed (or failed to start) and waits for its restart; `stopped`: the
 * gateway is shutting down; `start_failed`: it did not start; `timeout`: a call took too long;
 * `call_failed`: the server answered the call with a protocol error or the connection broke.
 */
export type McpErrorKind = "restarting" | "stopped" | "start_failed" | "timeout" | "call_failed";

/** An MCP failure: a stable kind, one line of message, the server's name. */
export class McpServerError extends Error {
  readonly kind: McpErrorKind;
  readonly server: string;
  constructor(kind: McpErrorKind, server: string, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "McpServerError";
    this.kind = kind;
    this.server = server;
  }
}

/** The first line of an error's message, trimmed to 300 characters. */
export function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const line = text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "unknown error";
  return line.length > 300 ? `${line.slice(0, 297)}…` : line.trim();
}
