/**
 * Facts every node sharing the database agrees on, each set once by whichever node comes
 * first: e.g. the id of the workspace folder the nodes must all see (app/workspace-marker.ts).
 */

/** The cluster's set-once values. */
export interface ClusterRepo {
  /**
   * Records `value` under `key` unless a value is recorded already; resolves the recorded
   * value (this one, or the one that was there). One step: of two nodes claiming at once, both
   * resolve the same value.
   */
  claimValue(key: string, value: string, now: number): Promise<string>;
}
