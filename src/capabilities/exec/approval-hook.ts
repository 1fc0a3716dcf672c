/**
 * The person's side of `tools.exec.approval: ask` in chat: a turn whose message is
 * `/approve <id>` or `/deny <id>` is decided before the model is called. An approved command
 * (the exact one filed, from the same sender, in the same session, before it expired) runs once
 * right there, inside the turn (so /stop and shutdown stop it like any command); the model then
 * reads what happened, output included, appended to that message. In an assignment's run resumed
 * with its owner's answer to an exec approval (the answer is that exec call's result), the answer
 * decides the same way: a yes runs the command once and its result is added to the call's. Nothing
 * else runs a request.
 */
import type { TurnContext, TurnHooks } from "../../harness/hooks.js";
import type { ChatMessage } from "../../harness/providers/types.js";
import {
  type ApprovalRequest,
  type ExecApprovals,
  parseApprovalReply,
} from "../../harness/tools/exec/exec-approvals.js";
import { ToolError } from "../../harness/tools/tool-error.js";
import type { ToolOutput } from "../../harness/tools/types.js";

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
      context = await ownerAnswers(o, context, turn.sessionKey, turn.signal);
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
          case "approved":
            notes.push(`${tag} The person approved it, ${await ranOnce(o, decision.request, turn.signal)}`);
            break;
        }
      }
      return notes.length === 0 ? context : appendToLastUser(context, notes.join("\n\n"));
    },
  };
}

/** The prefix Assignments gives an owner's answer when it becomes the paused call's result. */
const OWNER_ANSWERED = "The owner answered: ";
/** The start of the result of a question that expired unanswered. */
const NO_ANSWER = "(No answer from the owner";

/** Exec calls whose result is the owner's answer to an approval: decided, the outcome added. */
async function ownerAnswers(
  o: ApprovalHookOptions,
  context: TurnContext,
  sessionKey: string,
  signal: AbortSignal,
): Promise<TurnContext> {
  let messages: ChatMessage[] | undefined;
  for (const [i, m] of context.messages.entries()) {
    if (m.role !== "tool" || m.name !== "exec") continue;
    const answered = m.content.startsWith(OWNER_ANSWERED);
    if (!answered && !m.content.startsWith(NO_ANSWER)) continue;
    const answer = answered ? m.content.slice(OWNER_ANSWERED.length) : "";
    const decision = o.approvals.decideAnswer(sessionKey, m.toolCallId, answer);
    if (!decision || decision.type === "unknown") continue;
    const { request } = decision;
    const tag = `[exec approval ${request.id}]`;
    const note =
      decision.type === "approved"
        ? `${tag} The owner approved it, ${await ranOnce(o, request, signal)}`
        : `${tag} The owner did not approve it${decision.type === "expired" ? " in time" : ""}: \`${request.command}\` did not run. Do not run it.`;
    messages ??= [...context.messages];
    messages[i] = { ...m, content: `${m.content}\n\n${note}` };
  }
  return messages ? { ...context, messages } : context;
}

/** Runs an approved request; says so, with its result (already in an untrusted block, as exec's). */
async function ranOnce(
  o: ApprovalHookOptions,
  request: ApprovalRequest,
  signal: AbortSignal,
): Promise<string> {
  const output = await runSafely(o, request, signal);
  return `and \`${request.command}\` ran once. Its result:\n${output.content}`;
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
