/**
 * The sub-agent tools: `spawn_agent` starts a helper and returns at once (its result comes to the
 * parent as its next turn), `wait_agents` ends the parent's turn until chosen helpers end or a
 * timeout. Every refusal (empty or oversized task, a model not in the chain, a tool the parent is
 * not offered, a limit) is a ToolError the model can act on; nothing is spawned then.
 */
import { z } from "zod";
import type { ChatTarget } from "../../channels/types.js";
import type { SubagentOrigin } from "../../store/repos/subagent-repo.js";
import { ToolError } from "../../harness/tools/tool-error.js";
import type { Tool, ToolContext } from "../../harness/tools/types.js";
import { newId } from "../../util/ids.js";
import { type Subagents, ended } from "./subagents.js";

const spawnParameters = z.object({
  task: z.string().describe("What the helper must do and what to return; it sees nothing else of this chat"),
  label: z.string().max(40).optional().describe("A short name shown to the person, e.g. vendors-2"),
  tools: z
    .array(z.string())
    .optional()
    .describe("The tools it may use (default: the ones you have); a subset of yours"),
  model: z.string().optional().describe("A model of the chain (provider/model), e.g. a cheaper one"),
  context: z.string().optional().describe("Facts it needs from this chat (it never sees the conversation)"),
});

const waitParameters = z.object({
  ids: z.array(z.string()).optional().describe("Helper ids to wait for (default: every running one)"),
  timeoutSec: z.number().int().min(10).max(3_600).describe("Wake up after this many seconds anyway"),
});

/** spawn_agent and wait_agents over `subagents`. */
export function subagentTools(subagents: Subagents): Tool[] {
  return [spawnTool(subagents), waitTool(subagents)];
}

function spawnTool(s: Subagents): Tool<typeof spawnParameters> {
  return {
    name: "spawn_agent",
    groups: ["agents"],
    description:
      "Start a helper agent on a task that is wide rather than long (read many files, compare vendors); returns its id at once. " +
      "Its result comes to you as a new turn when it (and the others you started) end: do not wait for it, answer the person now.",
    parameters: spawnParameters,
    async run(args, ctx) {
      const { settings, store, clock } = s;
      const task = args.task.trim();
      const context = args.context?.trim() ?? "";
      if (task === "") throw new ToolError("invalid_arguments", "task is empty: say what the helper must do");
      if (task.length + context.length > settings.maxTaskChars)
        throw new ToolError(
          "invalid_arguments",
          `task and context are ${task.length + context.length} characters; at most ${settings.maxTaskChars} (put the material in a file and name it)`,
        );
      const chain = s.chain;
      if (args.model !== undefined && !chain.includes(args.model))
        throw new ToolError(
          "invalid_arguments",
          `model ${args.model} is not in the chain (${chain.join(", ")})`,
        );
      const offered = ctx.offeredTools ?? [];
      const unknown = (args.tools ?? []).filter((t) => !offered.includes(t));
      if (unknown.length > 0)
        throw new ToolError("denied", `not offered to you, so not to a helper: ${unknown.join(", ")}`);
      const depth = (await s.depthOf(ctx.sessionKey)) + 1;
      if (depth > settings.maxDepth)
        throw new ToolError(
          "limit",
          `helpers may nest ${settings.maxDepth} deep (subagents.maxDepth); this one would be ${depth}: do the work yourself`,
        );
      const id = newId("sub");
      const outcome = await store.subagents.spawn(
        {
          id,
          parentSessionKey: ctx.sessionKey,
          parentRunId: ctx.runId,
          childKeyPrefix: s.childPrefix,
          depth,
          label: args.label?.trim() || `helper-${id.slice(-4)}`,
          task,
          context,
          tools: s.childTools(args.tools ?? offered, depth),
          model: args.model ?? null,
          origin: originOf(ctx),
        },
        // A helper (depth ≥ 2 below) is one task however many times its helpers wake it.
        { maxActive: settings.maxChildrenPerAgent, maxPerRun: settings.maxPerRun, acrossRuns: depth > 1 },
        clock.now(),
      );
      if (outcome.status === "too_many_active")
        throw new ToolError(
          "limit",
          `${outcome.active} helpers are running (at most ${outcome.limit} at once, subagents.maxChildrenPerAgent): wait for them with wait_agents, or do this yourself`,
        );
      if (outcome.status === "too_many_in_run")
        throw new ToolError(
          "limit",
          `this ${depth > 1 ? "helper" : "turn"} started ${outcome.spawned} helpers already (at most ${outcome.limit}, subagents.maxPerRun)`,
        );
      const child = outcome.child;
      if (child.model !== null) {
        await store.sessions.ensure(child.childSessionKey, newId("ses"), null, clock.now());
        await store.sessions.setModel(child.childSessionKey, child.model, clock.now());
      }
      s.run(child);
      return {
        content: `Started helper ${child.id} ("${child.label}") with ${child.tools.length} tools. Its result comes to you as a new turn once it ends; answer the person now if nothing else is left to do.`,
      };
    },
  };
}

function waitTool(s: Subagents): Tool<typeof waitParameters> {
  return {
    name: "wait_agents",
    groups: ["agents"],
    description:
      "End this turn until the helpers you name (default: all running) have ended, or the timeout: you are woken with their results.",
    parameters: waitParameters,
    async run(args, ctx) {
      const children = await s.store.subagents.listForParent(ctx.sessionKey);
      const ids = args.ids ?? children.filter((c) => !ended(c)).map((c) => c.id);
      const unknown = ids.filter((id) => !children.some((c) => c.id === id));
      if (unknown.length > 0)
        throw new ToolError(
          "not_found",
          `no helper of yours with id ${unknown.join(", ")} (spawn_agent returned the ids)`,
        );
      const running = children.filter((c) => ids.includes(c.id) && !ended(c));
      if (running.length === 0)
        return {
          content:
            "None of them is running: their results are in this conversation or come as your next turn.",
        };
      await s.store.subagents.await(
        ctx.sessionKey,
        ids,
        s.clock.now() + args.timeoutSec * 1000,
        s.clock.now(),
      );
      s.wait(ctx.sessionKey, ctx.runId, args.timeoutSec * 1000);
      return {
        content: `Waiting for ${running.length} helper(s): this turn ends now, and you are woken with their results (or after ${args.timeoutSec} s).`,
      };
    },
  };
}

/** The spawning turn's asker and chat: the child runs under the same policy. */
function originOf(ctx: ToolContext): SubagentOrigin {
  // A tool's reply target is the gateway's ChatTarget, restated without the channel import.
  const target = (ctx.replyTarget as ChatTarget | undefined) ?? null;
  return {
    target,
    privateChat: ctx.asker?.privateChat ?? true,
    groupChat: ctx.asker?.groupChat ?? false,
    ...(ctx.asker?.senderId !== undefined ? { senderId: ctx.asker.senderId } : {}),
  };
}
