/**
 * The `exec` capability: the `exec` tool (harness/tools/exec/exec-tool.ts) and the one
 * CommandRunner its commands run through, so `/stop`, a timeout and shutdown kill their process
 * groups. Built only when `tools.exec.enabled`.
 */
import { CommandRunner } from "../../harness/tools/exec/command-runner.js";
import { execTool } from "../../harness/tools/exec/exec-tool.js";
import {
  type SandboxDecision,
  chooseSandbox,
  describeSandbox,
} from "../../harness/tools/exec/sandbox-choice.js";
import type { Capability, CapabilityModule } from "../types.js";

/** The exec capability module. */
export const execModule: CapabilityModule = {
  name: "exec",
  enabled: (config) => config.tools.exec.enabled,
  create({ config, env, home }): Capability {
    const runner = new CommandRunner();
    const { sandbox: mode, network } = config.tools.exec;
    // Decided at the first command, then kept: the probe spawns bwrap once.
    let decision: Promise<SandboxDecision> | undefined;
    const sandbox = (): Promise<SandboxDecision> => {
      decision ??= chooseSandbox(mode, { pathEnv: env.PATH ?? "" });
      return decision;
    };
    return {
      tools: [
        execTool({
          runner,
          env,
          passEnv: config.tools.exec.env,
          timeoutMs: Math.min(config.tools.exec.timeoutMs, config.agent.toolTimeoutMs),
          sandbox,
          network,
          // The real home holds keys and tokens, the gateway's home its database: not for commands.
          hide: [...(env.HOME ? [env.HOME] : []), home],
        }),
      ],
      stop: () => runner.killAll(),
      async probe() {
        const d = await sandbox();
        return [{ name: "exec", ok: d.type !== "unavailable", detail: describeSandbox(d, network) }];
      },
    };
  },
};
