/**
 * A job as people write it — on the CLI, in `cron.jobs` of the config file, or through the
 * agent's `cron_add` tool — checked field by field and turned into what the store keeps: one
 * schedule (`cron` + `tz`, `every`, or `at`), the prompt, the session it runs in, where its
 * answer goes. Every problem is a JobInputError naming the field; nothing is half-made.
 */
import type { ChatTarget } from "../channels/types.js";
import type { JobDelivery, JobSpec, JobSource } from "../store/repos/cron-repo.js";
import {
  MIN_INTERVAL_MS,
  type Schedule,
  ScheduleError,
  checkCron,
  checkFires,
  checkTimezone,
  nextDue,
  parseDuration,
  resolveAt,
} from "./schedule.js";

/** A job as written (all text, as a CLI or a config file gives it). */
export interface JobInput {
  name: string;
  cron?: string | undefined;
  tz?: string | undefined;
  every?: string | undefined;
  at?: string | undefined;
  message: string;
  /** `isolated` (default): a fresh session each run; `main`: the delivery chat's session. */
  session?: "main" | "isolated" | undefined;
  /** `<channel>:<account>:<chat>[:<thread>]`, `last`, or `none` (default `last`). */
  deliver?: string | undefined;
  catchUp?: "one" | "skip" | undefined;
  /** A duration such as `10m` (default 10 minutes). */
  timeout?: string | undefined;
  enabled?: boolean | undefined;
}

/** A job input that cannot be used; `field` names the part at fault. */
export class JobInputError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "JobInputError";
    this.field = field;
  }
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;
const DEFAULT_TIMEOUT_MS = 600_000;

/** What checking a job needs to know. */
export interface JobContext {
  agentId: string;
  source: JobSource;
  now: number;
  /** The timezone a job without `tz` uses (the config's `cron.timezone`, else the machine's). */
  defaultTz: string;
  /** Channel accounts a delivery may name (`telegram:default`, …). */
  channels: ReadonlySet<string>;
}

/** Checks `input`; the job to store and its first slot. Throws JobInputError naming the field. */
export function buildJob(input: JobInput, ctx: JobContext): { spec: JobSpec; nextRunAt: number | null } {
  if (!NAME.test(input.name ?? ""))
    throw new JobInputError(
      "name",
      `"${input.name ?? ""}" is not a job name (letters, digits, - and _; up to 64)`,
    );
  const message = (input.message ?? "").trim();
  if (message === "") throw new JobInputError("message", "a job needs a message (the prompt it runs)");
  const schedule = scheduleOf(input, ctx);
  const timeoutMs = input.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(input.timeout);
  if (timeoutMs === undefined || timeoutMs < 10_000 || timeoutMs > 6 * 3_600_000)
    throw new JobInputError("timeout", `"${input.timeout}" is not a duration between 10s and 6h`);
  const deliver = deliveryOf(input.deliver ?? "last", ctx.channels);
  const sessionMode = input.session ?? "isolated";
  if (sessionMode === "main" && deliver.kind === "none")
    throw new JobInputError(
      "session",
      "main runs in the delivery chat's session: give --deliver a chat or last",
    );
  const spec: JobSpec = {
    agentId: ctx.agentId,
    name: input.name,
    source: ctx.source,
    schedule,
    prompt: message,
    sessionMode,
    deliver,
    catchUp: input.catchUp ?? "one",
    timeoutMs,
    enabled: input.enabled ?? true,
  };
  return { spec, nextRunAt: spec.enabled ? (nextDue(schedule, ctx.now) ?? null) : null };
}

function scheduleOf(input: JobInput, ctx: JobContext): Schedule {
  const given = (["cron", "every", "at"] as const).filter((k) => input[k] !== undefined);
  if (given.length !== 1)
    throw new JobInputError(
      "schedule",
      given.length === 0
        ? "give one of --cron, --every or --at"
        : `give only one of ${given.map((g) => `--${g}`).join(", ")}`,
    );
  const tz = input.tz ?? ctx.defaultTz;
  try {
    checkTimezone(tz);
    if (input.cron !== undefined) {
      checkCron(input.cron);
      checkFires(input.cron.trim(), tz, ctx.now);
      return { kind: "cron", expr: input.cron.trim(), tz };
    }
    if (input.every !== undefined) {
      const everyMs = parseDuration(input.every);
      if (everyMs === undefined)
        throw new ScheduleError("every", `"${input.every}" is not a duration such as 90m`);
      if (everyMs < MIN_INTERVAL_MS)
        throw new ScheduleError("every", `"${input.every}" is below the 1-minute floor`);
      return { kind: "every", everyMs, anchorMs: ctx.now };
    }
    return { kind: "at", atMs: resolveAt(input.at ?? "", tz, ctx.now) };
  } catch (err) {
    if (err instanceof ScheduleError)
      throw new JobInputError(err.field, err.message.slice(err.field.length + 2));
    throw err;
  }
}

/** `<channel>:<account>:<chat>[:<thread>]`, `last` or `none`, checked against the configured channels. */
export function deliveryOf(text: string, channels: ReadonlySet<string>): JobDelivery {
  if (text === "last") return { kind: "last" };
  if (text === "none") return { kind: "none" };
  const [channel, accountId, chatId, threadId, ...rest] = text.split(":");
  if (!channel || !accountId || !chatId || rest.length > 0)
    throw new JobInputError(
      "deliver",
      `"${text}" is not a target (expected <channel>:<account>:<chat>, last or none)`,
    );
  if (!channels.has(`${channel}:${accountId}`))
    throw new JobInputError(
      "deliver",
      `unknown delivery target "${text}": no channel ${channel}:${accountId} is configured${channels.size > 0 ? ` (configured: ${[...channels].join(", ")})` : ""}`,
    );
  const target = { channel, accountId, chatId, ...(threadId ? { threadId } : {}) } as ChatTarget;
  return { kind: "chat", target };
}

/** How a schedule reads in a listing: `cron 0 9 * * 1-5 (Europe/Berlin)`, `every 90m`, `at …`. */
export function describeSchedule(s: Schedule): string {
  switch (s.kind) {
    case "cron":
      return `cron ${s.expr} (${s.tz})`;
    case "every":
      return `every ${formatDuration(s.everyMs)}`;
    case "at":
      return `at ${new Date(s.atMs).toISOString()}`;
  }
}

/** How a delivery reads: `telegram:default:42`, `last`, `none`. */
export function describeDelivery(d: JobDelivery): string {
  if (d.kind !== "chat") return d.kind;
  const t = d.target;
  return [t.channel, t.accountId, t.chatId, ...(t.threadId ? [t.threadId] : [])].join(":");
}

function formatDuration(ms: number): string {
  const m = Math.round(ms / 60_000);
  if (m % 1440 === 0) return `${m / 1440}d`;
  if (m % 60 === 0) return `${m / 60}h`;
  return `${m}m`;
}

/** The timezone of jobs that name none: the configured one (`cron.timezone`), else the machine's. */
export function defaultTimezone(configured: string | undefined): string {
  return configured ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC";
}
