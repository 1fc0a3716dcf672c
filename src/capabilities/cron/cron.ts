/**
 * Scheduled jobs, wired: the config file's `cron.jobs` upserted by name at start (and config
 * jobs no longer in the file removed), and the scheduler whose runs are turns in the lane queue —
 * a job's own fresh session each run (`isolated`), or the delivery chat's session (`main`) —
 * bounded by the job's timeout, their answers delivered through the outbox like any reply.
 */
import type { Config } from "../../config/schema.js";
import type { Tool } from "../../harness/tools/types.js";
import { cronTools } from "./cron-tools.js";
import { wakeTools } from "./wake-tools.js";
import { type JobInput, JobInputError, buildJob, defaultTimezone } from "../../cron/jobs.js";
import { CronScheduler, type JobOutcome } from "../../cron/scheduler.js";
import type { ChannelDirectory } from "../../gateway/channel-directory.js";
import type { GatewayEvents } from "../../gateway/events.js";
import type { LaneQueue } from "../../gateway/lanes/lane-queue.js";
import type { LaneTaskContext } from "../../gateway/lanes/types.js";
import type { GatewayMetrics } from "../../gateway/metrics.js";
import { groupSessionKey } from "../../gateway/session-key.js";
import type { TurnRunner } from "../../gateway/turn-runner.js";
import { replyRows } from "../../gateway/replies.js";
import { scheduledTurn } from "../../gateway/turn-sources.js";
import type { ChatTarget } from "../../channels/types.js";
import type { CronJob } from "../../store/repos/cron-repo.js";
import type { Wake } from "../../store/repos/wake-repo.js";
import type { Store } from "../../store/types.js";
import type { Clock } from "../../util/clock.js";
import { ConfigError } from "../../util/config-error.js";
import { newId } from "../../util/ids.js";
import type { Logger } from "../../util/logger.js";

/** Deliveries to a gone target after which a job is disabled. */
const MAX_DELIVERY_FAILURES = 3;

/** What the scheduler's wiring needs. */
export interface CronDeps {
  store: Store;
  lanes: LaneQueue;
  turns: TurnRunner;
  channels: ChannelDirectory;
  metrics: GatewayMetrics;
  clock: Clock;
  logger: Logger;
  /** The daily spend cap pauses background work. */
  usage?: { backgroundPaused(): boolean };
  /** Told when the scheduler writes outbox rows itself (a failing job's notice), so they go now. */
  events?: Pick<GatewayEvents, "emit">;
  /** Runs the wakes of assignments' sessions (their runs); other wakes run as plain turns. */
  assignments?: {
    owns(wake: Wake): boolean;
    runWake(wake: Wake, ctx: LaneTaskContext): Promise<void>;
    /** After a start: open assignments whose wake a crash took get one. */
    recover(): Promise<void>;
  };
}

/** Upserts the config file's jobs and removes config jobs it no longer has. Throws ConfigError. */
export async function syncConfigJobs(
  config: Config,
  deps: Pick<CronDeps, "store" | "channels" | "clock">,
): Promise<void> {
  const agentId = config.agent.id;
  const now = deps.clock.now();
  const channels = new Set(deps.channels.hosted().map((c) => `${c.channel}:${c.accountId}`));
  const problems: string[] = [];
  const built = config.cron.jobs.flatMap((input, i) => {
    try {
      return [
        buildJob(input as JobInput, {
          agentId,
          source: "config",
          now,
          defaultTz: defaultTimezone(config.cron.timezone),
          channels,
        }),
      ];
    } catch (err) {
      if (!(err instanceof JobInputError)) throw err;
      problems.push(`cron.jobs.${i}.${err.message}`);
      return [];
    }
  });
  const names = new Set<string>();
  for (const [i, { spec }] of built.entries()) {
    if (names.has(spec.name))
      problems.push(`cron.jobs.${i}.name: "${spec.name}" is used by another job in the file`);
    names.add(spec.name);
    const existing = await deps.store.cron.byName(agentId, spec.name);
    if (existing && existing.source !== "config")
      problems.push(
        `cron.jobs.${i}.name: a ${existing.source} job is already named "${spec.name}" (remove it with switchyard cron rm ${spec.name})`,
      );
  }
  if (problems.length > 0) throw new ConfigError(undefined, problems);
  for (const { spec, nextRunAt } of built) await deps.store.cron.upsertConfig(spec, nextRunAt, now);
  for (const job of await deps.store.cron.list(agentId))
    if (job.source === "config" && !names.has(job.name)) await deps.store.cron.remove(job.id);
}

