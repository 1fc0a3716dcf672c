/** Rows of the PostgreSQL assignments, assignment_runs and learnings tables, and their mapping. */
import type { ChatTarget } from "../../channels/types.js";
import type {
  Assignment,
  AssignmentRun,
  AssignmentState,
  Learning,
  LearningState,
} from "../repos/assignment-repo.js";

/** An assignments row (the JSON columns as text). */
export interface AssignmentRow {
  id: string;
  agent_id: string;
  goal: string;
  owner: string | null;
  session_key: string;
  state: AssignmentState;
  state_reason: string | null;
  limits: string;
  contract: string;
  items: string;
  checkpoint: string;
  question: string | null;
  created_at: number;
  updated_at: number;
  requested_by: string | null;
  private: number;
}

/** The assignment a row holds. */
export function toAssignment(r: AssignmentRow): Assignment {
  return {
    id: r.id,
    agentId: r.agent_id,
    goal: r.goal,
    owner: r.owner === null ? null : (JSON.parse(r.owner) as ChatTarget),
    requestedBy: r.requested_by,
    privateChat: r.private === 1,
    sessionKey: r.session_key,
    state: r.state,
    stateReason: r.state_reason,
    limits: JSON.parse(r.limits),
    contract: JSON.parse(r.contract),
    items: JSON.parse(r.items),
    checkpoint: JSON.parse(r.checkpoint),
    question: r.question === null ? null : JSON.parse(r.question),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** An assignment_runs row. */
export interface RunRow {
  assignment_id: string;
  run_no: number;
  run_id: string;
  started_at: number;
  ended_at: number | null;
  directive: AssignmentRun["directive"];
  reason: string | null;
  turns: number;
  tokens: number;
  cost_usd: number;
}

/** The run a row logs. */
export function toRun(r: RunRow): AssignmentRun {
  return {
    assignmentId: r.assignment_id,
    runNo: r.run_no,
    runId: r.run_id,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    directive: r.directive,
    reason: r.reason,
    turns: r.turns,
    tokens: r.tokens,
    costUsd: r.cost_usd,
  };
}

/** A learnings row. */
export interface LearningRow {
  id: number;
  agent_id: string;
  norm: string;
  text: string;
  scope: string | null;
  sources: string;
  state: LearningState;
  created_at: number;
  updated_at: number;
}

/** The learning a row holds. */
export function toLearning(r: LearningRow): Learning {
  return {
    id: r.id,
    agentId: r.agent_id,
    norm: r.norm,
    text: r.text,
    scope: r.scope,
    sources: JSON.parse(r.sources),
    state: r.state,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
