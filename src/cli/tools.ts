/**
 * `switchyard tools list [--channel C] [--group] [--json]`: what a turn in that chat is offered
 * under the configuration's `tools:` policy, and why each other tool is not. Lists the built-in
 * tools of TOOL_CATALOG (exec and web tools only once installed; MCP tools are not listed).
 */
import { parseArgs } from "node:util";
import { UsageError, parseOrUsage, runSubcommand, subcommandHome } from "./subcommand.js";
import { TOOL_CATALOG } from "../harness/tools/tool-groups.js";
import { ToolPolicy } from "../harness/tools/tool-policy.js";
import { formatTable } from "./table.js";

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
  const { values: v, positionals } = parseOrUsage(
    () => parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true }),
    USAGE_LINE,
  );
  const [action, extra] = positionals;
  if (action !== "list")
    throw new UsageError(action ? `unknown action "${action}"` : "missing action", USAGE_LINE);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, USAGE_LINE);
  const { config } = subcommandHome("tools", v, true);
  const policy = new ToolPolicy(config.tools);
  // As the gateway sees a chat: a direct chat is private except on the HTTP API.
  const ctx = { channel: v.channel, groupChat: v.group, privateChat: !v.group && v.channel !== "http" };
  const rows = Object.entries(TOOL_CATALOG).map(([name, groups]) => ({
    name,
    groups: [...groups],
    ...policy.decide(name, groups, ctx),
  }));
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
