/**
 * The assignments capability: multi-day work (`/task`, `switchyard task`) carried over bounded
 * runs (assignments.ts): the tools every turn gets (task_start, learn) and those only its runs
 * get, its hooks, its chat commands and the owner's questions. Its runs are woken by the cron
 * capability's wakes, which it pokes when a new one is due.
 */
import type { CronCapability } from "../cron/module.js";
import type { Capability, CapabilityModule } from "../types.js";
import { Assignments } from "./assignments.js";

/** The built assignments: the one Assignments of this gateway. */
export interface AssignmentsCapability extends Capability {
  readonly tasks: Assignments;
}

/** The assignments module. */
export const assignmentsModule: CapabilityModule<AssignmentsCapability> = {
  name: "assignments",
  create({ config, store, workspaceDir, channels, clock, logger, lanes, usage, capability }) {
    const tasks = new Assignments(config, {
      store,
      workspaceDir,
      channels,
      clock,
      logger,
      lanes,
      usage,
      // Looked up at the call: the cron capability is built after this one.
      poke: (dueNow) => {
        const cron = capability<CronCapability>("cron")?.scheduler();
        void (dueNow ? cron?.wakesDue() : cron?.tick());
      },
    });
    return { tasks, commands: tasks.commands(), attach: ({ turns, events }) => tasks.attach(turns, events) };
  },
};
