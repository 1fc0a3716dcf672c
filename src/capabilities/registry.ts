/**
 * Every capability module, in the order they are built, offer their tools and start (a module
 * may look up one built before it; a lookup made later, at a call, sees them all): the only
 * place that lists what the agent can do besides its workspace files. Adding one is a folder
 * exporting a CapabilityModule and a line here. Modules load heavy libraries lazily, so a
 * capability that is configured but unused costs nothing at start.
 */
import { assignmentsModule } from "./assignments/module.js";
import { cronModule } from "./cron/module.js";
import { execModule } from "./exec/module.js";
import { heartbeatModule } from "./heartbeat/module.js";
import { hooksModule } from "./hooks/module.js";
import { mcpModule } from "./mcp/module.js";
import { memoryModule } from "./memory/module.js";
import { subagentsModule } from "./subagents/module.js";
import { modesModule } from "./modes/module.js";
import type { CapabilityModule } from "./types.js";
import { webModule } from "./web/module.js";

/** The capability modules, in build order. */
export const capabilityModules: readonly CapabilityModule[] = [
  memoryModule,
  assignmentsModule,
  cronModule,
  heartbeatModule,
  // Before exec and mcp: they report the built-in command guard's verdicts to it.
  hooksModule,
  execModule,
  webModule,
  mcpModule,
  modesModule,
  subagentsModule,
];
