/** Reasons the store records for inbox rows the gateway finished without a run. */

/** The reject reason of a group message that did not address the bot (kept as context). */
export const NOT_MENTIONED = "not_mentioned";

/** How a chat command's row is rejected: the reason is this prefix and the name (`command /status`). */
export const COMMAND_REASON_PREFIX = "command /";

/** A sub-agent's `deliveredRunId` when it was cancelled silently: its parent is not given the cancellation. */
export const SILENT_DELIVERY = "-";
