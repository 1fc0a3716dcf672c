/**
 * The heartbeat, wired: HEARTBEAT.md as its checklist, the turn runner as its turn, beats only
 * in `activeHours`, none behind a busy session, and the `heartbeat_ok` tool by which the agent
 * says "nothing to report" (such a run delivers nothing). Each beat also shows the agent the
 * scheduler's state: failing jobs and the next runs.
 */
import { z } from "zod";
import { defaultTimezone, describeSchedule } from "../../cron/jobs.js";
import { wallTime } from "../../cron/schedule.js";
import type { Tool } from "../../harness/tools/types.js";
import { TtlCache } from "../../util/ttl-cache.js";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../../config/schema.js";
import { type BeatOutcome, HeartbeatScheduler } from "../../cron/heartbeat-scheduler.js";
import type { LaneQueue } from "../../gateway/lanes/lane-queue.js";
import type { TurnRunner } from "../../gateway/turn-runner.js";
import { heartbeatTurn } from "../../gateway/turn-sources.js";
import {
  type HeartbeatCondition,
  heartbeatCondition,
  isHeartbeatChecklistEmpty,
} from "../../harness/heartbeat.js";
import type { Store } from "../../store/types.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";

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
    /** Runs that called heartbeat_ok (see heartbeatTools). */
    acks?: HeartbeatAcks;
  },
): HeartbeatScheduler | undefined {
  const { everyMs, target, ackMaxChars, activeHours } = config.heartbeat;
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
    ...(activeHours
      ? { isActive: (now: number) => withinHours(now, activeHours, activeHours.tz ?? config.cron.timezone) }
      : {}),
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
        heartbeatTurn({
          checklist: await checklist(),
          target: to,
          ackMaxChars,
          ...(deps.acks ? { acknowledged: (runId: string) => deps.acks?.has(runId) === true } : {}),
          status: await schedulerStatus(deps.store, config.agent.id, deps.clock.now()),
        }),
        ctx,
      );
    },
    logger: deps.logger.child({ name: "cron.heartbeat" }),
  });
  scheduler.start();
  return scheduler;
}

/** What `status` shows of the heartbeat: its condition, cadence, next and last beat. */
export interface HeartbeatStatus extends HeartbeatCondition {
  everyMs: number;
  /** Epoch ms; absent when off. */
  nextBeatAt?: number;
  lastBeat?: { at: number; outcome: BeatOutcome };
}

/** The heartbeat's status now (HEARTBEAT.md read afresh). */
export async function heartbeatStatus(
  config: Config,
  scheduler: HeartbeatScheduler | undefined,
  deps: { workspaceDir: string; clock: Clock; usage?: { backgroundPaused(): boolean } },
): Promise<HeartbeatStatus> {
  const { everyMs, activeHours } = config.heartbeat;
  const checklist = await readFile(join(deps.workspaceDir, "HEARTBEAT.md"), "utf8").catch(() => undefined);
  const condition = heartbeatCondition({
    everyMs,
    checklist,
    ...(activeHours
      ? { active: withinHours(deps.clock.now(), activeHours, activeHours.tz ?? config.cron.timezone) }
      : {}),
    spendPaused: deps.usage?.backgroundPaused() === true,
  });
  const next = scheduler?.nextBeatAt;
  const last = scheduler?.lastBeat;
  return {
    ...condition,
    everyMs,
    ...(next !== undefined && condition.state !== "off" ? { nextBeatAt: next } : {}),
    ...(last ? { lastBeat: last } : {}),
  };
}

/** Whether `now` is within `hours` (local to `tz`, default the machine's); end before start spans midnight. */
export function withinHours(
  now: number,
  hours: { start: string; end: string },
  tz: string | undefined,
): boolean {
  const w = wallTime(now, defaultTimezone(tz));
  const m = w.hour * 60 + w.minute;
  const at = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));
  const [start, end] = [at(hours.start), at(hours.end)];
  if (start === end) return true;
  return start < end ? m >= start && m < end : m >= start || m < end;
}

/** What a beat shows of the scheduler: failing jobs and the next runs (empty when there are none). */
async function schedulerStatus(store: Store, agentId: string, now: number): Promise<string> {
  const jobs = (await store.cron.list(agentId)).filter((j) => j.enabled || j.disabledReason);
  if (jobs.length === 0) return "";
  const failing = jobs.filter((j) => j.failing || j.disabledReason);
  const next = jobs
    .filter((j) => j.nextRunAt !== null && j.nextRunAt > now)
    .sort((a, b) => (a.nextRunAt ?? 0) - (b.nextRunAt ?? 0))
    .slice(0, 5);
  const lines = ["--- scheduled jobs ---"];
  for (const j of failing)
    lines.push(
      `FAILING: ${j.name} (${describeSchedule(j.schedule)})${j.disabledReason ? ` — disabled: ${j.disabledReason}` : ""}`,
    );
  for (const j of next) lines.push(`next: ${j.name} at ${new Date(j.nextRunAt ?? 0).toISOString()}`);
  return lines.join("\n");
}

/** The heartbeat runs that called heartbeat_ok, kept an hour. */
export class HeartbeatAcks {
  readonly #acks: TtlCache<string, true>;
  constructor(clock: Clock) {
    this.#acks = new TtlCache({ maxEntries: 1_000, ttlMs: 3_600_000, now: () => clock.now() });
  }
  add(runId: string): void {
    this.#acks.set(runId, true);
  }
  has(runId: string): boolean {
    return this.#acks.has(runId);
  }
}

/** `heartbeat_ok`: in a heartbeat turn, "nothing needs the person's attention"; nothing is sent. */
export function heartbeatTools(acks: HeartbeatAcks, heartbeatSession: string): Tool[] {
  return [
    {
      name: "heartbeat_ok",
      groups: ["schedule"],
      description:
        "In a scheduled heartbeat only: say that nothing needs the person's attention now. Nothing is sent to them. (Do not use it in a conversation.)",
      parameters: z.strictObject({}),
      async run(_args, ctx) {
        if (ctx.sessionKey !== heartbeatSession)
          return {
            content: "error: heartbeat_ok is only for heartbeat turns; answer the person instead",
            isError: true,
          };
        acks.add(ctx.runId);
        return { content: "acknowledged: nothing will be sent for this heartbeat" };
      },
    },
  ];
}
