/**
 * `switchyard mcp list [--json]`: each configured MCP server, started once (at most
 * MCP_PROBE_TIMEOUT_MS each, all at once), its state and the tools it offers (as the agent sees them,
 * `<server>__<tool>`) or why it did not start, then stopped again. The running gateway is not
 * asked: its servers start on first use.
 */
import { existsSync } from "node:fs";
import { mcpToolSources } from "../capabilities/mcp/mcp-servers.js";
import { MCP_PROBE_TIMEOUT_MS, probeMcpServers } from "../capabilities/mcp/probe.js";
import { systemClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { parseListAction, runSubcommand, subcommandHome } from "./subcommand.js";
import { formatTable } from "./table.js";

const USAGE_LINE = "usage: switchyard mcp list [--json] [--config PATH] [--home DIR]";

const FLAGS = {
  json: { type: "boolean", default: false },
  config: { type: "string" },
  home: { type: "string" },
} as const;

/** Runs `switchyard mcp …` (argv after `mcp`); resolves with the exit code. */
export async function runMcp(argv: string[]): Promise<number> {
  return runSubcommand("mcp", () => list(argv));
}

async function list(argv: string[]): Promise<number> {
  const v = parseListAction(argv, FLAGS, USAGE_LINE);
  const { config, file, workspaceDir } = subcommandHome("mcp", v, true);
  const sources = mcpToolSources({
    config,
    env: process.env,
    // Before the gateway's first start the workspace does not exist yet: run where we are.
    workspaceDir: existsSync(workspaceDir) ? workspaceDir : process.cwd(),
    clock: systemClock,
    logger: silentLogger(),
    restart: false,
    file,
  });
  const reports = await probeMcpServers(sources, MCP_PROBE_TIMEOUT_MS);
  if (v.json) {
    process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
  } else if (reports.length === 0) {
    process.stdout.write("no MCP servers are configured (mcp.servers)\n");
  } else {
    process.stdout.write(
      formatTable(
        [{ header: "SERVER" }, { header: "STATE" }, { header: "TOOLS" }],
        reports.map((r) => [
          r.name,
          r.state,
          r.state === "running"
            ? [
                r.tools.map((t) => t.name).join(", ") || "(none)",
                ...r.dropped.map((d) => `dropped ${d.name}: ${d.reason}`),
              ].join("; ")
            : (r.reason ?? ""),
        ]),
      ),
    );
  }
  return reports.every((r) => r.state === "running") ? 0 : 1;
}
