/** An assignment as the unit tests start from: active, owned by a Telegram DM, no items. */
import { NEW_CHECKPOINT } from "../../src/harness/assignments/assignments.js";
import type { Assignment } from "../../src/store/repos/assignment-repo.js";

/** When the fixture was made (epoch ms). */
export const FIXTURE_NOW = 1_700_000_000_000;

export function assignmentFixture(over: Partial<Assignment> = {}): Assignment {
  return {
    id: "t0000001",
    agentId: "main",
    goal: "Write the report",
    owner: { channel: "telegram", accountId: "default", chatId: "42" },
    requestedBy: null,
    privateChat: true,
    sessionKey: "agent:main:task:t0000001",
    state: "active",
    stateReason: null,
    limits: { maxTurnsPerRun: 10, maxRunMinutes: 30, maxRuns: 20, maxTokens: null, maxCostUsd: null },
    contract: [],
    items: [],
    checkpoint: { ...NEW_CHECKPOINT, unreported: [] },
    question: null,
    createdAt: FIXTURE_NOW,
    updatedAt: FIXTURE_NOW,
    ...over,
  };
}

/**
 * An assignment owned by nobody, waiting on the owner's answer to `text` (state
 * `requires_action`, asked at `now`): store it with `store.assignments.create`.
 */
export function askingAssignment(text: string, options: string[], now: number): Assignment {
  return assignmentFixture({
    owner: null,
    goal: "Paint the shed",
    state: "requires_action",
    stateReason: `asked: ${text}`,
    question: {
      tool: "ask_owner",
      toolCallId: "call-1",
      sessionId: "ses-1",
      text,
      options,
      askedAt: now,
      remindAt: now + 3_600_000,
      expiresAt: now + 86_400_000,
      reminded: false,
    },
    createdAt: now,
    updatedAt: now,
  });
}
