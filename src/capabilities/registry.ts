/**
 * Every capability module, in the order they are built (a module may look up one before it):
 * the only place that lists what the agent can do besides files and memory. Adding one is a
 * folder exporting a CapabilityModule and a line here. Modules load heavy libraries lazily, so a
 * capability that is configured but unused costs nothing at start.
 */
import { execModule } from "./exec/module.js";
import type { CapabilityModule } from "./types.js";
import { webModule } from "./web/module.js";

/** The capability modules, in build order. */
export const capabilityModules: readonly CapabilityModule[] = [execModule, webModule];
