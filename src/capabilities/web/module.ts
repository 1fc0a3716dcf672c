/**
 * The `web` capability: `web_fetch` (unless `tools.web.fetch` is false) and, when
 * `tools.web.searchUrl` names a SearXNG instance, `web_search`. Both read through the guarded
 * fetch with `tools.web.allowHosts` as the SSRF guard's exemptions; the tool policy's group
 * `web` still decides per chat. The HTML libraries load on the first fetch, not here.
 */
import type { Tool } from "../../harness/tools/types.js";
import type { Capability, CapabilityModule } from "../types.js";
import { webFetchTool } from "./web-fetch-tool.js";
import { webSearchTool } from "./web-search-tool.js";

/** The web capability module; built when either tool is configured. */
export const webModule: CapabilityModule = {
  name: "web",
  enabled: (config) => config.tools.web.fetch || config.tools.web.searchUrl !== undefined,
  create({ config, clock }): Capability {
    const web = config.tools.web;
    const common = {
      allowHosts: web.allowHosts,
      timeoutMs: Math.min(web.timeoutMs, config.agent.toolTimeoutMs),
      clock,
    };
    const tools: Tool[] = [];
    if (web.fetch) tools.push(webFetchTool({ ...common, maxChars: web.maxChars }));
    if (web.searchUrl !== undefined) tools.push(webSearchTool({ ...common, searchUrl: web.searchUrl }));
    return { tools };
  },
};
