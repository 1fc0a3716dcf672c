/**
 * What a person sees for a platform slash command (Slack's, Discord's) the router handled,
 * answered only to them.
 */
import type { AcceptResult } from "./types.js";

/** What the person sees for a slash command the router handled. */
export function commandAnswer(result: AcceptResult): string {
  switch (result.status) {
    case "command":
      return result.reply;
    case "rejected":
      return result.reply ?? `Not allowed here: ${result.reason}.`;
    case "duplicate":
      return "Already done.";
    case "accepted":
      return "Received.";
  }
}
