/**
 * One bounded agent loop: call the model (streaming) through the model router, execute the
 * tools it asks for through the registry boundary, loop until a final answer or the tool-call
 * budget is spent. Hooks are called at each step (before and after a tool, before stopping, on
 * a context overflow). Every step is appended to the transcript as it happens, so a crash loses
 * at most the step in flight. The final assistant message is returned, not appended: the caller
 * commits it atomically with the outbox rows that deliver it.
 */
import type { TranscriptPayload } from "../store/repos/transcript-repo.js";
import type { Logger } from "../util/logger.js";
import type { HookTurn, TurnHooks } from "./hooks.js";
import type { AttemptRecord, ModelCallUsage } from "../store/repos/run-repo.js";
import type { UsageOrigin } from "../store/repos/usage-repo.js";
import type { ModelAccess } from "./models/model-router.js";
import { totalTokens } from "./models/prices.js";
import type { ChatMessage, TokenUsage, ToolCall } from "./providers/types.js";
import type { ProviderError } from "./providers/provider-error.js";
import { ZERO_USAGE, addUsage } from "./providers/usage.js";
import type { ToolRegistry } from "./tools/registry.js";
import { DEFAULT_MAX_PARALLEL_TOOLS, checkMaxParallelTools } from "./tools/parallel-plan.js";
import { runToolCalls } from "./run-tool-calls.js";
import type { Asker, ReplyTarget } from "./tools/types.js";
import { type RunJit, jitLines, noteToolCall } from "./jit/run-jit.js";

/**
 * How a run ended. `yielded`: a hook ended it on purpose before a final answer (an
 * assignment's run reached its bound, finished its work, or waits for a person); there is no
 * answer to deliver and nothing failed.
 */
export type AgentRunOutcome = "answered" | "failed" | "aborted" | "yielded";

/** The slice of the lane context a run needs. */
export interface RunLaneContext {
  signal: AbortSignal;
  progress(): void;
  acquireModelSlot(): Promise<{ release(): void }>;
}

/** Who made one model-call attempt, as the router announced it, and how it ended. */
export type ModelAttempt = AttemptRecord;

/** A wait for a cooling auth profile longer than this is announced to the person, once per run. */
export const WAIT_NOTICE_MS = 10_000;

export interface AgentRunOptions {
  runId: string;
  sessionKey: string;
  /** Who answers model calls (provider, model and auth profile are its choice). */
  router: ModelAccess;
  system: string;
  /** Conversation so far (already repaired), ending with the new user message(s). */
  messages: ChatMessage[];
  /** The turn's tools: a registry, or its view for the session's mode (harness/modes/mode-tools.ts). */
  tools: Pick<ToolRegistry, "specs" | "execute">;
  workspaceDir: string;
  maxTokens: number;
  /** Tool calls allowed in this run (default 50); past it the model must answer without tools. */
  maxToolCallsPerRun: number;
  /**
   * Parallel-safe calls of one model turn run this many at once (tools/parallel-plan.ts);
   * default 4; 1 runs every call alone, in order. Not an integer of at least 1: a RangeError.
   */
  maxParallelTools?: number;
  lane: RunLaneContext;
  /** Durable append of events as they happen. */
  append(payloads: TranscriptPayload[]): Promise<void>;
  /** Messages that arrived while running (steer mode), taken at each tool boundary. */
  takeSteered?(): Promise<string[]>;
  /** The chat the turn answers in, for tools (ToolContext.replyTarget). */
  replyTarget?: ReplyTarget;
  /** Who the turn answers, for tools (ToolContext.asker). */
  asker?: Asker;
  onTextDelta?(text: string): void;
  /** The last `chars` characters passed to onTextDelta were discarded (a failed attempt). */
  onTextReset?(chars: number): void;
  /** A one-line notice for the person while the run waits (all auth profiles cooling > 10 s). */
  onNotice?(text: string): void;
  /** Who the work is for (caps) and the session's `/model` choice. */
  origin?: UsageOrigin;
  modelOverride?: string | null;
  /** Every provider failure, including those a retrying provider recovers from (for metrics). */
  onProviderError?(error: ProviderError): void;
  /** Hooks called in the loop; default none. */
  hooks?: TurnHooks;
  /** What hooks are told of the turn. */
  turn: Omit<HookTurn, "signal">;
  /** Times `beforeStop` may send the run on after an answer; default 3. */
  maxContinuations?: number;
  /** Just-in-time guidance (harness/jit/): evaluated before each model call; default none. */
  jit?: RunJit;
  logger: Logger;
}

