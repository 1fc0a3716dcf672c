/**
 * The agent's wake tools: `schedule_wake` (run this session again later, as background work,
 * with a reason as the prompt — how long work keeps moving without a person), `list_wakes` and
 * `cancel_wake`. Wakes are durable rows, so they survive restarts. Checked: the time is read and
 * in the future, not within a minute of another of the session's wakes, at most 20 waiting.
 */
import { z } from "zod";
import type { ChatTarget } from "../../channels/types.js";
import { ScheduleError, resolveAt } from "../../cron/schedule.js";
import { ToolError } from "../../harness/tools/tool-error.js";
import type { Tool } from "../../harness/tools/types.js";
import type { Store } from "../../store/types.js";
import type { Clock } from "../../util/clock.js";

/** A session's wake limits. */
export const WAKE_LIMITS = { maxPending: 20, minGapMs: 60_000 } as const;

/** What the tools need. */
export interface WakeToolsOptions {
  store: Pick<Store, "wakes" | "sessions">;
  clock: Clock;
  defaultTz: () => string;
  /** Called after a change, so the scheduler re-arms now. */
  changed?(): void;
}

const scheduleParameters = z.strictObject({
  when: z.string().describe('When to wake: "in 30m", "in 2h", "tomorrow 9:00", or an ISO time'),
  why: z.string().min(1).max(2_000).describe("What to do then; it becomes your prompt when you wake"),
});

const cancelParameters = z.strictObject({ id: z.int().describe("The wake's id (see list_wakes)") });

/** schedule_wake, list_wakes, cancel_wake. */
export function wakeTools(o: WakeToolsOptions): Tool[] {
  const schedule: Tool<typeof scheduleParameters> = {
    name: "schedule_wake",
    groups: ["schedule"],
    description:
      "Wake yourself up later in this same conversation, as background work: at that time you get `why` as your prompt and your answer goes to this chat. Use it to continue long work, check back on something, or follow up, without the person having to write. At most 20 waiting, at least a minute apart.",
    parameters: scheduleParameters,
    async run(args, ctx) {
      const now = o.clock.now();
      let dueAt: number;
      try {
        dueAt = resolveAt(args.when, o.defaultTz(), now, "when");
      } catch (err) {
        if (err instanceof ScheduleError) throw new ToolError("invalid_arguments", err.message);
        throw err;
      }
      // The turn's chat came from a ChatTarget (the gateway restates it for tools).
      const target =
        (ctx.replyTarget as ChatTarget | undefined) ??
        (await o.store.sessions.get(ctx.sessionKey))?.lastTarget ??
        null;
      const added = await o.store.wakes.add(
        { sessionKey: ctx.sessionKey, dueAt, reason: args.why, target },
        WAKE_LIMITS,
        now,
      );
      if (added.status === "too_many")
        throw new ToolError(
          "failed",
          `this conversation already has ${added.pending} wakes waiting (at most ${WAKE_LIMITS.maxPending}); cancel one first`,
        );
      if (added.status === "too_close")
        throw new ToolError(
          "invalid_arguments",
          `when: wake #${added.other.id} is already set for ${new Date(added.other.dueAt).toISOString()}, less than a minute apart`,
        );
      o.changed?.();
      return { content: `wake #${added.wake.id} set for ${new Date(dueAt).toISOString()}: ${args.why}` };
    },
  };
  const list: Tool = {
    name: "list_wakes",
    groups: ["schedule"],
    description: "List the wakes waiting in this conversation: id, time, reason.",
    parameters: z.strictObject({}),
    async run(_args, ctx) {
      const wakes = await o.store.wakes.list(ctx.sessionKey);
      if (wakes.length === 0) return { content: "no wakes waiting" };
      return {
        content: wakes.map((w) => `#${w.id} at ${new Date(w.dueAt).toISOString()}: ${w.reason}`).join("\n"),
      };
    },
  };
  const cancel: Tool<typeof cancelParameters> = {
    name: "cancel_wake",
    groups: ["schedule"],
    description: "Cancel one of this conversation's waiting wakes by id.",
    parameters: cancelParameters,
    async run(args, ctx) {
      if (!(await o.store.wakes.cancel(args.id, ctx.sessionKey)))
        throw new ToolError("not_found", `no waiting wake #${args.id} in this conversation (see list_wakes)`);
      o.changed?.();
      return { content: `wake #${args.id} cancelled` };
    },
  };
  return [schedule, list, cancel];
}
