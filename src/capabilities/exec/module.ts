/**
 * The `exec` capability: the `exec` tool (harness/tools/exec/exec-tool.ts) and the one
 * CommandRunner its commands run through, so `/stop`, a timeout and shutdown kill their process
 * groups. Built only when `tools.exec.enabled`.
 */
import { CommandRunner } from "../../harness/tools/exec/command-runner.js";
import { execTool } from "../../harness/tools/exec/exec-tool.js";
import type { Capability, CapabilityModule } from "../types.js";

/** The exec capability module. */
export const execModule: CapabilityModule = {
  name: "exec",
  enabled: (config) => config.tools.exec.enabled,
  create({ config, env }): Capability {
    const runner = new CommandRunner();
    return {
      tools: [
        execTool({
          runner,
          env,
          passEnv: config.tools.exec.env,
          timeoutMs: Math.min(config.tools.exec.timeoutMs, config.agent.toolTimeoutMs),
        }),
      ],
      stop: () => runner.killAll(),
    };
  },
};
