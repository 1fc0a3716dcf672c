/** `assignments` in the configuration: multi-day assignments (`/task`, `switchyard task`), each run bounded and the whole bounded. */
import { z } from "zod";
import { section } from "../../util/zod-sections.js";

/** The `assignments` section (config/schema.ts places it at its key). */
export const assignmentsSettings = section({
  /** Runs in a row with no progress (work items, project files, new tool results) before it stops as stalled. */
  stallThreshold: z.number().int().min(1).default(3),
  /** Nudges in a row when the model stops without a tool call or work_complete. */
  maxContinuationPrompts: z.number().int().min(0).max(10).default(2),
  /** Model calls per run; then the run ends and the next starts fresh from the project files. */
  maxTurnsPerRun: z.number().int().min(1).default(40),
  /** Minutes per run (checked between model calls). */
  maxRunMinutes: z.number().positive().default(20),
  /** Runs per assignment. */
  maxRuns: z.number().int().min(1).default(100),
  /** Tokens per assignment (input + output), default no cap beyond `limits`. */
  maxTokens: z.number().int().positive().optional(),
  /** Spend per assignment in USD, default no cap beyond `limits`. */
  maxCostUsd: z.number().positive().optional(),
  /** A question to the owner (ask_owner) expires after this many hours; a reminder goes at half. */
  questionExpiryHours: z.number().positive().default(24),
  /** Progress messages (a work item done) at most this often, batched. */
  reportEveryMinutes: z.number().min(0).default(10),
  /**
   * Contract checks of the kind `command` run a shell command in the workspace; off unless
   * the operator turns them on here (separate from the agent's `tools.exec`).
   */
  commandChecks: z.boolean().default(false),
});
