/**
 * What `GET /v1/status` answers (and `switchyard status` prints): readiness, the model and
 * whether it is simulated, lanes and model-call slots, inbox and outbox counts (chat commands
 * and group context apart from refusals), runs, sessions, undelivered replies, channels, the
 * auth profiles that are cooling (a rejected key is a warning), today's spend and the caps, and
 * the heartbeat (on, off or skipped and why, the next beat), and the nodes: every gateway process
 * registered in the store (on this machine or others sharing the database), alive or stale by
 * its last heartbeat, and what each holds.
 */
import { heartbeatFresh } from "./owners.js";
import type { AuthProfileState } from "../store/repos/auth-profile-repo.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { ChannelDirectory } from "./channel-directory.js";
import type { Gateway } from "./gateway.js";
import type { LaneQueue } from "./lanes/lane-queue.js";
import type { ModelSlotPool } from "./lanes/types.js";

/** What the snapshot reads. */
export interface StatusSources {
  store: Store;
  lanes: LaneQueue;
  pool: Pick<ModelSlotPool, "inUse">;
  gateway: Pick<Gateway, "ready" | "startedAt">;
  channels: ChannelDirectory;
  clock: Clock;
  /** The configured model reference and its provider. */
  model: string;
  provider: string;
  simulated: boolean;
  maxConcurrent: number;
  workspaceDir: string;
  /** The live auth-profile health (the store lags it by the write-behind). */
  authProfiles?: { all(): AuthProfileState[] };
  /** The heartbeat's state (on, off or skipped and why, next beat). */
  heartbeat?: () => Promise<object>;
  /** Today's spend and the caps. */
  usage?: { today(): { day: string; spendUsd: number; tokens: number }; readonly limits: object };
  /** This process's owner id and the lease TTL: a node whose heartbeat is older is stale. */
  node?: { owner: string; leaseTtlMs: number };
}

/** A gateway process as status lists it. */
export interface NodeStatus {
  owner: string;
  host: string;
  pid: number;
  startedAt: number;
  heartbeatAt: number | null;
  /** Heartbeat within the lease TTL. */
  alive: boolean;
  /** The process answering this status. */
  self: boolean;
  sessions: number;
  /** The connections and duties only it runs (`channel:telegram:default`, `heartbeat:main`). */
  resources: string[];
  inbox: number;
  outbox: number;
}

/** Every registered gateway process, oldest first, with what it holds at `now`. */
export async function nodeStatuses(
  store: Store,
  now: number,
  leaseTtlMs: number,
  self?: string,
): Promise<NodeStatus[]> {
  const [owners, holdings] = await Promise.all([store.leases.listOwners(), store.leases.ownerHoldings(now)]);
  const held = new Map(holdings.map((h) => [h.owner, h]));
  return owners.map((o) => {
    const h = held.get(o.owner);
    const beat = o.heartbeatAt ?? null;
    return {
      owner: o.owner,
      host: o.host,
      pid: o.pid,
      startedAt: o.startedAt,
      heartbeatAt: beat,
      alive: heartbeatFresh(beat, now, leaseTtlMs),
      self: o.owner === self,
      sessions: h?.sessions ?? 0,
      resources: h?.resources ?? [],
      inbox: h?.inbox ?? 0,
      outbox: h?.outbox ?? 0,
    };
  });
}

/** `nodes     …` lines: a count, then one line per node (only when there is more than one). */
export function nodeLines(nodes: readonly NodeStatus[], now: number): string[] {
  if (nodes.length === 0) return [];
  const alive = nodes.filter((n) => n.alive).length;
  const head = `nodes     ${nodes.length} registered: ${alive} alive, ${nodes.length - alive} stale (no heartbeat within gateway.leaseTtlMs)`;
  if (nodes.length === 1) return [head];
  return [
    head,
    ...nodes.map((n) => {
      const beat =
        n.heartbeatAt === null ? "never" : `${Math.max(0, Math.round((now - n.heartbeatAt) / 1000))} s ago`;
      return `  ${n.alive ? "alive" : "stale"} ${n.owner}${n.self ? " (this one)" : ""} on ${n.host} pid ${n.pid}: heartbeat ${beat}; holds ${n.sessions} sessions, ${n.inbox} running messages, ${n.outbox} sending replies${n.resources.length > 0 ? `; runs ${n.resources.join(", ")}` : ""}`;
    }),
  ];
}

