/**
 * The scheduler: one timer that sleeps until the earliest due slot or retry of any job (read
 * from the store's index, never by scanning jobs), then claims each due slot in the run ledger
 * (one insert per slot: a restart or a second gateway never runs it twice) and enqueues it as
 * background work in the lane queue, so a person is never kept waiting behind it. After
 * downtime a job runs once for all the slots it missed (`catchUp: one`) or records them skipped
 * (`catchUp: skip`). Failures are retried with backoff (30 s, 1 m, 5 m, 15 m, 60 m; a one-shot
 * 3 times); then the job is marked failing. Jobs changed by another process (the CLI) are
 * picked up within `reloadMs` by watching the store's job version.
 */
import type { LaneQueue } from "../gateway/lanes/lane-queue.js";
import type { LaneTaskContext } from "../gateway/lanes/types.js";
import type { CronJob, CronRun } from "../store/repos/cron-repo.js";
import type { Wake } from "../store/repos/wake-repo.js";
import type { Store } from "../store/types.js";
import { type Clock, systemClock, type TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { nextDue } from "./schedule.js";

/** Backoff between attempts of a failed slot. */
export const RETRY_BACKOFF_MS = [30_000, 60_000, 300_000, 900_000, 3_600_000] as const;
/** Transient failures a one-shot job retries. */
const ONE_SHOT_RETRIES = 3;
/** A due slot later than this is a misfire (the gateway was down or asleep). */
export const MISFIRE_MS = 60_000;

/** How one attempt of a job ended. */
export type JobOutcome =
  | { ok: true; tokens: number; receipt?: string }
  | { ok: false; error: string; transient: boolean; tokens?: number };

/** Options of {@link CronScheduler}. */
export interface CronSchedulerOptions {
  store: Pick<Store, "cron" | "wakes" | "runs">;
  lanes: Pick<LaneQueue, "enqueue">;
  /** Runs one attempt of a job's slot inside its lane (the turn), bounded by `job.timeoutMs`. */
  runJob(job: CronJob, run: CronRun, ctx: LaneTaskContext, sessionKey: string): Promise<JobOutcome>;
  /** Runs a wake the agent queued (its session, its reason as the prompt); absent: wakes wait. */
  runWake?(wake: Wake, ctx: LaneTaskContext): Promise<void>;
  /** The session a job's runs go to. */
  sessionKeyOf(job: CronJob): string | Promise<string>;
  logger: Logger;
  clock?: Clock;
  /** How often the job version is checked for changes from another process (default 5 s). */
  reloadMs?: number;
  /** A job has just been marked failing (its retries are spent): tell its owner, once. */
  onFailing?(job: CronJob, error: string): Promise<void>;
  /** A slot that started this late after its time is logged and counted. */
  onLateStart?(job: CronJob, lateMs: number): void;
}

/** Runs due jobs (see the file header). */
export class CronScheduler {
  readonly #o: CronSchedulerOptions;
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  /** When the armed timer fires. */
  #dueAt = 0;
  #stopped = true;
  #version = -1;
  #ticking: Promise<void> = Promise.resolve();
  readonly #inflight = new Set<Promise<unknown>>();
  /** Ledger rows the watchdog reported (their turn had not started a minute after the claim). */
  readonly #waiting = new Set<number>();

  constructor(options: CronSchedulerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Recovers attempts a stopped process left running, then arms the timer. */
  async start(): Promise<void> {
    if (!this.#stopped) return;
    this.#stopped = false;
    await this.#recover();
    await this.tick(); // slots missed while down, retries due; then it arms the timer
  }

  /** No more ticks; attempts already enqueued still run (the lane queue owns them). */
  stop(): void {
    this.#stopped = true;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Resolves when every attempt enqueued so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    await this.#ticking;
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  /** Checks for due work now (also what the timer does). Never throws. */
  tick(): Promise<void> {
    this.#ticking = this.#ticking
      .then(() => this.#tick())
      .catch((err: unknown) => {
        this.#o.logger.error({ err }, "scheduler tick failed");
      });
    return this.#ticking;
  }

  /**
   * Runs the wakes due now, without the jobs' part of a tick (an assignment's next run, queued
   * at once, takes the shorter way). The timer keeps its time. Never throws.
   */
  wakesDue(): Promise<void> {
    this.#ticking = this.#ticking
      .then(async () => {
        if (this.#stopped || !this.#o.runWake) return;
        const now = this.#clock.now();
        for (const wake of await this.#o.store.wakes.due(now, 100)) await this.#fireWake(wake, now);
      })
      .catch((err: unknown) => {
        this.#o.logger.error({ err }, "scheduler wake check failed");
      });
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    const { store } = this.#o;
    const now = this.#clock.now();
    this.#version = await store.cron.version();
    for (const [i, job] of (await store.cron.due(now, 100)).entries()) {
      // Let intake and slot grants run between claims: a storm of due jobs never stalls the loop.
      if (i % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
      await this.#fire(job, now);
    }
    for (const run of await store.cron.dueRetries(now, 100)) {
      const job = await store.cron.get(run.jobId);
      const claimed = job?.enabled ? await store.cron.claimRetry(run.id, now) : undefined;
      if (job && claimed) await this.#enqueue(job, claimed);
    }
    if (this.#o.runWake) for (const wake of await store.wakes.due(now, 100)) await this.#fireWake(wake, now);
    await this.#watchdog(now);
    const next = await this.#nextDue();
    this.#schedule(next === undefined ? Number.POSITIVE_INFINITY : next - this.#clock.now());
  }

  /**
   * Slots claimed over a minute ago whose turn has not started (the lanes are full, a session is
   * held elsewhere): logged and counted once each, so a stuck queue is seen before it clears.
   */
  async #watchdog(now: number): Promise<void> {
    for (const run of await this.#o.store.cron.staleRunning(now - MISFIRE_MS)) {
      if (run.runId !== null || this.#waiting.has(run.id)) continue;
      this.#waiting.add(run.id);
      if (this.#waiting.size > 10_000) this.#waiting.clear();
      const job = await this.#o.store.cron.get(run.jobId);
      if (!job) continue;
      this.#o.logger.warn(
        { job: job.name, slot: run.scheduledFor },
        "a due run has not started within a minute (watchdog)",
      );
      this.#o.onLateStart?.(job, now - run.scheduledFor);
    }
  }

  /** The soonest job slot, retry or wake. */
  async #nextDue(): Promise<number | undefined> {
    const job = await this.#o.store.cron.nextWake();
    const wake = this.#o.runWake ? await this.#o.store.wakes.nextDue() : undefined;
    if (job === undefined) return wake;
    return wake === undefined ? job : Math.min(job, wake);
  }

  /** Claims a due wake (once, across processes) and runs its session as background work. */
  async #fireWake(wake: Wake, now: number): Promise<void> {
    const claimed = await this.#o.store.wakes.claim(wake.id, now);
    const run = this.#o.runWake;
    if (!claimed || !run) return;
    const handle = this.#o.lanes.enqueue({
      sessionKey: claimed.sessionKey,
      priority: "background",
      origin: "wake",
      coalesceKey: `wake:${claimed.id}`,
      run: (ctx) => run(claimed, ctx),
    });
    this.#track(handle.done, { wake: claimed.id }, "wake did not finish");
  }

  /** Keeps an enqueued task's end for `idle()`; a failure is logged, never left unhandled. */
  #track(done: Promise<unknown>, fields: Record<string, unknown>, failed: string): void {
    const settled = done.catch((err: unknown) => this.#o.logger.warn({ err, ...fields }, failed));
    this.#inflight.add(settled);
    void settled.finally(() => this.#inflight.delete(settled));
  }

  /** Claims the slot a due job is at (or, after downtime, the one slot for all it missed). */
  async #fire(job: CronJob, now: number): Promise<void> {
    const slot = job.nextRunAt as number;
    const after = nextDue(job.schedule, now) ?? null;
    const late = now - slot > MISFIRE_MS;
    let missed = 0;
    let last = slot;
    if (late) {
      // Every slot from the one due up to now: the last of them stands for all.
      for (
        let s: number | undefined = slot;
        s !== undefined && s <= now && missed < 100_000;
        s = nextDue(job.schedule, s)
      ) {
        last = s;
        missed++;
      }
    }
    if (late && job.catchUp === "skip") {
      await this.#o.store.cron.recordSkipped(
        job.id,
        last,
        "skipped",
        `${missed} slot(s) missed while the gateway was down (catchUp: skip)`,
        after,
        now,
      );
      this.#o.logger.info({ job: job.name, missed }, "missed slots skipped");
      return;
    }
    const run = await this.#o.store.cron.claimSlot(job.id, last, after, now);
    if (!run) return; // another process (or an earlier tick) claimed it
    if (late) this.#o.logger.info({ job: job.name, missed }, "running once for the slots missed while down");
    await this.#enqueue(job, run);
  }

  async #enqueue(job: CronJob, run: CronRun): Promise<void> {
    const sessionKey = await this.#o.sessionKeyOf(job);
    const handle = this.#o.lanes.enqueue({
      sessionKey,
      priority: "background",
      origin: "cron",
      coalesceKey: `cron:${job.id}:${run.id}`,
      run: (ctx) => this.#attempt(job, run, ctx, sessionKey),
    });
    this.#track(handle.done, { job: job.name }, "scheduled run did not finish");
  }

  async #attempt(job: CronJob, run: CronRun, ctx: LaneTaskContext, sessionKey: string): Promise<void> {
    const { store, logger } = this.#o;
    const startedAt = this.#clock.now();
    const lateMs = startedAt - (run.retryAt ?? run.scheduledFor);
    if (lateMs > MISFIRE_MS && run.attempts === 1 && !this.#waiting.delete(run.id)) {
      logger.warn({ job: job.name, lateMs }, "scheduled run started over a minute late (watchdog)");
      this.#o.onLateStart?.(job, lateMs);
    }
    let outcome: JobOutcome;
    try {
      outcome = await this.#o.runJob(job, run, ctx, sessionKey);
    } catch (err) {
      outcome = { ok: false, error: err instanceof Error ? err.message : String(err), transient: true };
    }
    const durationMs = this.#clock.now() - startedAt;
    const now = this.#clock.now();
    if (outcome.ok) {
      await store.cron.finish(
        run.id,
        {
          state: "ok",
          durationMs,
          tokens: outcome.tokens,
          ...(outcome.receipt ? { receipt: outcome.receipt } : {}),
        },
        now,
      );
      if (job.failing || job.consecutiveFailures > 0)
        await store.cron.update(job.id, { failing: false, consecutiveFailures: 0 }, now);
      return;
    }
    const retries = job.schedule.kind === "at" ? ONE_SHOT_RETRIES : RETRY_BACKOFF_MS.length;
    const backoff = RETRY_BACKOFF_MS[Math.min(run.attempts - 1, RETRY_BACKOFF_MS.length - 1)] as number;
    if (outcome.transient && run.attempts <= retries) {
      const retryAt = now + backoff;
      await store.cron.finish(
        run.id,
        {
          state: "retry",
          durationMs,
          error: outcome.error,
          retryAt,
          ...(outcome.tokens ? { tokens: outcome.tokens } : {}),
        },
        now,
      );
      logger.warn(
        { job: job.name, attempt: run.attempts, retryInMs: backoff, err: outcome.error },
        "scheduled run failed; retrying",
      );
      this.#schedule(backoff);
      return;
    }
    await store.cron.finish(run.id, { state: "failed", durationMs, error: outcome.error }, now);
    const current = await store.cron.get(job.id);
    await store.cron.update(
      job.id,
      { failing: true, consecutiveFailures: (current?.consecutiveFailures ?? 0) + 1 },
      now,
    );
    logger.error(
      { job: job.name, attempts: run.attempts, err: outcome.error },
      "scheduled run failed; the job is marked failing",
    );
    if (!current?.failing)
      await this.#o
        .onFailing?.(job, outcome.error)
        .catch((err: unknown) =>
          logger.warn({ err, job: job.name }, "could not tell the owner the job is failing"),
        );
  }

  /** Attempts left `running` by a process that stopped: retried like a transient failure. */
  async #recover(): Promise<void> {
    const { store, logger } = this.#o;
    const now = this.#clock.now();
    for (const run of await store.cron.staleRunning(now)) {
      const job = await store.cron.get(run.jobId);
      // Another gateway on this store may still be running it: only a run past its timeout is ours to redo.
      if (job && now - (run.startedAt ?? now) < job.timeoutMs) continue;
      // Its turn was committed before the stop (only the ledger's last write was lost): done.
      const committed = run.runId ? await store.runs.get(run.runId) : undefined;
      if (committed) {
        const ok = committed.outcome === "answered";
        await store.cron.finish(
          run.id,
          {
            state: ok ? "ok" : "failed",
            durationMs: committed.durationMs,
            tokens: committed.usage.inputTokens + committed.usage.outputTokens,
            ...(ok ? {} : { error: committed.error ?? committed.outcome }),
          },
          now,
        );
        continue;
      }
      const retryAt = now;
      await store.cron.finish(
        run.id,
        { state: "retry", durationMs: 0, error: "interrupted: the gateway stopped during the run", retryAt },
        now,
      );
      logger.warn(
        { job: job?.name, slot: run.scheduledFor },
        "scheduled run was interrupted; running it again",
      );
    }
  }

  /** Arms the timer `delayMs` from now, capped at the reload interval (to see other processes' changes). */
  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    const reloadMs = this.#o.reloadMs ?? 5_000;
    const wait = Math.max(0, Math.min(delayMs, reloadMs));
    const dueAt = this.#clock.now() + wait;
    if (this.#timer && this.#dueAt <= dueAt) return;
    this.#clock.clearTimeout(this.#timer);
    this.#dueAt = dueAt;
    this.#timer = this.#clock.setTimeout(
      () => {
        this.#timer = undefined;
        void this.#wake(delayMs <= reloadMs);
      },
      wait,
      { unref: true },
    );
  }

  /** The timer: work is due, or it is time to look for changes made elsewhere. */
  async #wake(due: boolean): Promise<void> {
    if (this.#stopped) return;
    if (!due) {
      const version = await this.#o.store.cron.version().catch(() => this.#version);
      const next = await this.#nextDue().catch(() => undefined);
      if (version === this.#version && (next === undefined || next > this.#clock.now())) {
        this.#schedule(next === undefined ? Number.POSITIVE_INFINITY : next - this.#clock.now());
        return;
      }
    }
    await this.tick();
  }
}
