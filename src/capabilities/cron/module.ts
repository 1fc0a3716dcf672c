/**
 * The cron capability: scheduled jobs and wakes (cron.ts) — the config file's jobs synced at
 * start, the scheduler whose runs are turns in the lane queue, and the agent's cron and wake
 * tools. An assignment's wakes run as its runs (the assignments capability, when built).
 */
import type { CronScheduler } from "../../cron/scheduler.js";
import type { AssignmentsCapability } from "../assignments/module.js";
import type { Capability, CapabilityModule } from "../types.js";
import { gatewayCronTools, startCron } from "./cron.js";

/** The built cron: its scheduler, once started (undefined when `cron.enabled` is false). */
export interface CronCapability extends Capability {
  scheduler(): CronScheduler | undefined;
}

/** The cron module. */
export const cronModule: CapabilityModule<CronCapability> = {
  name: "cron",
  create(ctx): CronCapability {
    const { config, store, channels, clock } = ctx;
    let scheduler: CronScheduler | undefined;
    return {
      tools: gatewayCronTools(config, { store, channels, clock }, () => scheduler),
      async start({ turns, events }) {
        const assignments = ctx.capability<AssignmentsCapability>("assignments")?.tasks;
        scheduler = await startCron(config, {
          store,
          lanes: ctx.lanes,
          turns,
          channels,
          metrics: ctx.metrics,
          clock,
          logger: ctx.logger,
          usage: ctx.usage,
          events,
          ...(assignments ? { assignments } : {}),
        });
      },
      quiesce: () => scheduler?.stop(),
      stop: () => scheduler?.stop(),
      scheduler: () => scheduler,
    };
  },
};