/** The caps `limits:` may set, as status and /status show them. */
export interface SpendCaps {
  dailySpendUsd?: number | undefined;
  dailySpendHardUsd?: number | undefined;
  sessionDailyTokens?: number | undefined;
}

/** Today's spend against the caps, one phrase: `$0.42, 12,345 tokens; caps: …` (the chat's /status and `switchyard status`). */
export function spendSummary(spend: { spendUsd: number; tokens: number }, limits: SpendCaps): string {
  const caps = [
    limits.dailySpendUsd !== undefined
      ? `background pauses at $${limits.dailySpendUsd.toFixed(2)}`
      : undefined,
    limits.dailySpendHardUsd !== undefined
      ? `everything stops at $${limits.dailySpendHardUsd.toFixed(2)}`
      : undefined,
    limits.sessionDailyTokens !== undefined
      ? `${limits.sessionDailyTokens.toLocaleString("en-US")} tokens per session`
      : undefined,
  ].filter(Boolean);
  return `$${spend.spendUsd.toFixed(2)}, ${spend.tokens.toLocaleString("en-US")} tokens${caps.length > 0 ? `; caps: ${caps.join(", ")}` : "; no daily cap"}`;
}

/** The auth profiles cooling now, for status (a profile that never failed has no state). */
export function coolingProfiles(states: readonly AuthProfileState[], now: number) {
  return states
    .filter((p) => (p.cooldownUntil ?? 0) > now)
    .map((p) => ({
      provider: p.provider,
      profileId: p.profileId,
      reason: p.cooldownReason,
      until: p.cooldownUntil,
      failures: p.consecutiveFailures,
    }));
}

/** One line per cooling profile; a rejected key or an empty account says what to do. */
export function coolingLines(cooling: ReturnType<typeof coolingProfiles>, now: number): string[] {
  return cooling.map((p) => {
    const mins = Math.ceil(((p.until ?? now) - now) / 60_000);
    const advice =
      p.reason === "auth"
        ? " — WARNING: the key was rejected; fix it, then switchyard auth reset"
        : p.reason === "billing"
          ? " — WARNING: out of credit or quota"
          : "";
    return `auth      ${p.provider}:${p.profileId} cooling ${mins} min more (${p.reason}, ${p.failures} failures in a row)${advice}`;
  });
}

/** The status body (see the file header). */
export async function statusSnapshot(s: StatusSources) {
  const { store } = s;
  const [inboxStates, rejected, outbox, runs, dead] = await Promise.all([
    store.inbox.countByState(),
    store.inbox.countRejected(),
    store.outbox.countByState(),
    store.runs.countByOutcome(),
    store.outbox.listByState("dead", 20),
  ]);
  // `rejected` is split by why: a chat command or group context is not a refusal.
  const { rejected: _rejected, ...unsplit } = inboxStates;
  return {
    ready: s.gateway.ready,
    uptimeMs: s.clock.now() - s.gateway.startedAt,
    model: s.model,
    provider: s.provider,
    simulated: s.simulated,
    workspace: s.workspaceDir,
    lanes: { ...s.lanes.stats(), slotsInUse: s.pool.inUse, maxConcurrent: s.maxConcurrent },
    inbox: { ...unsplit, ...rejected },
    outbox,
    runs,
    sessions: await store.sessions.count(),
    deadReplies: dead.map((r) => ({
      id: r.id,
      channel: r.target.channel,
      chatId: r.target.chatId,
      attempts: r.attempts,
      error: r.lastError,
      text: r.text.slice(0, 80),
    })),
    channels: s.channels
      .list()
      .map((c) => ({ name: c.name, accountId: c.accountId, ...s.channels.health(c) })),
    auth: {
      cooling: coolingProfiles(s.authProfiles?.all() ?? (await store.authProfiles.list()), s.clock.now()),
    },
    ...(s.usage ? { spend: { ...s.usage.today(), limits: s.usage.limits } } : {}),
    ...(s.heartbeat ? { heartbeat: await s.heartbeat() } : {}),
    ...(s.node ? { nodes: await nodeStatuses(store, s.clock.now(), s.node.leaseTtlMs, s.node.owner) } : {}),
  };
}
