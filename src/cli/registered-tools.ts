/**
 * Which built-in tools a gateway with a given configuration registers for chat turns, without
 * building one: every TOOL_CATALOG entry, less those only an assignment's runs get, less the
 * optional ones whose setting is off (a predicate per optional tool). `switchyard tools list`
 * puts the tool policy on top, so it prints what the model is offered in that chat. MCP tools
 * (named at run time) are not known here.
 */
import type { Config } from "../config/schema.js";
import { RUN_ONLY_TOOLS } from "../harness/assignments/assignment-tools.js";
import { TOOL_CATALOG, type ToolGroup } from "../harness/tools/tool-groups.js";

/** Optional tools: whether the configuration turns each on, and the setting that does. */
const OPTIONAL_TOOLS: Readonly<Record<string, { on(config: Config): boolean; setting: string }>> = {
  exec: { on: (c) => c.tools.exec.enabled, setting: "tools.exec.enabled is false" },
  web_fetch: { on: (c) => c.tools.web.fetch, setting: "tools.web.fetch is off" },
  web_search: { on: (c) => c.tools.web.searchUrl !== undefined, setting: "tools.web.searchUrl is not set" },
  spawn_agent: { on: (c) => c.subagents.enabled, setting: "subagents.enabled is false" },
  wait_agents: { on: (c) => c.subagents.enabled, setting: "subagents.enabled is false" },
};

/** A catalog tool and whether a gateway with the configuration registers it for chat turns. */
export interface RegisteredTool {
  name: string;
  groups: readonly ToolGroup[];
  registered: boolean;
  /** Why not, one line, when not registered. */
  reason?: string;
}

/** Every catalog tool, in catalog order, with whether `config` registers it for chat turns. */
export function registeredChatTools(config: Config): RegisteredTool[] {
  return Object.entries(TOOL_CATALOG).map(([name, groups]) => {
    if (RUN_ONLY_TOOLS.has(name))
      return { name, groups, registered: false, reason: "only in an assignment's runs" };
    const optional = OPTIONAL_TOOLS[name];
    if (optional && !optional.on(config))
      return { name, groups, registered: false, reason: `not enabled: ${optional.setting}` };
    return { name, groups, registered: true };
  });
}
