/**
 * The model-call pool when `lanes.clusterMaxConcurrent` is set: this process's GlobalLane
 * slot first (`lanes.maxConcurrent`, per node), then a cluster permit (ClusterPermits); the
 * call holds both and gives both back together.
 */
import type { ClusterPermits } from "./cluster-permits.js";
import type { LanePriority, ModelSlotPool, SlotLease } from "./types.js";

/**
 * A {@link ModelSlotPool} over a local pool and the cluster's permits. Owns neither: it pairs
 * one lease of each per model call. Without a cluster cap the gateway uses the local pool
 * alone, so no store query is on the hot path.
 */
export class ClusterSlotPool implements ModelSlotPool {
  readonly #local: ModelSlotPool;
  readonly #cluster: ClusterPermits;

  constructor(local: ModelSlotPool, cluster: ClusterPermits) {
    this.#local = local;
    this.#cluster = cluster;
  }

  /** Local slots in use (each held call, and each call waiting for its cluster permit). */
  get inUse(): number {
    return this.#local.inUse;
  }

  /** Calls waiting for a local slot or for a cluster permit, per priority. */
  waiting(): Record<LanePriority, number> {
    const local = this.#local.waiting();
    const cluster = this.#cluster.waiting();
    return {
      human: local.human + cluster.human,
      normal: local.normal + cluster.normal,
      background: local.background + cluster.background,
    };
  }

  /**
   * Takes a local slot, then a cluster permit at the same priority. Rejects with the signal's
   * reason if it aborts during either wait; the local slot is then given back.
   */
  async acquire(priority: LanePriority, signal: AbortSignal): Promise<SlotLease> {
    const local = await this.#local.acquire(priority, signal);
    let permit: SlotLease;
    try {
      permit = await this.#cluster.acquire(priority, signal);
    } catch (err) {
      local.release();
      throw err;
    }
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        permit.release();
        local.release();
      },
    };
  }
}
