/**
 * The turn of a session in the sub-agent machinery, whichever side it is on: a child's run (its
 * task on the first run, its transcript on a redo after a crash or a wake with its own helpers'
 * results) and a parent's wake with the results that arrived. Results are claimed and appended
 * to the parent's transcript in one fenced step (SubagentRepo.claimResults); a child's end is
 * committed with its last turn (PreparedTurn.subagent.end).
 */
import type { ChatTarget } from "../../channels/types.js";
import type { PreparedTurn, TurnSource } from "../../gateway/turn-sources.js";
import type { Subagent, SubagentEnd } from "../../store/repos/subagent-repo.js";
import type { Store } from "../../store/types.js";
import { resultText, taskText } from "./subagent-text.js";

/** What the turn needs of the sub-agents. */
export interface SubagentTurnOptions {
  /** `agent:<agentId>:sub:`: a session whose key starts with it is a child's. */
  childPrefix: string;
  /** The tools a child may use: its own list, spawn tools only below the depth limit. */
  toolsOf(child: Subagent): readonly string[];
  maxToolCallsPerRun: number;
  /** A child's end from its last answer (or failure): cut, the whole saved. */
  end(child: Subagent, answer: string | null, error: string | null): Promise<SubagentEnd>;
  /** Why a parent is woken without a result (a wait_agents timeout); the turn says it. */
  reason?: string | undefined;
}

/** The next sub-agent turn of `sessionKey`; undefined (no turn) when there is nothing to do. */
export function subagentTurn(o: SubagentTurnOptions): TurnSource {
  return {
    trigger: "subagent",
    async prepare({ store, sessionKey, sessionId, runId, lease, now }) {
      const self = sessionKey.startsWith(o.childPrefix)
        ? await store.subagents.byChildSession(sessionKey)
        : undefined;
      if (self && self.state !== "queued" && self.state !== "running") return undefined; // ended or cancelled
      const claimed = await store.subagents.claimResults(
        sessionKey,
        sessionId,
        runId,
        lease,
        resultText,
        now,
      );
      const inputs: PreparedTurn["inputs"] = [];
      if (claimed.length === 0) {
        // A running child with nothing new runs again only when its last run never committed.
        const redo = self?.state === "running" && self.runId !== null && !(await store.runs.get(self.runId));
        if (self?.state !== "queued" && !redo && o.reason === undefined) return undefined;
      }
      if (o.reason !== undefined) inputs.push({ type: "trigger", origin: "subagent", text: o.reason });
      if (self) {
        const before = await store.subagents.startFrom(self, runId, now);
        if (!before) return undefined;
        if (before.state === "queued")
          inputs.unshift({ type: "trigger", origin: "subagent", text: taskText(before) });
        return childTurn(before, inputs, o, await rootOf(store, before, o.childPrefix));
      }
      const origin =
        claimed.at(-1)?.origin ?? (await store.subagents.listForParent(sessionKey)).at(-1)?.origin;
      return parentTurn(origin?.target ?? null, origin, inputs);
    },
  };
}

/** The top-level session a child descends from (its usage counts there). */
async function rootOf(store: Store, child: Subagent, childPrefix: string): Promise<string> {
  let key = child.parentSessionKey;
  // Bounded by the depth limit (at most 5).
  for (let i = 0; i < 5 && key.startsWith(childPrefix); i++) {
    const up = await store.subagents.byChildSession(key);
    if (!up) break;
    key = up.parentSessionKey;
  }
  return key;
}

function childTurn(
  child: Subagent,
  inputs: PreparedTurn["inputs"],
  o: SubagentTurnOptions,
  billTo: string,
): PreparedTurn {
  return {
    trigger: "subagent",
    runTrigger: "subagent",
    inputs,
    inboxIds: [],
    target: null,
    steer: false,
    interactive: false,
    chat: { privateChat: child.origin.privateChat, channel: "subagent", chatKind: "background" },
    deliver: () => null,
    subagent: {
      helper: { tools: o.toolsOf(child) },
      asker: {
        privateChat: child.origin.privateChat,
        groupChat: child.origin.groupChat,
        ...(child.origin.senderId !== undefined ? { senderId: child.origin.senderId } : {}),
      },
      policyTarget: child.origin.target,
      maxToolCallsPerRun: o.maxToolCallsPerRun,
      billTo,
      end: (answer, error) => o.end(child, answer, error),
    },
  };
}

/** A parent woken with its helpers' results: it answers where the spawning turn answered. */
function parentTurn(
  target: ChatTarget | null,
  origin: Subagent["origin"] | undefined,
  inputs: PreparedTurn["inputs"],
): PreparedTurn {
  const direct = origin !== undefined && !origin.groupChat;
  return {
    trigger: "subagent",
    runTrigger: "subagent",
    inputs,
    inboxIds: [],
    target,
    ...(target && origin?.senderId !== undefined ? { recipientId: origin.senderId } : {}),
    steer: false,
    interactive: target !== null,
    chat: {
      privateChat: origin?.privateChat ?? true,
      channel: target?.channel ?? "subagent",
      chatKind: target === null ? "background" : direct ? "direct" : "group",
    },
    deliver: (answer) => (answer.trim() === "" ? null : answer),
  };
}
