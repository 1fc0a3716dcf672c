/** `cron` in the configuration: scheduled jobs and where they run. */
import { z } from "zod";
import { section } from "../../util/zod-sections.js";

/** The `cron` section (config/schema.ts places it at its key). */
export const cronSettings = section({
  /** Scheduled jobs run (off: none runs; the CLI still manages them). */
  enabled: z.boolean().default(true),
  /** The timezone of jobs that name none (default: the machine's). */
  timezone: z.string().min(1).optional(),
  /**
   * Jobs kept in this file (reviewable in git): upserted by name at start and marked as
   * config jobs; the CLI will not edit them. Fields as `switchyard cron add` takes them.
   */
  jobs: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        cron: z.string().optional(),
        tz: z.string().optional(),
        every: z.string().optional(),
        at: z.string().optional(),
        message: z.string().min(1),
        session: z.enum(["main", "isolated"]).optional(),
        deliver: z.string().optional(),
        catchUp: z.enum(["one", "skip"]).optional(),
        timeout: z.string().optional(),
        enabled: z.boolean().optional(),
      }),
    )
    .default([]),
});
