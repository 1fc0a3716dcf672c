/**
 * `mcp:` in the configuration: the MCP servers whose tools the agent is offered, each started
 * as a child process (stdio: `command`) or reached over Streamable HTTP (`url`). Whether a
 * `command` exists is checked when the capability is built (it needs the gateway's PATH).
 */
import { z } from "zod";
import { section } from "../../util/zod-sections.js";

/** A server's name: its tools are `<name>__<tool>`, its policy group `mcp:<name>`. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]+$/;

/** Default time one call (and the start) of a server may take, in ms. */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const timeoutMs = z.number().int().positive().default(DEFAULT_MCP_TIMEOUT_MS);

const env = z
  .record(z.string(), z.string({ message: "expected a string value (quote numbers)" }))
  .superRefine(keysMatch(VARIABLE_NAME, "is not an environment variable name (letters, digits, _)"));

const url = z.string().refine((v) => /^https?:\/\/[^/?#\s]+/i.test(v) && URL.canParse(v), {
  message: "expected an http:// or https:// URL",
});

/**
 * One server: exactly one of `command` (a stdio server) or `url` (Streamable HTTP); the keys of
 * the other kind are refused, each error naming its key.
 */
const mcpServer = z
  .strictObject({
    /** stdio: the program (a name looked up on PATH, or a path). */
    command: z.string().min(1).optional(),
    /** stdio: its arguments. Default none. */
    args: z.array(z.string()).optional(),
    /**
     * stdio: variables it gets besides PATH, HOME, LANG and TZ (values usually `${VAR}`); nothing
     * else of the gateway's environment reaches it.
     */
    env: env.optional(),
    /** stdio: folder it runs in, relative to the workspace. Default: the workspace. */
    cwd: z.string().min(1).optional(),
    /** HTTP: its MCP endpoint, http:// or https://. */
    url: url.optional(),
    /** HTTP: headers sent with every request (e.g. Authorization: "Bearer ${TOKEN}"). */
    headers: z.record(z.string(), z.string()).optional(),
    /** Time one call, and the start, may take; never more than agent.toolTimeoutMs. Default 60000. */
    timeoutMs,
  })
  .superRefine((s, ctx) => {
    if (s.command !== undefined && s.url !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: "set either command (stdio) or url (HTTP), not both",
      });
      return;
    }
    if (s.command === undefined && s.url === undefined) {
      ctx.addIssue({ code: "custom", message: "set command (a stdio server) or url (an HTTP server)" });
      return;
    }
    const foreign = s.url !== undefined ? (["args", "env", "cwd"] as const) : (["headers"] as const);
    for (const key of foreign)
      if (s[key] !== undefined)
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `${key} applies only to ${s.url !== undefined ? "stdio servers (command)" : "HTTP servers (url)"}`,
        });
  })
  .transform(
    (s): McpServerSettings =>
      s.url !== undefined
        ? { url: s.url, headers: s.headers ?? {}, timeoutMs: s.timeoutMs }
        : {
            command: s.command ?? "",
            args: s.args ?? [],
            env: s.env ?? {},
            ...(s.cwd !== undefined ? { cwd: s.cwd } : {}),
            timeoutMs: s.timeoutMs,
          },
  );

/** A stdio server's settings, defaults applied. */
export interface McpStdioSettings {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  timeoutMs: number;
}

/** An HTTP server's settings, defaults applied. */
export interface McpHttpSettings {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** One server's settings. */
export type McpServerSettings = McpStdioSettings | McpHttpSettings;

/** `mcp:`: the MCP servers, by name. Default none. */
export const mcpSettings = section({
  servers: z
    .record(z.string(), mcpServer)
    .superRefine(keysMatch(MCP_SERVER_NAME, "is not a server name (letters, digits, _ and - only)"))
    .default({}),
});

/** A check that every key of a record matches `pattern`; an issue at the key names it. */
function keysMatch(pattern: RegExp, problem: string) {
  return (record: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    for (const key of Object.keys(record))
      if (!pattern.test(key))
        ctx.addIssue({ code: "custom", path: [key], message: `${JSON.stringify(key)} ${problem}` });
  };
}

/** Whether a server is run as a child process. */
export function isStdioServer(server: McpServerSettings): server is McpStdioSettings {
  return "command" in server;
}
