/**
 * The person's side of `tools.exec.approval: ask` in chat: a turn whose message is
 * `/approve <id>` or `/deny <id>` is decided before the model is called. An approved command
 * (the exact one filed, from the same sender, in the same session, before it expired) runs once
 * right there, inside the turn (so /stop and shutdown stop it like any command); the model then
 * reads what happened, output included, appended to that message. Nothing else runs a request.
 */
import type { TurnContext, TurnHooks } from "../../harness/hooks.js";
import {
  type ApprovalRequest,
  type ExecApprovals,
  parseApprovalReply,
} from "../../harness/tools/exec/exec-approvals.js";
import { ToolError } from "../../harness/tools/tool-error.js";
import type { ToolOutput } from "../../harness/tools/types.js";
import { untrustedBlock } from "../../harness/tools/untrusted.js";

/** What the approval hook needs. */
export interface ApprovalHookOptions {
  approvals: ExecApprovals;
  /** The messages the run answers, with their senders (the inbox rows it claimed). */
  messagesOf(runId: string): Promise<ReadonlyArray<{ senderId: string; text: string }>>;
  /** Runs an approved request as the exec tool runs a command (sandbox, runner, format). */
  run(request: ApprovalRequest, signal: AbortSignal): Promise<ToolOutput>;
}

/** The `transformContext` hook deciding `/approve` and `/deny` replies (see the file header). */
export function approvalHooks(o: ApprovalHookOptions): TurnHooks {
  return {
    async transformContext(context, turn) {
      const notes: string[] = [];
      for (const m of await o.messagesOf(turn.runId)) {
        const reply = parseApprovalReply(m.text);
        if (!reply) continue;
        const decision = o.approvals.decide(reply, { sessionKey: turn.sessionKey, senderId: m.senderId });
        const tag = `[exec approval ${reply.id}]`;
        switch (decision.type) {
          case "unknown":
            notes.push(
              `${tag} No request with this id waits for this sender in this chat (used, expired or never made): nothing ran.`,
            );
            break;
          case "expired":
            notes.push(
              `${tag} It expired before the approval came: \`${decision.request.command}\` did not run. Ask again if it is still needed.`,
            );
            break;
          case "denied":
            notes.push(
              `${tag} The person denied it: \`${decision.request.command}\` did not run. Do not run it.`,
            );
            break;
          case "approved": {
            const output = await runSafely(o, decision.request, turn.signal);
            const block = untrustedBlock("exec", output.content).text;
            notes.push(
              `${tag} The person approved it, and \`${decision.request.command}\` ran once. Its result:\n${block}`,
            );
            break;
          }
        }
      }
      return notes.length === 0 ? context : appendToLastUser(context, notes.join("\n\n"));
    },
  };
}

/** A refusal (sandbox unavailable, cwd gone) reads as the tool's error would. */
async function runSafely(o: ApprovalHookOptions, request: ApprovalRequest, signal: AbortSignal) {
  try {
    return await o.run(request, signal);
  } catch (err) {
    if (err instanceof ToolError) return { content: `error (${err.code}): ${err.message}`, isError: true };
    throw err;
  }
}

function appendToLastUser(context: TurnContext, note: string): TurnContext {
  const messages = [...context.messages];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    messages[i] = { role: "user", content: `${m.content}\n\n${note}` };
    return { ...context, messages };
  }
  return { ...context, messages: [...messages, { role: "user", content: note }] };
}
