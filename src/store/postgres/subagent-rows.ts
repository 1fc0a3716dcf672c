/** The SQL of the PostgreSQL subagents table's undelivered results (the row itself: rows/subagent-row.ts). */
export { type SubagentRow, toSubagent } from "../rows/subagent-row.js";
import { SILENT_DELIVERY } from "../reasons.js";

/** SILENT_DELIVERY as an SQL literal (a constant of ours: no quote to escape). */
export const SILENT = `'${SILENT_DELIVERY}'`;

/**
 * Ended children whose result no committed run of their parent received (a condition on the
 * subagents row; `runs` is the run ledger's table).
 */
export const UNDELIVERED = `state IN ('done', 'failed', 'cancelled') AND coalesce(delivered_run_id, '') <> ${SILENT}
  AND (delivered_run_id IS NULL OR NOT EXISTS (SELECT 1 FROM runs WHERE runs.run_id = subagents.delivered_run_id))`;
