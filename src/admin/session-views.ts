/**
 * The overview and the session views of the admin API: what runs and waits now (the lanes, live
 * in this process), what the store says about each session, and a session's thread.
 */
import { HttpError } from "../http/server.js";
import { coolingProfiles } from "../gateway/status-snapshot.js";
import { dayStart } from "../harness/models/usage-meter.js";
import type { LaneRow, Overview, SessionDetail, SessionRow } from "./contract.js";
import type { AdminSources } from "./sources.js";
import { threadItems } from "./thread.js";

/** `GET /v1/admin/overview`. */
export async function overview(s: AdminSources): Promise<Overview> {
  const [outbox, sessions] = await Promise.all([s.store.outbox.countByState(), s.store.sessions.count()]);
  const stats = s.lanes.stats();
  const lanes: LaneRow[] = s.lanes.sessions().map((l) => ({
    sessionKey: l.sessionKey,
    running: l.running !== null,
    ...(l.running ? { runningPriority: l.running } : {}),
    queued: l.queued,
  }));
  const today = s.usage?.today() ?? {
    day: new Date(dayStart(s.clock.now())).toISOString().slice(0, 10),
    spendUsd: 0,
    tokens: 0,
  };
  const limits = s.usage?.limits ?? {};
  return {
    ready: s.gateway.ready,
    uptimeMs: s.clock.now() - s.gateway.startedAt,
    model: s.model,
    provider: s.provider,
    simulated: s.simulated,
    channels: s.channels.list().map((c) => {
      const health = s.channels.health(c);
      return {
        name: c.name,
        accountId: c.accountId,
        state: health?.state ?? "ok",
        ...(health?.detail ? { detail: health.detail } : {}),
      };
    }),
    lanes: {
      sessions: lanes,
      running: stats.running,
      pending: stats.pending,
      slots: { busy: s.pool.inUse, total: s.pool.maxConcurrent, reservedForHuman: s.pool.reservedForHuman },
    },
    outbox: { pending: outbox.pending + outbox.sending, dead: outbox.dead },
    spend: {
      ...today,
      ...(limits.dailySpendUsd !== undefined ? { dailySpendUsd: limits.dailySpendUsd } : {}),
      ...(limits.dailySpendHardUsd !== undefined ? { dailySpendHardUsd: limits.dailySpendHardUsd } : {}),
      ...(limits.sessionDailyTokens !== undefined ? { sessionDailyTokens: limits.sessionDailyTokens } : {}),
    },
    sessions,
    cooling: coolingProfiles(s.authProfiles.all(), s.clock.now()).map((c) => ({
      provider: c.provider,
      profileId: c.profileId,
      reason: c.reason,
      until: c.until,
    })),
  };
}

/** A session's state in this process's lanes. */
export function laneState(lanes: AdminSources["lanes"], key: string): SessionRow["state"] {
  const lane = lanes.session(key);
  if (lane?.running) return "running";
  return lane && lane.queued > 0 ? "queued" : "idle";
}

/** `GET /v1/admin/sessions`: most recent activity first; today's tokens from one grouped query. */
export async function sessionRows(s: AdminSources, limit: number): Promise<{ sessions: SessionRow[] }> {
  const [list, tokens] = await Promise.all([
    s.store.sessions.list(limit),
    s.store.usage.summarize({ since: dayStart(s.clock.now()), by: "session" }),
  ]);
  const tokensOf = new Map(tokens.map((r) => [r.key, r.usage.inputTokens + r.usage.outputTokens]));
  const busy = new Map(s.lanes.sessions().map((l) => [l.sessionKey, l]));
  return {
    sessions: list.map((x) => {
      const lane = busy.get(x.sessionKey);
      const state: SessionRow["state"] =
        lane?.running || x.running ? "running" : lane && lane.queued > 0 ? "queued" : "idle";
      return {
        sessionKey: x.sessionKey,
        sessionId: x.sessionId,
        channel: x.channel,
        state,
        lastActivityAt: x.lastActivityAt,
        messages: x.messages,
        tokensToday: tokensOf.get(x.sessionKey) ?? 0,
      };
    }),
  };
}

/** `GET /v1/admin/session?key=`: the session, its current thread (last `limit` events) and runs. */
export async function sessionDetail(s: AdminSources, key: string, limit: number): Promise<SessionDetail> {
  const record = await s.store.sessions.get(key);
  if (!record) throw new HttpError(404, `session "${key}" does not exist (any more)`, "not_found");
  const now = s.clock.now();
  const [events, tokens, recent] = await Promise.all([
    s.store.transcript.tail(key, record.sessionId, limit),
    s.store.usage.sessionTokensSince(key, dayStart(now)),
    s.store.runs.recentOf(key, 50),
  ]);
  const runs = recent.map((r) => ({
    runId: r.runId,
    trigger: r.trigger,
    startedAt: r.startedAt,
    durationMs: r.durationMs,
    outcome: r.outcome,
    tokens: r.usage.inputTokens + r.usage.outputTokens,
    toolCalls: r.toolCalls,
    error: r.error,
  }));
  const thread = threadItems(events);
  return {
    session: {
      sessionKey: key,
      sessionId: record.sessionId,
      channel: record.lastTarget?.channel ?? key.split(":")[2] ?? key,
      state: laneState(s.lanes, key),
      lastActivityAt: events.at(-1)?.createdAt ?? record.updatedAt,
      // As the list counts them (SessionSummary.messages), within the events shown.
      messages: events.filter((e) => e.payload.type === "user" || e.payload.type === "assistant").length,
      tokensToday: tokens,
      model: record.model,
      mode: record.mode,
      createdAt: record.createdAt,
    },
    thread,
    runs,
  };
}
