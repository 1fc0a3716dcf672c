/** Rows of the PostgreSQL subagents table, their mapping, and the SQL of an undelivered result. */
import type { Subagent, SubagentOrigin } from "../repos/subagent-repo.js";
import { SILENT_DELIVERY } from "../reasons.js";

/** A subagents row (tools and origin as JSON text). */
export interface SubagentRow {
  id: string;
  parent_session_key: string;
  parent_run_id: string;
  child_session_key: string;
  seq: number;
  depth: number;
  label: string;
  task: string;
  context: string;
  tools: string;
  model: string | null;
  origin: string;
  state: Subagent["state"];
  run_id: string | null;
  result: string | null;
  result_path: string | null;
  error: string | null;
  delivered_run_id: string | null;
  wait_deadline: number | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

/** The sub-agent a row holds. */
export function toSubagent(r: SubagentRow): Subagent {
  return {
    id: r.id,
    parentSessionKey: r.parent_session_key,
    parentRunId: r.parent_run_id,
    childSessionKey: r.child_session_key,
    depth: r.depth,
    label: r.label,
    task: r.task,
    context: r.context,
    tools: JSON.parse(r.tools) as string[],
    model: r.model,
    origin: JSON.parse(r.origin) as SubagentOrigin,
    state: r.state,
    runId: r.run_id,
    result: r.result,
    resultPath: r.result_path,
    error: r.error,
    deliveredRunId: r.delivered_run_id,
    waitDeadline: r.wait_deadline,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    endedAt: r.ended_at,
  };
}

/** SILENT_DELIVERY as an SQL literal (a constant of ours: no quote to escape). */
export const SILENT = `'${SILENT_DELIVERY}'`;

/**
 * Ended children whose result no committed run of their parent received (a condition on the
 * subagents row; `runs` is the run ledger's table).
 */
export const UNDELIVERED = `state IN ('done', 'failed', 'cancelled') AND coalesce(delivered_run_id, '') <> ${SILENT}
  AND (delivered_run_id IS NULL OR NOT EXISTS (SELECT 1 FROM runs WHERE runs.run_id = subagents.delivered_run_id))`;
