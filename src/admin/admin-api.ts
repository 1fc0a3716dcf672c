/**
 * The admin API's reads and actions (`/v1/admin/…`, see contract.ts): each view built from the
 * store and the live gateway, each action done the way the matching chat or CLI command does it
 * and logged with what it changed. Transport-free: admin-routes.ts maps HTTP onto it.
 */
import { HttpError } from "../http/server.js";
import { describeSchedule } from "../cron/jobs.js";
import { nextDue } from "../cron/schedule.js";
import { describeCheck } from "../harness/assignments/contract.js";
import { answerAssignment, cancelAssignment } from "../harness/assignments/assignments.js";
import { AssignmentInputError } from "../harness/assignments/errors.js";
import type { Assignment } from "../store/repos/assignment-repo.js";
import type { AuthProfileState } from "../store/repos/auth-profile-repo.js";
import type { CronJob, CronRun } from "../store/repos/cron-repo.js";
import type { UsageGrouping } from "../store/repos/usage-repo.js";
import { newId } from "../util/ids.js";
import type {
  AccessView,
  ApprovedRow,
  AssignmentDetail,
  AssignmentRow,
  CronJobRow,
  CronRunRow,
  LogLine,
  ModelsView,
  ProfileRow,
  Scheduled,
  UsageRow,
} from "./contract.js";
import { overview, sessionDetail, sessionRows } from "./session-views.js";
import type { AdminSources } from "./sources.js";

const DAY_MS = 86_400_000;

/** 404 naming what is gone. */
function gone(what: string): HttpError {
  return new HttpError(404, `${what} does not exist (any more)`, "not_found");
}

/** Owns nothing but its sources: each method one view or one action of the control page. */
export class AdminApi {
  readonly #s: AdminSources;

  constructor(sources: AdminSources) {
    this.#s = sources;
  }

  /** The sources (the stream reads the same gateway). */
  get sources(): AdminSources {
    return this.#s;
  }

