/**
 * Hooks a turn's loop calls: how capabilities (memory, compaction, tool policies, loop
 * detection, stop decisions) plug into every turn without branches in the runner. Each is
 * optional; several sets compose in order (`composeHooks`).
 */
import type { TranscriptPayload } from "../store/repos/transcript-repo.js";
import type { ChatMessage, ToolCall } from "./providers/types.js";
import type { ProviderError } from "./providers/provider-error.js";
import type { Asker, ReplyTarget } from "./tools/types.js";

/** What the model is given on a call: the system prompt and the conversation. */
export interface TurnContext {
  system: string;
  messages: ChatMessage[];
}

/** What a hook knows of the turn it runs in. */
export interface HookTurn {
  sessionKey: string;
  sessionId: string;
  runId: string;
  trigger: string;
  signal: AbortSignal;
  /** The chat the turn answers in; absent: none (background work). */
  replyTarget?: ReplyTarget;
  /** Who the turn answers: a hook's own tool calls run under the same policy (ToolContext.asker). */
  asker?: Asker;
  /** Takes a model-call slot (a hook that calls a model, e.g. compaction, holds one meanwhile). */
  acquireModelSlot?(): Promise<{ release(): void }>;
  /** Input tokens (cache included) the provider reported for the turn's last model call. */
  lastInputTokens?(): number | undefined;
  /** Appends events to the session's transcript under the turn's lease. */
  append?(payloads: TranscriptPayload[]): Promise<void>;
}

/** A tool call's outcome as the loop records it. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
  /**
   * Set by a hook (loop detection): the result is recorded, then the run ends, failed with this
   * error, instead of asking the model again.
   */
  endRun?: Error;
  /** The tool asked a person in this call (ToolOutput.requiresHuman): an assignment pauses on it. */
  requiresHuman?: boolean;
}

export interface TurnHooks {
  /** Rewrites the context before the first model call (memory recall, compaction). */
  transformContext?(context: TurnContext, turn: HookTurn): Promise<TurnContext>;
  /**
   * Before each later model call of the turn (after tool results grew the context): return a
   * smaller context (compaction), or undefined to go on with this one.
   */
  beforeModelCall?(context: TurnContext, turn: HookTurn): Promise<TurnContext | undefined>;
  /**
   * The provider said the context is too long: return a smaller context to retry the call with
   * (once per call), or undefined to let the turn fail.
   */
  onContextOverflow?(
    context: TurnContext,
    error: ProviderError,
    turn: HookTurn,
  ): Promise<TurnContext | undefined>;
  /** Before a tool runs: return `{ block }` to refuse it (the model sees the reason as an error result). */
  beforeToolCall?(call: ToolCall, turn: HookTurn): Promise<{ block: string } | undefined>;
  /** After a tool ran (or was refused): may replace its outcome. */
  afterToolCall?(call: ToolCall, outcome: ToolOutcome, turn: HookTurn): Promise<ToolOutcome>;
  /**
   * Before each model call (`modelCalls` made so far in the run): return a reason to end the
   * run here, without an answer (outcome `yielded`): a bound reached, the work finished, a
   * question to a person pending. Undefined goes on.
   */
  yieldBefore?(turn: HookTurn, modelCalls: number): string | undefined;
  /**
   * The model answered without calling a tool: return `{ continueWith }` to send it that text
   * and go on instead of stopping (bounded by the turn's limits), or undefined to stop.
   */
  beforeStop?(answer: string, turn: HookTurn): Promise<{ continueWith: string } | undefined>;
  /**
   * Once, before the first model call (after `transformContext`): `{ answer }` ends the run
   * answered with that text and no model call (a configured beforeMessage hook replied or
   * refused); `{ context }` goes on with that context (a note added); undefined goes on.
   */
  answerBefore?(context: TurnContext, turn: HookTurn): Promise<EarlyAnswer | undefined>;
  /**
   * The run answered (beforeStop let it stop, or `answerBefore` answered): called before the
   * answer is returned to be committed, so the delivery waits for it. Must not throw.
   */
  afterAnswer?(answer: string, turn: HookTurn): Promise<void>;
}

/** What `answerBefore` decided: answer without the model, or go on with a changed context. */
export type EarlyAnswer = { answer: string } | { context: TurnContext };

/** Several hook sets as one: transforms chain in order, the first refusal or continuation wins. */
export function composeHooks(sets: readonly TurnHooks[]): TurnHooks {
  // No hooks: nothing to call (the loop then awaits nothing extra per step).
  if (sets.length === 0) return {};
  if (sets.length === 1 && sets[0]) return sets[0];
  return {
    async transformContext(context, turn) {
      let out = context;
      for (const h of sets) if (h.transformContext) out = await h.transformContext(out, turn);
      return out;
    },
    async beforeModelCall(context, turn) {
      let out: TurnContext | undefined;
      for (const h of sets) {
        const next = await h.beforeModelCall?.(out ?? context, turn);
        if (next) out = next;
      }
      return out;
    },
    async onContextOverflow(context, error, turn) {
      for (const h of sets) {
        const smaller = await h.onContextOverflow?.(context, error, turn);
        if (smaller) return smaller;
      }
      return undefined;
    },
    async beforeToolCall(call, turn) {
      for (const h of sets) {
        const verdict = await h.beforeToolCall?.(call, turn);
        if (verdict) return verdict;
      }
      return undefined;
    },
    async afterToolCall(call, outcome, turn) {
      let out = outcome;
      for (const h of sets) if (h.afterToolCall) out = await h.afterToolCall(call, out, turn);
      return out;
    },
    yieldBefore(turn, modelCalls) {
      for (const h of sets) {
        const reason = h.yieldBefore?.(turn, modelCalls);
        if (reason !== undefined) return reason;
      }
      return undefined;
    },
    async beforeStop(answer, turn) {
      for (const h of sets) {
        const verdict = await h.beforeStop?.(answer, turn);
        if (verdict) return verdict;
      }
      return undefined;
    },
    ...composeAnswerHooks(sets),
  };
}

/** answerBefore and afterAnswer of several sets, present only when one of the sets has them. */
function composeAnswerHooks(sets: readonly TurnHooks[]): Pick<TurnHooks, "answerBefore" | "afterAnswer"> {
  const before = sets.filter((h) => h.answerBefore);
  const after = sets.filter((h) => h.afterAnswer);
  return {
    ...(before.length > 0 && {
      async answerBefore(context: TurnContext, turn: HookTurn): Promise<EarlyAnswer | undefined> {
        let changed: TurnContext | undefined;
        for (const h of before) {
          const out = await h.answerBefore?.(changed ?? context, turn);
          if (out && "answer" in out) return out;
          if (out) changed = out.context;
        }
        return changed ? { context: changed } : undefined;
      },
    }),
    ...(after.length > 0 && {
      async afterAnswer(answer: string, turn: HookTurn): Promise<void> {
        for (const h of after) await h.afterAnswer?.(answer, turn);
      },
    }),
  };
}
