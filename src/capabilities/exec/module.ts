/**
 * The `exec` capability: the `exec` tool (harness/tools/exec/exec-tool.ts), the one
 * CommandRunner its commands run through (so `/stop`, a timeout and shutdown kill their process
 * groups), the sandbox that applies (decided at the first command, then kept) and, with
 * `tools.exec.approval: ask`, the requests waiting for a person's `/approve` and the hook that
 * decides them. Built only when `tools.exec.enabled`.
 */
import { CommandRunner } from "../../harness/tools/exec/command-runner.js";
import { ExecApprovals } from "../../harness/tools/exec/exec-approvals.js";
import { type ExecToolOptions, execCommand, execTool } from "../../harness/tools/exec/exec-tool.js";
import { type SandboxDecision, chooseSandbox } from "../../harness/tools/exec/sandbox-choice.js";
import type { HooksCapability } from "../hooks/module.js";
import type { Capability, CapabilityModule } from "../types.js";
import { approvalHooks } from "./approval-hook.js";

/** The exec capability module. */
export const execModule: CapabilityModule = {
  name: "exec",
  enabled: (config) => config.tools.exec.enabled,
  create({ config, env, home, store, clock, workspaceDir, capability }): Capability {
    const runner = new CommandRunner();
    const { sandbox: mode, network, approval } = config.tools.exec;
    // Decided at the first command, then kept: the probe spawns bwrap once.
    let decision: Promise<SandboxDecision> | undefined;
    const sandbox = (): Promise<SandboxDecision> => {
      decision ??= chooseSandbox(mode, { pathEnv: env.PATH ?? "" });
      return decision;
    };
    const approvals = approval === "ask" ? new ExecApprovals({ clock }) : undefined;
    const options: ExecToolOptions = {
      runner,
      env,
      passEnv: config.tools.exec.env,
      timeoutMs: Math.min(config.tools.exec.timeoutMs, config.agent.toolTimeoutMs),
      sandbox,
      network,
      // The real home holds keys and tokens, the gateway's home its database: not for commands.
      hide: [...(env.HOME ? [env.HOME] : []), home],
      ...(approvals ? { approvals } : {}),
      // The built-in guard's verdicts are recorded as the first beforeToolCall hook's.
      onGuard: capability<HooksCapability>("hooks")?.guard,
    };
    const hooks = approvals
      ? [
          approvalHooks({
            approvals,
            messagesOf: async (runId) =>
              (await store.inbox.listUnfinished())
                .filter((r) => r.runId === runId && r.state === "running")
                .map((r) => ({ senderId: r.message.senderId, text: r.message.text })),
            run: (request, signal) =>
              execCommand(options, { command: request.command, cwd: request.cwd, workspaceDir, signal }),
          }),
        ]
      : [];
    return {
      tools: [execTool(options)],
      hooks,
      stop: () => runner.killAll(),
    };
  },
};
