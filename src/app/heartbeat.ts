/** The heartbeat, wired: HEARTBEAT.md as its checklist, the turn runner as its turn. */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config/schema.js";
import { HeartbeatScheduler } from "../cron/heartbeat-scheduler.js";
import type { LaneQueue } from "../gateway/lanes/lane-queue.js";
import type { TurnRunner } from "../gateway/turn-runner.js";
import { heartbeatTurn } from "../gateway/turn-sources.js";
import { isHeartbeatChecklistEmpty } from "../harness/heartbeat.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/**
 * Heartbeats: a background turn in `agent:<id>:heartbeat` every `heartbeat.everyMs`, following
 * HEARTBEAT.md; while that file is missing or holds nothing to act on, no model call is made.
 */
export function startHeartbeat(
  config: Config,
  deps: {
    workspaceDir: string;
    lanes: LaneQueue;
    turns: TurnRunner;
    store: Store;
    clock: Clock;
    logger: Logger;
    /** The daily spend cap pauses background work: a paused tick makes no model call. */
    usage?: { backgroundPaused(): boolean };
  },
): HeartbeatScheduler | undefined {
  const { everyMs, target, ackMaxChars } = config.heartbeat;
  if (everyMs === 0) return undefined;
  const checklistPath = join(deps.workspaceDir, "HEARTBEAT.md");
  const checklist = () => readFile(checklistPath, "utf8").catch(() => "");
  const sessionKey = `agent:${config.agent.id}:heartbeat`;
  let pausedLogged = false;
  const scheduler = new HeartbeatScheduler({
    everyMs,
    sessionKey,
    lanes: deps.lanes,
    clock: deps.clock,
    isIdle: async () => {
      if (deps.usage?.backgroundPaused()) {
        if (!pausedLogged)
          deps.logger.warn("heartbeat paused: the daily spend cap (limits.dailySpendUsd) is reached");
        pausedLogged = true;
        return true;
      }
      pausedLogged = false;
      return isHeartbeatChecklistEmpty(await checklist());
    },
    run: async (ctx) => {
      const to = target === "last" ? ((await deps.store.sessions.latestTarget()) ?? null) : null;
      await deps.turns.run(
        sessionKey,
        heartbeatTurn({ checklist: await checklist(), target: to, ackMaxChars }),
        ctx,
      );
    },
    logger: deps.logger.child({ name: "cron.heartbeat" }),
  });
  scheduler.start();
  return scheduler;
}
