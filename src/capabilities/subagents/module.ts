/**
 * The `subagents` capability: spawn_agent and wait_agents (subagent-tools.ts), the hook that
 * ends a run which called wait_agents, `/agents` (a chat's helpers; `/agents stop <id>`), `/stop`
 * stopping a chat's helpers with its turn, and recovery at start (Subagents.recover). Built
 * only with `subagents.enabled`.
 */
import type { ExtraCommand } from "../../gateway/commands.js";
import { isAssignmentSession } from "../../harness/assignments/assignments.js";
import type { AssignmentsCapability } from "../assignments/module.js";
import type { Capability, CapabilityModule } from "../types.js";
import { HelperProgress } from "./helper-progress.js";
import { subagentTools } from "./subagent-tools.js";
import { Subagents, ended } from "./subagents.js";

/** The built capability: the Subagents it runs (tests reach it). */
export interface SubagentsCapability extends Capability {
  readonly subagents: Subagents;
  /** What the parents' chats are shown of their helpers at work. */
  readonly progress: HelperProgress;
}

/** The subagents capability module. */
export const subagentsModule: CapabilityModule<SubagentsCapability> = {
  name: "subagents",
  enabled: (config) => config.subagents.enabled,
  create({ config, store, lanes, clock, logger, workspaceDir, channels, capability }): SubagentsCapability {
    // Built after assignments (registry order): an assignment's results go to its own runner.
    const tasks = capability<AssignmentsCapability>("assignments")?.tasks;
    const subagents = new Subagents({
      config,
      store,
      lanes,
      clock,
      logger,
      workspaceDir,
      ...(tasks
        ? {
            assignmentResults: (key: string) => tasks.resultsArrived(key),
            assignmentWait: (runId: string, until: number) => tasks.helpersAwaited(runId, until),
            ownedByAssignment: isAssignmentSession,
          }
        : {}),
    });
    const progress = new HelperProgress({ store, channels, childPrefix: subagents.childPrefix, logger });
    return {
      subagents,
      progress,
      tools: subagentTools(subagents),
      hooks: [
        {
          // wait_agents: the run ends (yields) here; the results wake it.
          yieldBefore: (turn) => (subagents.takeWaiting(turn.runId) ? "waiting for helpers" : undefined),
        },
        ...(subagents.settings.progress ? [progress.hooks()] : []),
      ],
      commands: [agentsCommand(subagents)],
      stopSession: async (sessionKey) => {
        const n = await subagents.stopChildren(sessionKey);
        if (n > 0) progress.stopped(sessionKey);
        return n === 0 ? undefined : `${n} helper${n === 1 ? "" : "s"}`;
      },
      attach: ({ turns, events }) => {
        subagents.attach(turns, events);
        if (subagents.settings.progress) progress.attach(events);
      },
      start: () => subagents.recover(),
      quiesce: () => subagents.quiesce(),
    };
  },
};

/** `/agents`: this chat's helpers; `/agents stop <id>` stops one. */
function agentsCommand(s: Subagents): ExtraCommand {
  return {
    name: "agents",
    description: "list this chat's helpers (label, state, result); /agents stop <id> stops one",
    async run(args, sessionKey) {
      const children = await s.store.subagents.listForParent(sessionKey);
      const [action, id] = args.split(/\s+/);
      if (action === "stop") {
        const child = children.find((c) => c.id === id);
        if (!child) return `No helper ${id ?? "(no id)"} in this chat. /agents lists them.`;
        if (ended(child)) return `Helper ${child.id} has ended already (${child.state}).`;
        await s.stopChild(child, "stopped by /agents stop");
        return `Stopping helper ${child.id} ("${child.label}").`;
      }
      if (action !== undefined && action !== "")
        return "Usage: /agents lists this chat's helpers; /agents stop <id> stops one.";
      if (children.length === 0) return "No helpers in this chat.";
      const shown = children.slice(-20);
      return [
        `Helpers (${children.filter((c) => !ended(c)).length} running):`,
        ...shown.map((c) => `${c.id} "${c.label}" — ${c.state}${c.error ? `: ${c.error}` : ""}`),
      ].join("\n");
    },
  };
}
