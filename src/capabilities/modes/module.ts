/**
 * The modes capability: a session's plan / execute / normal mode from the chat (`/plan`,
 * `/execute`, `/mode`: mode-commands.ts). The mode is session state (SessionRecord.mode); the
 * turn runner hands it to each turn, where harness/modes/ narrows the tools in plan mode and
 * puts the plan to follow into the context in execute mode. Nothing runs in the background.
 */
import type { Capability, CapabilityModule } from "../types.js";
import { modeCommands } from "./mode-commands.js";

/** The modes module: its chat commands. */
export const modesModule: CapabilityModule<Capability> = {
  name: "modes",
  create({ config, store, workspaceDir, clock }) {
    return { commands: modeCommands({ store, agentId: config.agent.id, workspaceDir, clock }) };
  },
};
