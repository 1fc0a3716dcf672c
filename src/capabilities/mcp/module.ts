/**
 * The `mcp` capability: one tool source per configured MCP server (mcp-servers.ts), whose tools
 * the agent is offered as `<server>__<tool>` in group `mcp:<server>`. Nothing starts at build:
 * a server starts on the first turn whose policy may offer it (McpToolSource.prepare), so a
 * configured but unused server costs no process and no SDK import. Stop ends every server
 * (doctor and `mcp list` start each once themselves: cli/doctor-tools.ts, cli/mcp.ts). Built only when servers are configured.
 */
import type { HooksCapability } from "../hooks/module.js";
import type { Capability, CapabilityModule } from "../types.js";
import { mcpToolSources } from "./mcp-servers.js";

/** The MCP capability module. */
export const mcpModule: CapabilityModule = {
  name: "mcp",
  enabled: (config) => Object.keys(config.mcp.servers).length > 0,
  create({ config, env, workspaceDir, clock, logger, capability }): Capability {
    const sources = mcpToolSources({
      // The built-in guard's verdicts are recorded as the first beforeToolCall hook's.
      onGuard: capability<HooksCapability>("hooks")?.guard,
      config,
      env,
      workspaceDir,
      clock,
      logger: logger.child({ name: "mcp" }),
    });
    return {
      toolSources: sources,
      stop: async () => {
        await Promise.all(sources.map((s) => s.connection.stop()));
      },
    };
  },
};
