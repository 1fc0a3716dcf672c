/**
 * `switchyard cron add|list|show|edit|rm|enable|disable|run|history`: the owner's side of the
 * scheduler. It writes the shared database, so a running gateway picks a change up within a few
 * seconds, without a restart. Jobs from the config file's `cron.jobs` are listed but not changed
 * here (the CLI says where they live). Bad input: one line naming the field, exit 2, nothing stored.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { UnknownIdError, UsageError, parseOrUsage, runSubcommand, subcommandHome } from "./subcommand.js";
import { channelModules } from "../channels/registry.js";
import { configuredAccounts } from "../cron/config-channels.js";
import {
  type JobInput,
  JobInputError,
  buildJob,
  defaultTimezone,
  describeDelivery,
  describeSchedule,
} from "../cron/jobs.js";
import { nextDue } from "../cron/schedule.js";
import type { CronJob } from "../store/repos/cron-repo.js";
import { StoreError } from "../store/store-error.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";

/** The one usage line printed after a bad option or action. */
const USAGE_LINE = `usage: switchyard cron add|list|show|edit|rm|enable|disable|run|history [<name>] [options] (switchyard cron help: the options)`;

const USAGE = `usage: switchyard cron <action> [options]

  add      --name N (--cron "EXPR" [--tz ZONE] | --every 90m | --at "in 20m"|"tomorrow 9:00"|ISO)
           --message TEXT [--deliver <channel>:<account>:<chat> | last | none]
           [--session isolated|main] [--catch-up one|skip] [--timeout 10m] [--disabled]
  list     every job, its schedule, next run and state
  show     <name>: one job and its last runs
  edit     <name> with any add option: change it
  rm       <name>
  enable   <name>  /  disable <name>
  run      <name>: run it now (the running gateway starts it within a few seconds)
  history  <name> [--limit N]: its runs, newest first
`;

const FLAGS = {
  name: { type: "string" },
  cron: { type: "string" },
  tz: { type: "string" },
  every: { type: "string" },
  at: { type: "string" },
  message: { type: "string" },
  deliver: { type: "string" },
  session: { type: "string" },
  "catch-up": { type: "string" },
  timeout: { type: "string" },
  disabled: { type: "boolean" },
  limit: { type: "string" },
  json: { type: "boolean", default: false },
  config: { type: "string" },
  home: { type: "string" },
} as const;

/** Runs `switchyard cron …` (argv after `cron`); resolves with the exit code. */
export async function runCron(argv: string[]): Promise<number> {
  return runSubcommand("cron", () => cron(argv), [JobInputError]);
}

