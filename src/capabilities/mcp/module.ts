/**
 * The `mcp` capability: one tool source per configured MCP server (mcp-servers.ts), whose tools
 * the agent is offered as `<server>__<tool>` in group `mcp:<server>`. Nothing starts at build:
 * a server starts on the first turn whose policy may offer it (McpToolSource.prepare), so a
 * configured but unused server costs no process and no SDK import. Stop ends every server;
 * doctor starts each once and reports its tool count. Built only when servers are configured.
 */
import type { Capability, CapabilityCheck, CapabilityModule } from "../types.js";
import { mcpToolSources } from "./mcp-servers.js";
import { probeMcpServers } from "./probe.js";

/** The MCP capability module. */
export const mcpModule: CapabilityModule = {
  name: "mcp",
  enabled: (config) => Object.keys(config.mcp.servers).length > 0,
  create({ config, env, workspaceDir, clock, logger }): Capability {
    const sources = mcpToolSources({
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
      probe: async ({ timeoutMs }) => {
        const fresh = mcpToolSources({ config, env, workspaceDir, clock, logger, restart: false });
        return (await probeMcpServers(fresh, timeoutMs)).map(
          (r): CapabilityCheck => ({
            name: `mcp ${r.name}`,
            ok: r.state === "running",
            detail:
              r.state === "running"
                ? `${r.tools.length} tool${r.tools.length === 1 ? "" : "s"}${r.dropped.length > 0 ? ` (${r.dropped.length} dropped)` : ""}`
                : (r.reason ?? r.state),
          }),
        );
      },
    };
  },
};
