/**
 * One MCP server as a ToolSource: the registry asks it for its tools on every turn, and it
 * answers with the same Tool objects until the server lists a different set (a start, or
 * `tools/list_changed`). A turn whose policy may offer `mcp:<server>` prepares it first: the
 * first such turn starts the server and waits for its listing (bounded by the start limit).
 */
import type { CommandGuardObserver } from "../../harness/tools/command-guard.js";
import type { ToolGroup } from "../../harness/tools/tool-groups.js";
import type { ToolSource } from "../../harness/tools/tool-source.js";
import type { Tool } from "../../harness/tools/types.js";
import type { Logger } from "../../util/logger.js";
import { type DroppedTool, mcpTools } from "./mcp-tools.js";
import { McpServerConnection, type McpServerConnectionOptions } from "./server-connection.js";

/** Options of an {@link McpToolSource}: the connection's, without `onTools`. */
export interface McpToolSourceOptions extends Omit<McpServerConnectionOptions, "onTools"> {
  /** `~` and $HOME for the command guard. */
  homeDir: string | undefined;
  /** Told of each command guard verdict of its tools' calls. Default none. */
  onGuard?: CommandGuardObserver | undefined;
  logger: Logger;
}

/** The tools of one MCP server, and the server's connection. */
export class McpToolSource implements ToolSource {
  readonly name: string;
  readonly groups: readonly ToolGroup[];
  readonly connection: McpServerConnection;
  #tools: readonly Tool[] = [];
  #dropped: readonly DroppedTool[] = [];

  constructor(options: McpToolSourceOptions) {
    this.name = options.name;
    this.groups = [`mcp:${options.name}`];
    const log = options.logger;
    this.connection = new McpServerConnection({
      ...options,
      onTools: (listed) => {
        const { tools, dropped } = mcpTools(listed, {
          server: options.name,
          homeDir: options.homeDir,
          onGuard: options.onGuard,
          call: (tool, args, signal) => this.connection.call(tool, args, signal),
        });
        for (const d of dropped)
          log.warn({ server: options.name, tool: d.name, reason: d.reason }, `mcp tool dropped: ${d.reason}`);
        this.#tools = Object.freeze(tools);
        this.#dropped = Object.freeze(dropped);
        log.info({ server: options.name, tools: tools.length, dropped: dropped.length }, "mcp tools listed");
      },
    });
  }

  /** The tools listed last (the same objects until the set changes); none before the first start. */
  tools(): readonly Tool[] {
    return this.#tools;
  }

  /** The listed tools that are not offered, and why. */
  dropped(): readonly DroppedTool[] {
    return this.#dropped;
  }

  /** Starts the server on first use and waits for its first listing; never rejects. */
  prepare(signal: AbortSignal): Promise<void> {
    return this.connection.ready(signal);
  }
}
