/**
 * The gateway's graceful stop, in order: intake off and drain, the capabilities, this node's
 * duties and leases given back (so a node taking over never overlaps), its permits, the
 * channels, the server, the models, the store. Each give-back that fails is logged, not thrown:
 * the rest still closes.
 */
import type { Capabilities } from "../capabilities/build.js";
import type { ChannelDirectory } from "../gateway/channel-directory.js";
import type { Gateway } from "../gateway/gateway.js";
import type { HeldSessionWatch } from "../gateway/held-sessions.js";
import type { ClusterPermits } from "../gateway/lanes/cluster-permits.js";
import type { ResourceLeases } from "../gateway/resource-leases.js";
import type { SessionLeases } from "../gateway/session-leases.js";
import type { GatewayHttpServer } from "../http/server.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** What the stop closes, as the composition root built it. */
export interface ShutdownParts {
  owner: string;
  drainTimeoutMs: number;
  capabilities: Pick<Capabilities, "quiesce" | "stop">;
  gateway: Pick<Gateway, "shutdown">;
  leases: Pick<SessionLeases, "stop" | "releaseIdle">;
  heldSessions: Pick<HeldSessionWatch, "stop">;
  resources: Pick<ResourceLeases, "releaseAll">;
  permits: Pick<ClusterPermits, "close"> | undefined;
  channels: Pick<ChannelDirectory, "list">;
  server: Pick<GatewayHttpServer, "close">;
  simulator: { close(): Promise<unknown> } | undefined;
  models: { close(): Promise<unknown> };
  store: Store;
  clock: Clock;
  logger: Logger;
}

/** Stops everything in order (see the file header). */
export async function shutdown(p: ShutdownParts): Promise<void> {
  const { logger } = p;
  p.capabilities.quiesce();
  const { drained } = await p.gateway.shutdown(p.drainTimeoutMs);
  // Aborted turns stop their commands; this ends any a turn no longer waits for, and servers.
  await p.capabilities.stop((name, err) =>
    logger.warn({ err, capability: name }, "a capability did not stop cleanly"),
  );
  p.leases.stop();
  p.heldSessions.stop();
  // Exclusive connections and duties end first, so the node taking them over never overlaps.
  await p.resources.releaseAll();
  await p.leases.releaseIdle().catch((err: unknown) => logger.warn({ err }, "could not give leases back"));
  // Nothing of this process runs any more: what it still holds (a pinned lease) is free now.
  await p.store.leases
    .retireOwner(p.owner, p.clock.now())
    .catch((err: unknown) => logger.warn({ err }, "could not retire this gateway's record"));
  await p.permits
    ?.close()
    .catch((err: unknown) => logger.warn({ err }, "could not give the cluster permits back"));
  for (const channel of p.channels.list()) await channel.stop();
  await p.server.close();
  await p.simulator?.close();
  await p.models.close();
  await p.store.close();
  logger.info({ drained }, "gateway stopped");
}