export interface AgentRunResult {
  outcome: AgentRunOutcome;
  /** The final assistant message (answered) — not yet appended. */
  final: Extract<TranscriptPayload, { type: "assistant" }> | null;
  usage: TokenUsage;
  toolCalls: number;
  modelCalls: number;
  error: ProviderError | Error | null;
  /** Every model-call attempt, in order (the last one made the answer or the failure). */
  attempts: ModelAttempt[];
  /** Why the run yielded (outcome `yielded`). */
  yieldReason?: string;
  /** Usage per model call that reported it, priced. */
  calls: ModelCallUsage[];
}

const LIMIT_NOTE =
  "The tool-call limit for this turn is reached. Do not call tools; answer the user now with what you have, and say what is left undone.";

export type { RunJit } from "./jit/run-jit.js";

/** Runs the loop. Never throws for model or tool failures: they end up in the result. */
export async function runAgent(options: AgentRunOptions): Promise<AgentRunResult> {
  const { lane, router, logger } = options;
  const hooks = options.hooks ?? {};
  const maxParallelTools = checkMaxParallelTools(options.maxParallelTools ?? DEFAULT_MAX_PARALLEL_TOOLS);
  /** What the provider counted for the last call's input: the truth estimates are corrected by. */
  let lastInput: number | undefined;
  const turn: HookTurn = { ...options.turn, signal: lane.signal, lastInputTokens: () => lastInput };
  let system = options.system;
  let messages = [...options.messages];
  let usage = ZERO_USAGE;
  let toolCalls = 0;
  let modelCalls = 0;
  let continuations = 0;
  const maxContinuations = options.maxContinuations ?? 3;
  const attempts: ModelAttempt[] = [];
  const calls: ModelCallUsage[] = [];
  let noticed = false;
  /** The last failure already reported with its attempt_failed (the final error may wrap it). */
  let reported: ProviderError | undefined;
  /** When the current attempt started (the router's clock). */
  let attemptAt = 0;
  // Only the tools the policy allows in this chat are offered (the registry refuses the rest too).
  const toolSpecs = options.tools.specs({ replyTarget: options.replyTarget, asker: options.asker });
  const offeredTools = toolSpecs.map((t) => t.name);
  let limitReached = false;
  /** A context overflow was answered with a smaller context once for the current call. */
  let shrunk = false;

  const result = (
    outcome: AgentRunOutcome,
    final: AgentRunResult["final"],
    error: ProviderError | Error | null,
  ): AgentRunResult => ({ outcome, final, usage, toolCalls, modelCalls, error, attempts, calls });

  /** The run answers `text`: the afterAnswer hooks run first (delivery waits for them). */
  const answered = async (text: string): Promise<AgentRunResult> => {
    await hooks.afterAnswer?.(text, turn);
    return result("answered", { type: "assistant", text, toolCalls: [] }, null);
  };

  if (hooks.answerBefore && !lane.signal.aborted) {
    const early = await hooks.answerBefore({ system, messages }, turn);
    if (early && "answer" in early) return answered(early.answer);
    if (early) ({ system, messages } = early.context);
  }

  for (;;) {
    if (lane.signal.aborted) return result("aborted", null, abortError(lane.signal));
    const yieldReason = hooks.yieldBefore?.(turn, modelCalls);
    if (yieldReason !== undefined) {
      logger.debug({ reason: yieldReason }, "run yielded");
      return { ...result("yielded", null, null), yieldReason };
    }
    if (modelCalls > 0 && hooks.beforeModelCall) {
      const smaller = await hooks.beforeModelCall({ system, messages }, turn);
      if (smaller) ({ system, messages } = smaller);
    }
    const guidance = options.jit ? await jitLines(options.jit, modelCalls + 1, options.append) : undefined;
    let lease: { release(): void } | null;
    try {
      lease = await lane.acquireModelSlot();
    } catch (err) {
      return result("aborted", null, asError(err));
    }
    let text = "";
    let called: ToolCall[] = [];
    let failure: ProviderError | null = null;
    modelCalls++;
    try {
      // What this call alone is told goes last, after the cached prefix: the limit, JIT lines.
      const trailing = [limitReached ? LIMIT_NOTE : "", guidance ?? ""].filter((t) => t !== "").join("\n\n");
      const call = {
        system,
        messages: trailing === "" ? messages : [...messages, { role: "user" as const, content: trailing }],
        tools: limitReached ? [] : toolSpecs,
        maxTokens: options.maxTokens,
      };
      const ctx = {
        sessionKey: options.sessionKey,
        origin: options.origin ?? "human",
        runTokens: totalTokens(usage),
        modelOverride: options.modelOverride ?? null,
      };
      for await (const event of router.stream(call, lane.signal, ctx)) {
        lane.progress();
        switch (event.type) {
          case "attempt":
            attemptAt = event.at ?? attemptAt;
            attempts.push({
              provider: event.provider,
              model: event.model,
              profileId: event.profileId,
              outcome: "ok",
              waitMs: event.waitMs ?? 0,
            });
            break;
          case "attempt_failed": {
            // That attempt is void: its text and tool calls go; live text is replaced.
            const last = attempts.at(-1);
            if (last) last.outcome = event.error.kind;
            options.onProviderError?.(event.error);
            reported = event.error;
            if (text !== "") options.onTextReset?.(text.length);
            text = "";
            called = [];
            break;
          }
          case "text_delta":
            text += event.text;
            options.onTextDelta?.(event.text);
            break;
          case "tool_call":
            called.push(event.call);
            break;
          case "usage": {
            usage = addUsage(usage, event.usage);
            const input =
              event.usage.inputTokens + event.usage.cacheReadTokens + event.usage.cacheWriteTokens;
            if (input > 0) lastInput = input;
            const by = attempts.at(-1);
            if (by) {
              calls.push({
                at: attemptAt,
                provider: by.provider,
                model: by.model,
                profileId: by.profileId,
                usage: event.usage,
                costUsd: event.costUsd ?? 0,
              });
            }
            break;
          }
          case "retry_wait":
            // Nothing is in flight while the router waits: other sessions may call. (The
            // failure that started the wait was reported with its attempt_failed.)
            if (!noticed && event.waitMs > WAIT_NOTICE_MS) {
              noticed = true;
              options.onNotice?.(
                `⏳ Every model key is busy or cooling down (${event.error.kind.replace("_", " ")}); I'll answer in about ${Math.ceil(event.waitMs / 1000)} s.`,
              );
            }
            lease?.release();
            lease = null;
            break;
          case "retry_resume":
            // The router starts its next attempt once this returns: take a slot first.
            modelCalls++;
            lease = await lane.acquireModelSlot();
            break;
          case "error":
            failure = event.error;
            break;
          case "stop":
            break;
        }
      }
    } catch (err) {
      // Only acquireModelSlot throws here (the run was aborted while it waited for a slot).
      return result("aborted", null, abortError(lane.signal, asError(err)));
    } finally {
      lease?.release();
    }
    if (failure) {
      if (failure.kind === "aborted" || lane.signal.aborted)
        return result("aborted", null, abortError(lane.signal, failure));
      // Every failure is reported once, recovered or not (metrics count them).
      if (reported === undefined || (failure !== reported && failure.cause !== reported))
        options.onProviderError?.(failure);
      if (failure.kind === "context_overflow" && !shrunk && hooks.onContextOverflow && text === "") {
        const smaller = await hooks.onContextOverflow({ system, messages }, failure, turn);
        if (smaller) {
          logger.info(
            { messages: smaller.messages.length },
            "context overflow: retrying with a smaller context",
          );
          ({ system, messages } = smaller);
          shrunk = true;
          continue;
        }
      }
      logger.warn({ kind: failure.kind, status: failure.status, err: failure.message }, "model call failed");
      return result("failed", null, failure);
    }

    if (limitReached && called.length > 0) {
      // Asked to answer without tools, it called tools anyway: one extra call is the bound.
      logger.warn({ calls: called.length }, "model called tools after the tool-call limit; ending the run");
      if (text.trim() === "") return result("failed", null, new ToolLimitError(options.maxToolCallsPerRun));
      return answered(text);
    }
    shrunk = false;
    const assistant: Extract<TranscriptPayload, { type: "assistant" }> = {
      type: "assistant",
      text,
      toolCalls: called,
    };
    if (called.length === 0) {
      const next =
        continuations < maxContinuations && !limitReached ? await hooks.beforeStop?.(text, turn) : undefined;
      if (!next) {
        await hooks.afterAnswer?.(text, turn);
        return result("answered", assistant, null);
      }
      // Not done yet: the answer and the nudge go on record, and the loop goes on.
      continuations++;
      await options.append([assistant, { type: "trigger", origin: "continuation", text: next.continueWith }]);
      messages.push(
        { role: "assistant", content: text, toolCalls: [] },
        { role: "user", content: next.continueWith },
      );
      continue;
    }

    await options.append([assistant]);
    messages.push({ role: "assistant", content: text, toolCalls: called });

    const ran = await runToolCalls({
      calls: called,
      made: toolCalls,
      maxToolCallsPerRun: options.maxToolCallsPerRun,
      maxParallelTools,
      tools: options.tools,
      hooks,
      turn,
      lane,
      context: {
        workspaceDir: options.workspaceDir,
        sessionKey: options.sessionKey,
        runId: options.runId,
        signal: lane.signal,
        trigger: turn.trigger,
        offeredTools,
        ...(options.replyTarget ? { replyTarget: options.replyTarget } : {}),
        ...(options.asker ? { asker: options.asker } : {}),
      },
      record: async (results) => {
        if (options.jit) for (const r of results) noteToolCall(options.jit, r.call);
        const events = results.map(({ call, ...r }) => ({ toolCallId: call.id, name: call.name, ...r }));
        await options.append(events.map((e) => ({ type: "tool_result" as const, ...e })));
        for (const e of events) messages.push({ role: "tool", ...e });
      },
    });
    toolCalls = ran.made;
    if (ran.limitReached) limitReached = true;
    if (ran.stopped?.reason === "aborted") return result("aborted", null, abortError(lane.signal));
    if (ran.stopped?.reason === "end_run") {
      const { tool, error } = ran.stopped;
      logger.warn({ tool, err: error.message }, "run ended by a tool-call hook");
      return result("failed", null, error);
    }
    if (toolCalls >= options.maxToolCallsPerRun) limitReached = true;

    const steered = (await options.takeSteered?.()) ?? [];
    for (const s of steered) messages.push({ role: "user", content: s });
  }
}

/** The model kept calling tools after it was told the tool-call budget was spent. */
export class ToolLimitError extends Error {
  readonly kind = "tool_limit" as const;
  constructor(readonly limit: number) {
    super(`the model kept calling tools after the limit of ${limit} tool calls per turn`);
    this.name = "ToolLimitError";
  }
}

function abortError(signal: AbortSignal, fallback?: Error): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return fallback ?? new Error("aborted");
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