  overview = () => overview(this.#s);
  sessions = (limit: number) => sessionRows(this.#s, limit);
  session = (key: string, limit: number) => sessionDetail(this.#s, key, limit);

  /** Stops the session's running turn and what the capabilities run for it (its helpers). */
  async stop(key: string): Promise<{ stopped: boolean }> {
    if (!(await this.#s.store.sessions.get(key))) throw gone(`session "${key}"`);
    const turn = this.#s.lanes.abortRunning(key, "user_stop");
    const more = (await this.#s.stopMore?.(key)) ?? [];
    this.#log(
      { action: "session.stop", sessionKey: key, stopped: turn, also: more },
      "stopped a session's turn",
    );
    return { stopped: turn || more.length > 0 };
  }

  /** Starts a fresh session id for the key (`/new`): earlier messages stay on disk, unsent. */
  async reset(key: string): Promise<{ sessionId: string }> {
    if (!(await this.#s.store.sessions.get(key))) throw gone(`session "${key}"`);
    const record = await this.#s.store.sessions.reset(key, newId("ses"), this.#s.clock.now());
    this.#log(
      { action: "session.reset", sessionKey: key, sessionId: record.sessionId },
      "started a new session",
    );
    return { sessionId: record.sessionId };
  }

  async scheduled(): Promise<Scheduled> {
    const { store } = this.#s;
    const jobs = await store.cron.list(this.#s.agentId);
    const rows: CronJobRow[] = [];
    for (const job of jobs) rows.push(jobRow(job, (await store.cron.history(job.id, 1))[0]));
    const wakes = (await store.wakes.due(Number.MAX_SAFE_INTEGER, 200)).map((w) => ({
      id: w.id,
      sessionKey: w.sessionKey,
      dueAt: w.dueAt,
      reason: w.reason,
    }));
    const hb = await this.#s.heartbeat?.();
    const beats = (await store.runs.recent(500))
      .filter((r) => r.trigger === "heartbeat")
      .slice(0, 20)
      .map((r) => ({ at: r.startedAt, outcome: r.outcome, durationMs: r.durationMs }));
    return {
      jobs: rows,
      wakes,
      heartbeat: {
        state: hb ? (hb.reason ? `${hb.state}: ${hb.reason}` : hb.state) : "off: no heartbeat",
        everyMs: hb?.everyMs ?? 0,
        nextAt: hb?.nextBeatAt ?? null,
        beats,
      },
    };
  }

  async cronRuns(jobId: number, limit: number): Promise<{ runs: CronRunRow[] }> {
    await this.#job(jobId);
    return { runs: (await this.#s.store.cron.history(jobId, limit)).map(runRow) };
  }

  /** Makes a job due now (enabling it), as `switchyard cron run` does, and starts it. */
  async runNow(jobId: number): Promise<{ queued: true; nextRunAt: number }> {
    const job = await this.#job(jobId);
    const now = this.#s.clock.now();
    if (!(await this.#s.store.cron.update(job.id, { enabled: true, nextRunAt: now }, now)))
      throw gone(`cron job #${jobId}`);
    this.#log({ action: "cron.run", job: job.name, jobId }, "made a cron job due now");
    this.#s.kickScheduler?.();
    return { queued: true, nextRunAt: now };
  }

  async enable(jobId: number, enabled: boolean): Promise<{ job: CronJobRow }> {
    const job = await this.#job(jobId);
    const now = this.#s.clock.now();
    const nextRunAt = enabled ? (nextDue(job.schedule, now) ?? null) : null;
    const patch = { enabled, nextRunAt, disabledReason: null, deliveryFailures: 0 };
    if (!(await this.#s.store.cron.update(job.id, patch, now))) throw gone(`cron job #${jobId}`);
    this.#log(
      { action: enabled ? "cron.enable" : "cron.disable", job: job.name, jobId },
      "changed a cron job",
    );
    this.#s.kickScheduler?.();
    const after = await this.#job(jobId);
    return { job: jobRow(after, (await this.#s.store.cron.history(jobId, 1))[0]) };
  }

  async assignments(): Promise<{ assignments: AssignmentRow[] }> {
    const list = await this.#s.store.assignments.list(this.#s.agentId, { limit: 200 });
    return { assignments: list.map(assignmentRow) };
  }

  async assignment(id: string): Promise<AssignmentDetail> {
    const a = await this.#s.store.assignments.get(id);
    if (!a || a.agentId !== this.#s.agentId) throw gone(`assignment "${id}"`);
    const runs = await this.#s.store.assignments.runs(a.id, 50);
    return {
      assignment: {
        ...assignmentRow(a),
        sessionKey: a.sessionKey,
        contract: a.contract.map(describeCheck),
        items: a.items.map((i) => ({ id: i.id, title: i.title, status: i.status, notes: i.notes })),
        options: a.question?.options ?? [],
        createdAt: a.createdAt,
      },
      runs: runs.map((r) => ({
        runNo: r.runNo,
        runId: r.runId,
        startedAt: r.startedAt,
        endedAt: r.endedAt,
        directive: r.directive,
        reason: r.reason,
        turns: r.turns,
        tokens: r.tokens,
        costUsd: r.costUsd,
      })),
    };
  }

  /** Answers the question the assignment waits on; its run that reads the answer starts now. */
  async answer(id: string, text: string): Promise<{ resumed: true }> {
    await this.#assignmentInput(() =>
      answerAssignment(this.#s.store, this.#s.agentId, id, text, this.#s.clock.now()),
    );
    this.#log({ action: "assignment.answer", assignment: id, chars: text.length }, "answered an assignment");
    this.#s.kickScheduler?.();
    return { resumed: true };
  }

  async cancel(id: string): Promise<{ state: "cancelled" }> {
    await this.#assignmentInput(() =>
      cancelAssignment(this.#s.store, this.#s.agentId, id, this.#s.clock.now()),
    );
    this.#log({ action: "assignment.cancel", assignment: id }, "cancelled an assignment");
    return { state: "cancelled" };
  }

  async models(): Promise<ModelsView> {
    const now = this.#s.clock.now();
    const states = this.#s.authProfiles.all();
    const stored = await this.#s.store.authProfiles.list();
    const seen = new Set(states.map((p) => `${p.provider}/${p.profileId}`));
    for (const p of stored) if (!seen.has(`${p.provider}/${p.profileId}`)) states.push(p);
    return {
      model: this.#s.model,
      provider: this.#s.provider,
      simulated: this.#s.simulated,
      chain: this.#s.chain,
      profiles: states.map((p) => profileRow(p, now)),
    };
  }

  async usage(by: "day" | "model" | "origin", days: number): Promise<{ by: string; rows: UsageRow[] }> {
    const since = this.#s.clock.now() - days * DAY_MS;
    const rows = await this.#s.store.usage.summarize({ since, by: by as UsageGrouping });
    return {
      by,
      rows: rows.map((r) => ({
        key: r.key,
        calls: r.calls,
        inputTokens: r.usage.inputTokens,
        outputTokens: r.usage.outputTokens,
        costUsd: r.costUsd,
      })),
    };
  }

  /** Ends a profile's cooldown, as `switchyard auth reset` does; the router adopts it at once. */
  async resetProfile(provider: string, profileId: string): Promise<{ profile: ProfileRow }> {
    const now = this.#s.clock.now();
    const known = this.#s.authProfiles
      .all()
      .some((p) => p.provider === provider && p.profileId === profileId);
    const state = await this.#s.store.authProfiles.reset(provider, profileId, now);
    if (!state && !known) throw gone(`auth profile "${provider}/${profileId}"`);
    await this.#s.authProfiles.sync();
    const live = this.#s.authProfiles.all().find((p) => p.provider === provider && p.profileId === profileId);
    this.#log({ action: "auth.reset", provider, profile: profileId }, "reset an auth profile's cooldown");
    return { profile: profileRow(live ?? (state as AuthProfileState), now) };
  }

  async access(): Promise<AccessView> {
    const { pairing } = this.#s.store;
    const pending = await pairing.listPending(this.#s.clock.now());
    const approved = (await pairing.listApproved()).map(approvedRow);
    return { pending, approved, policies: this.#s.policies };
  }

  async approve(channel: string, code: string): Promise<{ approved: ApprovedRow }> {
    const sender = await this.#s.store.pairing.approve(
      channel,
      code.trim().toUpperCase(),
      this.#s.clock.now(),
    );
    if (!sender) throw gone(`pairing request ${code} on ${channel} (expired, or approved already)`);
    this.#log({ action: "pairing.approve", channel, senderId: sender.senderId }, "approved a sender");
    return { approved: approvedRow(sender) };
  }

  async deny(channel: string, code: string): Promise<{ denied: true }> {
    if (!(await this.#s.store.pairing.deny(channel, code.trim().toUpperCase())))
      throw gone(`pairing request ${code} on ${channel}`);
    this.#log({ action: "pairing.deny", channel, code }, "denied a pairing request");
    return { denied: true };
  }

  logs(level: string, limit: number): { lines: LogLine[] } {
    return { lines: this.#s.logTail?.lines(level, limit) ?? [] };
  }

  async #job(jobId: number): Promise<CronJob> {
    const job = await this.#s.store.cron.get(jobId);
    if (!job || job.agentId !== this.#s.agentId) throw gone(`cron job #${jobId}`);
    return job;
  }

  /** An assignment step whose refusal (unknown id, not waiting) is the caller's 404 or 409. */
  async #assignmentInput(step: () => Promise<Assignment>): Promise<Assignment> {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof AssignmentInputError)) throw err;
      const status = /no assignment/.test(err.message) ? 404 : 409;
      throw new HttpError(status, err.message, status === 404 ? "not_found" : "conflict");
    }
  }

  /** Every admin write is logged with what it changed. */
  #log(fields: Record<string, unknown>, msg: string): void {
    this.#s.logger.info({ admin: true, ...fields }, `admin: ${msg}`);
  }
}

function jobRow(job: CronJob, last: CronRun | undefined): CronJobRow {
  return {
    id: job.id,
    name: job.name,
    source: job.source,
    schedule: describeSchedule(job.schedule),
    enabled: job.enabled,
    failing: job.failing,
    nextRunAt: job.nextRunAt,
    disabledReason: job.disabledReason ?? null,
    lastRun: last ? runRow(last) : null,
  };
}

function runRow(r: CronRun): CronRunRow {
  return {
    id: r.id,
    jobId: r.jobId,
    scheduledFor: r.scheduledFor,
    state: r.state,
    attempts: r.attempts,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    durationMs: r.durationMs,
    tokens: r.tokens,
    error: r.error,
    note: r.note,
  };
}

function assignmentRow(a: Assignment): AssignmentRow {
  const c = a.checkpoint;
  return {
    id: a.id,
    goal: a.goal,
    state: a.state,
    why: a.stateReason ?? c.lastDirective?.reason ?? null,
    updatedAt: a.updatedAt,
    tokens: c.tokens,
    costUsd: c.costUsd,
    question: a.question && a.question.answer === undefined ? a.question.text : null,
  };
}

function profileRow(p: AuthProfileState, now: number): ProfileRow {
  const cooling = p.cooldownUntil !== null && p.cooldownUntil > now;
  return {
    provider: p.provider,
    profileId: p.profileId,
    state: cooling ? "cooling" : "ok",
    cooldownUntil: cooling ? p.cooldownUntil : null,
    cooldownReason: cooling ? p.cooldownReason : null,
    consecutiveFailures: p.consecutiveFailures,
    lastErrorKind: p.lastErrorKind,
    lastErrorAt: p.lastErrorAt,
    lastUsedAt: p.lastUsedAt,
  };
}

function approvedRow(s: {
  channel: string;
  senderId: string;
  senderName: string;
  approvedAt: number;
}): ApprovedRow {
  return { channel: s.channel, senderId: s.senderId, senderName: s.senderName, approvedAt: s.approvedAt };
}
