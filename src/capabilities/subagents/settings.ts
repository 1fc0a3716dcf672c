/** `subagents` in the configuration: helpers a turn may spawn (spawn_agent), and their limits. */
import { z } from "zod";
import { section } from "../../util/zod-sections.js";

/** The `subagents` section (config/schema.ts places it at its key). */
export const subagentSettings = section({
  /** Offer spawn_agent and wait_agents. */
  enabled: z.boolean().default(true),
  /** How deep helpers may nest: 1 = helpers spawn none, 2 = their helpers may spawn once more. */
  maxDepth: z.number().int().min(1).max(5).default(2),
  /** Children of one session queued or running at once. */
  maxChildrenPerAgent: z.number().int().min(1).max(20).default(8),
  /** Children one run of a session may spawn. */
  maxPerRun: z.number().int().min(1).max(100).default(20),
  /** Characters of a child's result its parent reads; the whole text is saved under .agent-output/. */
  maxResultChars: z.number().int().min(200).max(64_000).default(4_000),
  /** Characters of a task (and of the context passed with it). */
  maxTaskChars: z.number().int().min(100).max(100_000).default(20_000),
  /**
   * Show helpers at work in the parent's chat: one message listing each helper's latest call,
   * edited in place where the platform can edit (whatever `streaming` says), SSE events on HTTP.
   */
  progress: z.boolean().default(true),
  /** Tool calls one run of a child may make (its own bound, below the agent's). */
  maxToolCallsPerRun: z.number().int().min(1).default(30),
});

/** The settings, defaults applied. */
export type SubagentSettings = z.infer<typeof subagentSettings>;
