/**
 * `switchyard tools list [--channel C] [--group] [--json]`: what a turn in that chat is offered
 * — the built-in tools a gateway with this configuration registers (registered-tools.ts: exec
 * only when enabled, …) under its `tools:` policy — and why each other tool is not. MCP tools
 * are not listed.
 */
import { parseListAction, runSubcommand, subcommandHome } from "./subcommand.js";
import { ToolPolicy } from "../harness/tools/tool-policy.js";
import { formatTable } from "./table.js";
import { registeredChatTools } from "./registered-tools.js";

const USAGE_LINE = "usage: switchyard tools list [--channel C] [--group] [--json]";

const FLAGS = {
  channel: { type: "string", default: "console" },
  group: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  config: { type: "string" },
  home: { type: "string" },
} as const;

/** Runs `switchyard tools …` (argv after `tools`); resolves with the exit code. */
export async function runTools(argv: string[]): Promise<number> {
  return runSubcommand("tools", () => tools(argv));
}

async function tools(argv: string[]): Promise<number> {
  const v = parseListAction(argv, FLAGS, USAGE_LINE);
  const { config } = subcommandHome("tools", v, true);
  const policy = new ToolPolicy(config.tools);
  // As the gateway sees a chat: a direct chat is private except on the HTTP API.
  const ctx = { channel: v.channel, groupChat: v.group, privateChat: !v.group && v.channel !== "http" };
  const rows: Array<{ name: string; groups: string[]; allowed: boolean; reason?: string }> =
    registeredChatTools(config).map(({ name, groups, registered, reason }) => ({
      name,
      groups: [...groups],
      ...(registered ? policy.decide(name, groups, ctx) : { allowed: false, reason }),
    }));
  // An MCP server's tools are named when it starts (`switchyard mcp list`): one row per server.
  for (const server of Object.keys(config.mcp.servers)) {
    const group = `mcp:${server}` as const;
    rows.push({ name: `${server}__*`, groups: [group], ...policy.decide(`${server}__*`, [group], ctx) });
  }
  if (v.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else
    process.stdout.write(
      formatTable(
        [{ header: "TOOL" }, { header: "GROUPS" }, { header: "OFFERED" }, { header: "WHY NOT" }],
        rows.map((r) => [r.name, r.groups.join(","), r.allowed ? "yes" : "no", r.reason ?? ""]),
      ),
    );
  return 0;
}
