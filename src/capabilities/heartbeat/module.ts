/**
 * The heartbeat capability: a background turn every `heartbeat.everyMs` following HEARTBEAT.md
 * (heartbeat.ts), the `heartbeat_ok` tool by which such a turn says "nothing to report", and the
 * heartbeat's status for `status`.
 */
import type { HeartbeatScheduler } from "../../cron/heartbeat-scheduler.js";
import type { Capability, CapabilityModule } from "../types.js";
import {
  HeartbeatAcks,
  type HeartbeatStatus,
  heartbeatStatus,
  heartbeatTools,
  startHeartbeat,
} from "./heartbeat.js";

/** The built heartbeat: its scheduler once started (undefined when off) and its status. */
export interface HeartbeatCapability extends Capability {
  /** The heartbeat clock, once intake is open and when `heartbeat.everyMs` is not 0. */
  scheduler(): HeartbeatScheduler | undefined;
  status(): Promise<HeartbeatStatus>;
}

/** The heartbeat module. */
export const heartbeatModule: CapabilityModule<HeartbeatCapability> = {
  name: "heartbeat",
  create({ config, workspaceDir, lanes, store, clock, logger, usage }): HeartbeatCapability {
    const acks = new HeartbeatAcks(clock);
    let scheduler: HeartbeatScheduler | undefined;
    return {
      tools: heartbeatTools(acks, `agent:${config.agent.id}:heartbeat`),
      async start({ turns, resources }) {
        if (config.heartbeat.everyMs === 0) return;
        const duty = {
          start: () => {
            scheduler?.stop();
            scheduler = startHeartbeat(config, {
              workspaceDir,
              lanes,
              turns,
              store,
              clock,
              logger,
              usage,
              acks,
            });
          },
          stop: () => {
            scheduler?.stop();
            scheduler = undefined;
          },
        };
        // In a cluster one node beats: the one holding the heartbeat's lease (another takes over).
        if (resources) await resources.want(`heartbeat:${config.agent.id}`, duty);
        else duty.start();
      },
      quiesce: () => scheduler?.stop(),
      stop: () => scheduler?.stop(),
      scheduler: () => scheduler,
      status: () => heartbeatStatus(config, scheduler, { workspaceDir, clock, usage }),
    };
  },
};
