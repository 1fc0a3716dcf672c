/**
 * The configured MCP servers made ready to start: each stdio server's program resolved on PATH
 * and its environment scrubbed, each HTTP server's endpoint; one McpToolSource per server. A
 * program that cannot be found is a ConfigError naming `mcp.servers.<name>.command`, so the
 * gateway (and `mcp list`, doctor) refuse the configuration before anything starts.
 */
import path from "node:path";
import type { Config } from "../../config/schema.js";
import type { CommandGuardObserver } from "../../harness/tools/command-guard.js";
import type { Clock } from "../../util/clock.js";
import { ConfigError } from "../../util/config-error.js";
import type { Logger } from "../../util/logger.js";
import { McpToolSource } from "./mcp-tool-source.js";
import type { McpEndpoint } from "./server-connection.js";
import { resolveCommand, serverEnv } from "./server-env.js";
import { isStdioServer } from "./settings.js";

/** What building the servers needs. */
export interface McpServersContext {
  config: Config;
  /** The gateway's environment (scrubbed per server). */
  env: Readonly<Record<string, string | undefined>>;
  workspaceDir: string;
  clock: Clock;
  logger: Logger;
  /** Restart crashed servers (the gateway) or not (a one-off listing). Default true. */
  restart?: boolean;
  /** The configuration file, for the ConfigError. */
  file?: string | undefined;
  /** Told of each command guard verdict of the servers' tools (the hooks capability). */
  onGuard?: CommandGuardObserver | undefined;
}

/**
 * One McpToolSource per configured server, in configuration order. Throws a ConfigError naming
 * `mcp.servers.<name>.command` for every stdio program that is not an executable on PATH.
 */
export function mcpToolSources(ctx: McpServersContext): McpToolSource[] {
  const problems: string[] = [];
  const planned: Array<{ name: string; endpoint: McpEndpoint; timeoutMs: number }> = [];
  for (const [name, server] of Object.entries(ctx.config.mcp.servers)) {
    const timeoutMs = Math.min(server.timeoutMs, ctx.config.agent.toolTimeoutMs);
    if (!isStdioServer(server)) {
      planned.push({ name, timeoutMs, endpoint: { type: "http", url: server.url, headers: server.headers } });
      continue;
    }
    const cwd = path.resolve(ctx.workspaceDir, server.cwd ?? ".");
    const env = serverEnv(ctx.env, server.env, ctx.workspaceDir);
    const command = resolveCommand(server.command, env.PATH, cwd);
    if (command === undefined) {
      problems.push(
        `mcp.servers.${name}.command: found ${JSON.stringify(server.command)}, expected a program on PATH or a path to an executable file (not found)`,
      );
      continue;
    }
    planned.push({
      name,
      timeoutMs,
      endpoint: { type: "stdio", process: { command, args: server.args, env, cwd } },
    });
  }
  if (problems.length > 0) throw new ConfigError(ctx.file, problems);
  return planned.map(
    ({ name, endpoint, timeoutMs }) =>
      new McpToolSource({
        name,
        endpoint,
        timeoutMs,
        clock: ctx.clock,
        logger: ctx.logger.child({ name: `mcp.${name}` }),
        homeDir: ctx.env.HOME,
        ...(ctx.onGuard && { onGuard: ctx.onGuard }),
        ...(ctx.restart === false ? { restart: false } : {}),
      }),
  );
}
