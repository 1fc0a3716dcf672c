/**
 * `tools.exec` in the configuration: what the optional `exec` tool may do (the rest of `tools:`,
 * the tool policy, is in schema.ts).
 */
import { z } from "zod";
import { secretNameReason } from "../harness/tools/exec/exec-env.js";
import { section } from "../util/zod-sections.js";

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A variable name passed through to commands; a name that looks like a secret is refused here. */
const passedVariable = z
  .string()
  .regex(VARIABLE_NAME, { message: "expected an environment variable name such as NODE_ENV" })
  .superRefine((name, ctx) => {
    const why = secretNameReason(name);
    if (why === undefined) return;
    ctx.addIssue({
      code: "custom",
      message: `${name} is never passed to commands (${why}); remove it`,
      params: { namesValues: true },
    });
  });

/**
 * `tools.exec`: the `exec` tool, which runs one shell command in the workspace with a scrubbed
 * environment, a timeout and the destructive-command guard.
 */
export const execSettings = section({
  /** Offer the `exec` tool to the model. Default false: the tool does not exist. */
  enabled: z.boolean().default(false),
  /** Time one command may run before its process group is killed (and never past agent.toolTimeoutMs). Default 60000. */
  timeoutMs: z.number().int().positive().default(60_000),
  /**
   * Variable names passed through to commands besides PATH, HOME, LANG and TZ. Names that look
   * like a key, token, secret, password or the gateway's own (SWITCHYARD_*) are refused.
   */
  env: z.array(passedVariable).default([]),
  /** Only "none" for now: sandboxing with bubblewrap ("auto", "bwrap") is not supported yet. */
  sandbox: z
    .string()
    .refine((v) => v === "none", { message: 'only "none" is supported yet (bwrap and auto are not built)' })
    .default("none")
    .transform((v) => v as "none"),
  /** What happens to a command the guard flags: only "blocked" for now ("ask" is not supported yet). */
  approval: z
    .string()
    .refine((v) => v === "blocked", { message: 'only "blocked" is supported yet ("ask" is not built)' })
    .default("blocked")
    .transform((v) => v as "blocked"),
});
