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
  /**
   * Where commands run: "auto" (default) in a bubblewrap sandbox when `bwrap` is installed and
   * works, else unsandboxed; "bwrap" only sandboxed (exec refuses when bwrap is missing or
   * broken); "none" unsandboxed. The sandbox sees the system read-only, the workspace
   * read-write and its own /tmp (see harness/tools/exec/sandbox.ts).
   */
  sandbox: z.enum(["auto", "bwrap", "none"]).default("auto"),
  /** Network inside the bubblewrap sandbox. Default false: a sandboxed command has no network. */
  network: z.boolean().default(false),
  /**
   * A command the guard flags: "blocked" (default) refuses it with the reason; "ask" asks the
   * person (in chat: `/approve <id>` or `/deny <id>`; in an assignment: its owner) and runs it
   * once on a yes.
   */
  approval: z.enum(["blocked", "ask"]).default("blocked"),
});