/** Syncs the config jobs and starts the scheduler (undefined when `cron.enabled` is false). */
export async function startCron(config: Config, deps: CronDeps): Promise<CronScheduler | undefined> {
  await syncConfigJobs(config, deps);
  if (!config.cron.enabled) return undefined;
  const agentId = config.agent.id;
  const log = deps.logger.child({ name: "cron" });
  const scheduler = new CronScheduler({
    store: deps.store,
    lanes: deps.lanes,
    clock: deps.clock,
    logger: log,
    sessionKeyOf: (job) => sessionKeyOf(job, agentId, deps.store),
    runJob: (job, run, ctx, sessionKey) => runJob(job, run.id, ctx, sessionKey, deps, log),
    runWake: (wake, ctx) =>
      deps.assignments?.owns(wake)
        ? deps.assignments.runWake(wake, ctx)
        : deps.turns.run(
            wake.sessionKey,
            scheduledTurn({
              trigger: "wake",
              text: `Wake-up you scheduled (not a message from the person): ${wake.reason}`,
              target: wake.target,
              inChat: true,
            }),
            ctx,
          ),
    onLateStart: () => deps.metrics.cronLateStarts.inc({}),
    onFailing: async (job, error) => {
      // A job disabled because its chat is gone gets no notice there.
      if ((await deps.store.cron.get(job.id))?.enabled === false) return;
      const target = await targetOf(job, deps.store);
      if (!target) return;
      const text = `Scheduled job "${job.name}" keeps failing (${error}); it is marked failing and tries again at its next run. Details: switchyard cron history ${job.name}`;
      const rows = replyRows(deps.channels.channelFor(target), target, text, { kind: "notice" });
      await deps.store.outbox.insert(rows, `agent:${agentId}:cron:${job.id}`, deps.clock.now());
      deps.events?.emit({ type: "replies_committed" });
    },
  });
  await deps.assignments?.recover();
  await scheduler.start();
  return scheduler;
}

/** Where a job's answer goes now: its chat, the last chat that addressed the agent, or nowhere. */
async function targetOf(job: CronJob, store: Store): Promise<ChatTarget | null> {
  if (job.deliver.kind === "chat") return job.deliver.target;
  if (job.deliver.kind === "last") return (await store.sessions.latestTarget()) ?? null;
  return null;
}

/** `isolated`: the job's own session; `main`: the session of the chat it delivers to. */
async function sessionKeyOf(job: CronJob, agentId: string, store: Store): Promise<string> {
  const own = `agent:${agentId}:cron:${job.id}`;
  if (job.sessionMode === "isolated") return own;
  const target = await targetOf(job, store);
  if (!target) return own;
  // A chat that addressed the agent has a session of its own; any other chat is a group's.
  return (await store.sessions.keyForTarget(target)) ?? groupSessionKey(agentId, target);
}

