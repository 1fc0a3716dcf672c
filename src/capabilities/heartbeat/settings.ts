/** `heartbeat` in the configuration: the background turn that follows HEARTBEAT.md. */
import { z } from "zod";
import { section } from "../../util/zod-sections.js";

/** The `heartbeat` section (config/schema.ts places it at its key). */
export const heartbeatSettings = section({
  /**
   * A background turn every this often in the heartbeat session, following HEARTBEAT.md;
   * skipped without a model call while HEARTBEAT.md holds nothing to act on. 0 turns it off.
   */
  everyMs: z
    .number()
    .int()
    .refine((ms) => ms === 0 || ms >= 60_000, {
      message: "expected 0 (off) or at least 60000 ms (one minute)",
    })
    .default(1_800_000),
  /** Where an alert goes: the chat that last addressed the agent directly, or nowhere. */
  target: z.enum(["last", "none"]).default("last"),
  /** An answer that says HEARTBEAT_OK with at most this many other characters is not sent. */
  ackMaxChars: z.number().int().min(0).default(300),
  /** Beats only between these local times (end before start: across midnight); default always. */
  activeHours: z
    .strictObject({
      start: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'expected a time such as "08:00"' }),
      end: z
        .string()
        .regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, { message: 'expected a time such as "22:00"' }),
      /** IANA timezone (default `cron.timezone`, else the machine's). */
      tz: z.string().optional(),
    })
    .optional(),
});
