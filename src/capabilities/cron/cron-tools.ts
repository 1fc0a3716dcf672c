/**
 * The agent's scheduling tools: `cron_add` (a reminder or a recurring job; by default its answer
 * comes back to the chat the agent was asked in), `cron_list` and `cron_remove`. The agent
 * manages only its own agent's jobs, never config jobs, and every bad field is a tool error
 * naming it, with nothing stored — the same checks as `switchyard cron add`.
 */
import { z } from "zod";
import {
  type JobInput,
  JobInputError,
  buildJob,
  describeDelivery,
  describeSchedule,
} from "../../cron/jobs.js";
import { ToolError } from "../../harness/tools/tool-error.js";
import type { Tool } from "../../harness/tools/types.js";
import type { Store } from "../../store/types.js";
import { StoreError } from "../../store/store-error.js";
import type { Clock } from "../../util/clock.js";

/** What the tools need. */
export interface CronToolsOptions {
  store: Pick<Store, "cron">;
  agentId: string;
  clock: Clock;
  defaultTz: () => string;
  /** `<channel>:<account>` of the channels a delivery may name. */
  channels: () => ReadonlySet<string>;
  /** Called after a change, so the scheduler looks now (it also notices within seconds). */
  changed?(): void;
}

const addParameters = z.strictObject({
  name: z.string().describe("A short unique name, letters, digits, - and _ (e.g. stretch-reminder)"),
  message: z.string().describe("What to do when it runs: the prompt you will be given then"),
  at: z.string().optional().describe('One moment: "in 20m", "in 2h", "tomorrow 9:00", or an ISO time'),
  every: z.string().optional().describe("An interval of at least 1 minute: 90m, 2h, 1d"),
  cron: z.string().optional().describe('A 5-field cron expression, e.g. "0 9 * * 1-5"'),
  tz: z.string().optional().describe("IANA timezone for cron/at (default the owner's)"),
  deliver: z
    .string()
    .optional()
    .describe(
      'Where the answer goes: "here" (this chat, the default), "last", "none", or <channel>:<account>:<chat>',
    ),
});

const removeParameters = z.strictObject({ name: z.string().describe("The job's name (see cron_list)") });

/** cron_add, cron_list, cron_remove. */
export function cronTools(o: CronToolsOptions): Tool[] {
  const add: Tool<typeof addParameters> = {
    name: "cron_add",
    groups: ["schedule"],
    description:
      "Schedule a job: a one-off reminder (at), a repeating task (every) or a cron schedule. When it runs you get its message as a prompt, and your answer is delivered (by default to this chat). Use it when the person asks to be reminded or for something done later or regularly.",
    parameters: addParameters,
    async run(args, ctx) {
      const here = ctx.replyTarget;
      const deliver =
        args.deliver === undefined || args.deliver === "here"
          ? here
            ? [here.channel, here.accountId, here.chatId, ...(here.threadId ? [here.threadId] : [])].join(":")
            : "last"
          : args.deliver;
      const input: JobInput = {
        name: args.name,
        message: args.message,
        at: args.at,
        every: args.every,
        cron: args.cron,
        tz: args.tz,
        deliver,
      };
      const now = o.clock.now();
      try {
        const { spec, nextRunAt } = buildJob(input, {
          agentId: o.agentId,
          source: "agent",
          now,
          defaultTz: o.defaultTz(),
          channels: o.channels(),
        });
        const job = await o.store.cron.add(spec, nextRunAt, now);
        o.changed?.();
        return {
          content: `scheduled "${job.name}": ${describeSchedule(job.schedule)}; next run ${job.nextRunAt === null ? "none" : new Date(job.nextRunAt).toISOString()}; delivers to ${describeDelivery(job.deliver)}`,
        };
      } catch (err) {
        if (err instanceof JobInputError) throw new ToolError("invalid_arguments", err.message);
        if (err instanceof StoreError && err.code === "conflict")
          throw new ToolError(
            "invalid_arguments",
            `name: a job named "${args.name}" already exists (pick another name, or cron_remove it first)`,
          );
        throw err;
      }
    },
  };
  const list: Tool = {
    name: "cron_list",
    groups: ["schedule"],
    description:
      "List your scheduled jobs: name, schedule, next run, where answers go, and whether it is failing.",
    parameters: z.strictObject({}),
    async run() {
      const jobs = await o.store.cron.list(o.agentId);
      if (jobs.length === 0) return { content: "no scheduled jobs" };
      return {
        content: jobs
          .map(
            (j) =>
              `${j.name}: ${describeSchedule(j.schedule)}, next ${j.nextRunAt === null ? "none" : new Date(j.nextRunAt).toISOString()}, → ${describeDelivery(j.deliver)}${j.enabled ? "" : " (disabled)"}${j.failing ? " (FAILING)" : ""}${j.source === "config" ? " (config file; read-only)" : ""} — ${j.prompt}`,
          )
          .join("\n"),
      };
    },
  };
  const remove: Tool<typeof removeParameters> = {
    name: "cron_remove",
    groups: ["schedule"],
    description: "Remove one of your scheduled jobs by name.",
    parameters: removeParameters,
    async run(args) {
      const job = await o.store.cron.byName(o.agentId, args.name);
      if (!job) throw new ToolError("not_found", `no job named "${args.name}" (see cron_list)`);
      if (job.source === "config")
        throw new ToolError(
          "failed",
          `"${args.name}" is defined in the owner's config file; ask them to change it there`,
        );
      await o.store.cron.remove(job.id);
      o.changed?.();
      return { content: `removed "${job.name}"` };
    },
  };
  return [add, list, remove];
}
