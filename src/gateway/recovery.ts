/**
 * Start-up recovery, before this process takes messages: work whose owner's lease expired is
 * taken over (sends back to `pending`, each counted and logged: it may arrive twice; runs back
 * to `queued`), stale replies are expired, rows left `received` are routed (access control
 * included), and every session with queued messages is scheduled once per message. Replies are
 * sent only once the gateway opens. The same takeover and a sweep of claimable sessions run on
 * the lease keeper's timer, so a dead peer's work is picked up after its leases expire.
 */
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { GatewayMetrics } from "./metrics.js";
import type { OutboxDispatcher } from "./outbox-dispatcher.js";
import type { Router } from "./router.js";
import type { TurnScheduler } from "./turn-scheduler.js";

export interface RecoveryDeps {
  store: Store;
  outbox: Pick<OutboxDispatcher, "expireStale">;
  router: Pick<Router, "route">;
  scheduler: Pick<TurnScheduler, "schedule">;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
}

/** What recovery found. */
export interface Recovered {
  requeued: number;
  rerouted: number;
  /** Sessions with queued messages, each scheduled: their turns start at once. */
  sessions: number;
  expired: number;
  resent: number;
}

/** Runs recovery (see the file header). */
export async function recover(deps: RecoveryDeps): Promise<Recovered> {
  const { store, logger } = deps;
  const { requeued, resent } = await takeOver(deps);
  const expired = await deps.outbox.expireStale();
  let rerouted = 0;
  const perSession = new Map<string, number>();
  for (const record of await store.inbox.listUnfinished()) {
    if (record.state === "received") {
      rerouted++;
      const routed = await deps.router.route(record, false);
      if (routed.status !== "accepted") continue;
    }
    perSession.set(record.sessionKey, (perSession.get(record.sessionKey) ?? 0) + 1);
  }
  for (const [sessionKey, count] of perSession)
    deps.scheduler.schedule(sessionKey, "human", count, "recovery");
  if (requeued > 0 || perSession.size > 0) {
    logger.info({ requeued, rerouted, sessions: perSession.size }, "recovered unfinished messages");
  }
  return { requeued, rerouted, sessions: perSession.size, expired, resent };
}

/**
 * Takes over work whose owner's lease expired (a crashed or stalled gateway): sends left
 * `sending` go back to `pending`, in doubt — each may have reached its chat already, so it is
 * counted in `switchyard_outbox_resent_total` and logged, and a channel that can look its
 * messages up (Slack) checks before sending it again; one that cannot (Telegram) may show it
 * twice — and runs left `running` go back to `queued`. A live owner's work
 * is never touched.
 */
export async function takeOver(
  deps: Pick<RecoveryDeps, "store" | "clock" | "logger" | "metrics">,
): Promise<{ requeued: number; resent: number }> {
  const { store, clock, logger, metrics } = deps;
  const reset = await store.outbox.resetExpired(clock.now());
  for (const row of reset) {
    metrics.outboxResent.inc({ channel: row.target.channel });
    logger.warn(
      { outboxId: row.id, channel: row.target.channel, chatId: row.target.chatId, seq: row.seq },
      "reply chunk was mid-send when its gateway stopped; sending it again (channels that can look their messages up check first; others may show it twice)",
    );
  }
  const requeued = (await store.inbox.requeueExpired(clock.now())).length;
  if (requeued > 0) logger.warn({ requeued }, "took over runs whose gateway stopped; they are redone");
  return { requeued, resent: reset.length };
}

/**
 * Schedules every session with queued messages that this process may claim and has no turn
 * waiting or running for: messages another gateway accepted while this one held the session,
 * work taken over from a dead gateway, turns that found their session busy elsewhere.
 */
export async function scheduleClaimable(
  deps: Pick<RecoveryDeps, "store" | "clock" | "scheduler"> & {
    owner: string;
    lanes: { isBusy(key: string): boolean; pendingCount(key: string): number };
  },
): Promise<number> {
  const { store, clock, lanes } = deps;
  const keys = (await store.inbox.sessionsWithQueued({ owner: deps.owner, now: clock.now() })).filter(
    (key) => !lanes.isBusy(key) && lanes.pendingCount(key) === 0,
  );
  if (keys.length === 0) return 0;
  const wanted = new Set(keys);
  const counts = new Map<string, number>();
  for (const r of await store.inbox.listUnfinished()) {
    if (r.state === "queued" && wanted.has(r.sessionKey))
      counts.set(r.sessionKey, (counts.get(r.sessionKey) ?? 0) + 1);
  }
  for (const [key, count] of counts) deps.scheduler.schedule(key, "human", count, "recovery");
  return counts.size;
}
