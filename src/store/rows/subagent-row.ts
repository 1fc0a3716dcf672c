/**
 * The subagents table's row as both engines store it (tools and origin as JSON text), its
 * mapping, and the row a spawn inserts: one definition for SQLite and PostgreSQL.
 */
import type { Subagent, SubagentOrigin, SubagentSpawn } from "../repos/subagent-repo.js";

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

/** The queued child a spawn inserts as number `seq` of its parent, at `now`. */
export function spawnedChild(s: SubagentSpawn, seq: number, now: number): Subagent {
  return {
    id: s.id,
    parentSessionKey: s.parentSessionKey,
    parentRunId: s.parentRunId,
    childSessionKey: `${s.childKeyPrefix}${s.parentSessionKey}:${seq}`,
    depth: s.depth,
    label: s.label,
    task: s.task,
    context: s.context,
    tools: [...s.tools],
    model: s.model,
    origin: s.origin,
    state: "queued",
    runId: null,
    result: null,
    resultPath: null,
    error: null,
    deliveredRunId: null,
    waitDeadline: null,
    createdAt: now,
    updatedAt: now,
    endedAt: null,
  };
}