async function cron(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseOrUsage(
    () => parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true }),
    USAGE_LINE,
  );
  const [action, target, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const { config, file, home } = subcommandHome(
    "cron",
    v,
    action === undefined || action === "list" || action === "show" || action === "history",
  );
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  const agentId = config.agent.id;
  const now = Date.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const ctx = {
    agentId,
    source: "cli" as const,
    now,
    defaultTz: defaultTimezone(config.cron.timezone),
    channels: configuredAccounts(config, channelModules),
  };
  const find = async (name: string | undefined): Promise<CronJob> => {
    if (!name) throw new UsageError(`${action} needs a job name (see switchyard cron list)`);
    const job =
      (await store.cron.byName(agentId, name)) ??
      (/^\d+$/.test(name) ? await store.cron.get(Number(name)) : undefined);
    if (!job) throw new UnknownIdError(name, `no job named "${name}" (see switchyard cron list)`);
    return job;
  };
  const editable = (job: CronJob): CronJob => {
    if (job.source === "config")
      throw new UsageError(
        `job "${job.name}" is defined in the config file${file ? ` (${file})` : ""} under cron.jobs: change it there`,
      );
    return job;
  };
  const input = (base: Partial<JobInput> = {}): JobInput => {
    const session = v.session ?? base.session;
    if (session !== undefined && session !== "main" && session !== "isolated")
      throw new JobInputError("session", `"${session}" is not isolated or main`);
    const catchUp = v["catch-up"] ?? base.catchUp;
    if (catchUp !== undefined && catchUp !== "one" && catchUp !== "skip")
      throw new JobInputError("catch-up", `"${catchUp}" is not one or skip`);
    const when = v.cron !== undefined || v.every !== undefined || v.at !== undefined;
    return {
      name: v.name ?? base.name ?? "",
      message: v.message ?? base.message ?? "",
      ...(when
        ? { cron: v.cron, every: v.every, at: v.at }
        : { cron: base.cron, every: base.every, at: base.at }),
      tz: v.tz ?? base.tz,
      deliver: v.deliver ?? base.deliver,
      session,
      catchUp,
      timeout: v.timeout ?? base.timeout,
      enabled: v.disabled === true ? false : base.enabled,
    };
  };
  try {
    switch (action) {
      case "add": {
        const { spec, nextRunAt } = buildJob(input(), ctx);
        try {
          const job = await store.cron.add(spec, nextRunAt, now);
          out(
            `added job "${job.name}" (#${job.id}): ${describeSchedule(job.schedule)}, next run ${when(job.nextRunAt)}, delivers to ${describeDelivery(job.deliver)}`,
          );
        } catch (err) {
          if (err instanceof StoreError && err.code === "conflict")
            throw new JobInputError("name", `a job named "${spec.name}" already exists`);
          throw err;
        }
        return 0;
      }
      case "list":
      case undefined: {
        const jobs = await store.cron.list(agentId);
        if (v.json) out(JSON.stringify(jobs, null, 2));
        else if (jobs.length === 0) out("no jobs (add one with switchyard cron add)");
        else for (const job of jobs) out(line(job));
        return 0;
      }
      case "show":
      case "history": {
        const limit = Number(v.limit ?? (action === "show" ? 5 : 20));
        if (!Number.isInteger(limit) || limit < 1)
          throw new JobInputError("limit", `"${v.limit}" is not a whole number of runs of 1 or more`);
        const job = await find(target);
        const runs = await store.cron.history(job.id, limit);
        if (v.json) out(JSON.stringify(action === "show" ? { job, runs } : runs, null, 2));
        else {
          if (action === "show") {
            out(line(job));
            out(`  message: ${job.prompt}`);
            out(
              `  session: ${job.sessionMode}, catch-up: ${job.catchUp}, timeout: ${Math.round(job.timeoutMs / 1000)} s, source: ${job.source}`,
            );
          }
          if (runs.length === 0) out("  no runs yet");
          for (const r of runs)
            out(
              `  ${new Date(r.scheduledFor).toISOString()}  ${r.state}${r.attempts > 1 ? ` after ${r.attempts} attempts` : ""}${r.durationMs !== null ? `, ${(r.durationMs / 1000).toFixed(1)} s` : ""}${r.tokens ? `, ${r.tokens} tokens` : ""}${r.error ? ` — ${r.error}` : ""}${r.note ? ` (${r.note})` : ""}`,
            );
        }
        return 0;
      }
      case "edit": {
        const changes = [
          "name",
          "message",
          "cron",
          "every",
          "at",
          "tz",
          "deliver",
          "session",
          "catch-up",
          "timeout",
          "disabled",
        ];
        if (!changes.some((k) => (v as Record<string, unknown>)[k] !== undefined))
          throw new JobInputError(
            "edit",
            `nothing to change: give at least one of ${changes.map((k) => `--${k}`).join(", ")}`,
          );
        const job = editable(await find(target));
        const base: Partial<JobInput> = {
          name: job.name,
          message: job.prompt,
          ...scheduleInput(job),
          deliver: describeDelivery(job.deliver),
          session: job.sessionMode,
          catchUp: job.catchUp,
          timeout: `${Math.round(job.timeoutMs / 1000)}s`,
          enabled: job.enabled,
        };
        const { spec, nextRunAt } = buildJob(input(base), ctx);
        await store.cron.update(job.id, { ...spec, nextRunAt }, now);
        out(`changed job "${spec.name}": ${describeSchedule(spec.schedule)}, next run ${when(nextRunAt)}`);
        return 0;
      }
      case "rm": {
        const job = editable(await find(target));
        await store.cron.remove(job.id);
        out(`removed job "${job.name}" and its history`);
        return 0;
      }
      case "enable":
      case "disable": {
        const job = editable(await find(target));
        const enabled = action === "enable";
        const nextRunAt = enabled ? (nextDue(job.schedule, now) ?? null) : null;
        await store.cron.update(
          job.id,
          { enabled, nextRunAt, disabledReason: null, deliveryFailures: 0 },
          now,
        );
        out(`${action}d job "${job.name}"${enabled ? `, next run ${when(nextRunAt)}` : ""}`);
        return 0;
      }
      case "run": {
        const job = await find(target);
        await store.cron.update(job.id, { enabled: true, nextRunAt: now }, now);
        out(`job "${job.name}" is due now: a running gateway starts it within a few seconds`);
        return 0;
      }
      case "help":
        process.stdout.write(USAGE);
        return 0;
      default:
        throw new UsageError(`unknown action "${action}"`, USAGE_LINE);
    }
  } finally {
    await store.close();
  }
}

/** The schedule fields of a stored job, as `add` takes them. */
function scheduleInput(job: CronJob): Partial<JobInput> {
  const s = job.schedule;
  if (s.kind === "cron") return { cron: s.expr, tz: s.tz };
  if (s.kind === "every") return { every: `${Math.round(s.everyMs / 60_000)}m` };
  return { at: new Date(s.atMs).toISOString() };
}

function when(ms: number | null): string {
  return ms === null ? "none" : new Date(ms).toISOString();
}

/** One listing line: name, schedule, next run, delivery, state. */
function line(job: CronJob): string {
  const state = !job.enabled
    ? `disabled${job.disabledReason ? `: ${job.disabledReason}` : ""}`
    : job.failing
      ? "FAILING"
      : "ok";
  return `${job.name.padEnd(16)} ${describeSchedule(job.schedule)}  next ${when(job.nextRunAt)}  → ${describeDelivery(job.deliver)}  [${state}]${job.source === "config" ? " (config)" : ""}`;
}