async function runJob(
  job: CronJob,
  ledgerId: number,
  ctx: LaneTaskContext,
  sessionKey: string,
  deps: CronDeps,
  log: Logger,
): Promise<JobOutcome> {
  const { store, clock } = deps;
  if (deps.usage?.backgroundPaused())
    return {
      ok: false,
      transient: true,
      error: "paused: the daily spend cap (limits.dailySpendUsd) is reached",
    };
  if (await deliveryGone(job, deps, log))
    return { ok: false, transient: false, error: "disabled: its chat refused the last 3 answers" };
  const target = await targetOf(job, store);
  if (target && !deps.channels.channelFor(target)) {
    const reason = `delivery target ${target.channel}:${target.accountId}:${target.chatId} is not available`;
    await deliveryFailed(job, reason, deps, log);
    return { ok: false, transient: false, error: reason };
  }
  if (job.sessionMode === "isolated" && (await store.sessions.get(sessionKey)))
    await store.sessions.reset(sessionKey, newId("ses"), clock.now()); // fresh each run
  const timeout = new AbortController();
  const timer = clock.setTimeout(
    () =>
      timeout.abort(new Error(`timed out after ${Math.round(job.timeoutMs / 1000)} s (the job's timeout)`)),
    job.timeoutMs,
    { unref: true },
  );
  let runId: string | undefined;
  const source = scheduledTurn({
    trigger: "cron",
    text: `Scheduled job "${job.name}" (not a message from the person): ${job.prompt}`,
    target,
    inChat: job.sessionMode === "main",
  });
  try {
    await deps.turns.run(
      sessionKey,
      {
        trigger: source.trigger,
        prepare: async (claim) => {
          runId = claim.runId;
          await store.cron.started(ledgerId, claim.runId);
          return source.prepare(claim);
        },
      },
      { ...ctx, signal: AbortSignal.any([ctx.signal, timeout.signal]) },
    );
  } finally {
    clock.clearTimeout(timer);
  }
  const record = runId ? await store.runs.get(runId) : undefined;
  deps.metrics.cronRuns.inc({ outcome: record?.outcome ?? "not_run" });
  if (!record)
    return {
      ok: false,
      transient: true,
      error: "the run did not happen (its session was busy elsewhere, or the gateway stopped)",
    };
  const tokens = record.usage.inputTokens + record.usage.outputTokens;
  if (record.outcome === "answered") return { ok: true, tokens };
  return {
    ok: false,
    transient: true,
    tokens,
    error: `${record.errorKind ?? record.outcome}: ${record.error ?? ""}`.trim(),
  };
}

/** The agent's wake and cron tools for this gateway; a change pokes the scheduler once it runs. */
export function gatewayCronTools(
  config: Config,
  deps: Pick<CronDeps, "store" | "channels" | "clock">,
  scheduler: () => CronScheduler | undefined,
): Tool[] {
  const changed = () => void scheduler()?.tick();
  const defaultTz = () => defaultTimezone(config.cron.timezone);
  return [
    ...wakeTools({ store: deps.store, clock: deps.clock, defaultTz, changed }),
    ...cronTools({
      store: deps.store,
      agentId: config.agent.id,
      clock: deps.clock,
      defaultTz,
      channels: () => new Set(deps.channels.hosted().map((c) => `${c.channel}:${c.accountId}`)),
      changed,
    }),
  ];
}

/**
 * How the job's previous run was delivered: its receipt goes into the ledger; a reply the
 * platform refused for good (the chat deleted, the bot removed) counts, and after 3 such runs in
 * a row the job is disabled with the platform's reason. True when it was disabled now.
 */
async function deliveryGone(job: CronJob, deps: CronDeps, log: Logger): Promise<boolean> {
  const { store, clock } = deps;
  const previous = (await store.cron.history(job.id, 2)).find(
    (r) => r.state === "ok" && r.runId && !r.receipt,
  );
  if (!previous?.runId) return false;
  const rows = await store.outbox.listForRun(previous.runId);
  const sent = rows.find((r) => r.state === "sent" && r.platformMessageId);
  const dead = rows.find((r) => r.state === "dead");
  if (sent?.platformMessageId) {
    await store.cron.setReceipt(previous.id, sent.platformMessageId);
    if (job.deliveryFailures > 0) await store.cron.update(job.id, { deliveryFailures: 0 }, clock.now());
    return false;
  }
  if (!dead) return false;
  await store.cron.setReceipt(previous.id, `undelivered: ${dead.lastError ?? "refused"}`);
  const reason = `its chat refused the answer ${job.deliveryFailures + 1} times (${dead.lastError ?? "refused"})`;
  return deliveryFailed(job, reason, deps, log);
}

/** Counts a failed delivery; the 3rd in a row disables the job with `reason`. True when it did. */
async function deliveryFailed(job: CronJob, reason: string, deps: CronDeps, log: Logger): Promise<boolean> {
  const failures = job.deliveryFailures + 1;
  const disable = failures >= MAX_DELIVERY_FAILURES;
  await deps.store.cron.update(
    job.id,
    disable
      ? { deliveryFailures: failures, enabled: false, disabledReason: reason, nextRunAt: null }
      : { deliveryFailures: failures },
    deps.clock.now(),
  );
  if (disable) log.error({ job: job.name, reason }, "job disabled");
  return disable;
}
