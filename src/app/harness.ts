/**
 * The two-level lanes: model-call slots, session lanes with their watchdog, their metrics.
 */
import type { Config } from "../config/schema.js";
import { ClusterPermits } from "../gateway/lanes/cluster-permits.js";
import { ClusterSlotPool } from "../gateway/lanes/cluster-slot-pool.js";
import { GlobalLane } from "../gateway/lanes/global-lane.js";
import { LaneQueue } from "../gateway/lanes/lane-queue.js";
import type { LaneQueueEvent, ModelSlotPool } from "../gateway/lanes/types.js";
import type { GatewayMetrics } from "../gateway/metrics.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** Where the cluster's model-call permits live: the store and this process's owner id. */
export interface LaneCluster {
  store: Store;
  owner: string;
}

/**
 * The slot pool and the lane queue, with their metrics. With `lanes.clusterMaxConcurrent` and
 * `cluster`, each model call also holds one of the cluster's permits (`permits`: close it when
 * the process stops); without, the local pool alone, as before.
 */
export function buildLanes(
  config: Config,
  clock: Clock,
  metrics: GatewayMetrics,
  logger: Logger,
  cluster?: LaneCluster,
) {
  const local = new GlobalLane({
    maxConcurrent: config.lanes.maxConcurrent,
    reservedForHuman: config.lanes.reservedForHuman,
    onWait: (priority, waitedMs) => metrics.slotWait.observe(waitedMs / 1000, { priority }),
  });
  const laneLog = logger.child({ name: "gateway.lanes" });
  const limit = config.lanes.clusterMaxConcurrent;
  const permits =
    limit === undefined || !cluster
      ? undefined
      : new ClusterPermits({
          permits: cluster.store.permits,
          owner: cluster.owner,
          limit,
          reservedForHuman: config.lanes.reservedForHuman,
          ttlMs: config.gateway.leaseTtlMs,
          clock,
          onError: (err, what) => laneLog.warn({ err }, `cluster permits: could not ${what}`),
        });
  const pool: ModelSlotPool = permits ? new ClusterSlotPool(local, permits) : local;
  // Who else follows the lanes (the control page's live stream).
  const laneListeners = new Set<(e: LaneQueueEvent) => void>();
  const lanes = new LaneQueue({
    pool,
    clock,
    progressTimeoutMs: config.agent.progressTimeoutMs,
    onEvent: (e) => {
      for (const listener of laneListeners) listener(e);
      if (e.type === "started") metrics.laneWait.observe(e.waitedMs / 1000, { priority: e.priority });
      else if (e.type === "aborted")
        laneLog.warn({ sessionKey: e.sessionKey, reason: e.reason }, "run aborted");
    },
  });
  registerGauges(metrics, lanes, local);
  // `pool` is this node's slots (status, gauges); with a cluster cap the lanes also take a permit.
  const onLaneEvent = (listener: (e: LaneQueueEvent) => void) => {
    laneListeners.add(listener);
    return () => laneListeners.delete(listener);
  };
  return { pool: local, lanes, permits, onLaneEvent };
}

/** Gauges read at scrape time. */
function registerGauges(metrics: GatewayMetrics, lanes: LaneQueue, pool: GlobalLane): void {
  metrics.gauge("switchyard_queue_depth", "Lane tasks waiting, by priority.", () => {
    const s = lanes.stats();
    return (["human", "normal", "background"] as const).map((p) => [{ priority: p }, s.pending[p]]);
  });
  metrics.gauge("switchyard_runs_in_flight", "Runs holding their session lane.", () => [
    [{}, lanes.stats().running],
  ]);
  metrics.gauge("switchyard_model_slots_in_use", "Global model-call slots in use.", () => [[{}, pool.inUse]]);
  metrics.gauge("switchyard_session_lanes", "Live session lanes.", () => [[{}, lanes.stats().lanes]]);
}
