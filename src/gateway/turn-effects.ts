/**
 * What a turn does besides its work: the typing indicator while it runs, its live text (and
 * that text's replacement after a failed model attempt), a notice when it must wait for a
 * cooling auth profile, and the metrics and log line of a committed run.
 */
import type { Channel, ChatTarget, StreamTarget } from "../channels/types.js";
import type { RunRecord } from "../store/repos/run-repo.js";
import type { Clock, TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { AgentRunResult } from "../harness/run.js";
import type { GatewayMetrics } from "./metrics.js";
import type { PreparedTurn } from "./turn-sources.js";

/**
 * The live-text callbacks of an interactive turn on `channel` (none without one): deltas and
 * resets go to the requests or preview of the messages the turn answers — `inboxIds` is the
 * live array, so messages steered in later get the rest of the text — and a wait notice is sent
 * at once, best effort (it is not part of the answer, so it is not in the outbox).
 */
export function liveText(
  channel: Channel | undefined,
  target: ChatTarget | undefined,
  turn: Pick<PreparedTurn, "replyTo" | "inboxIds" | "runTrigger">,
  runId: string,
  log: Logger,
): { onTextDelta?(text: string): void; onTextReset?(chars: number): void; onNotice?(text: string): void } {
  if (!channel || !target) return {};
  const to = () => streamTarget(target, turn);
  return {
    ...(channel.streamDelta ? { onTextDelta: (delta: string) => channel.streamDelta?.(to(), delta) } : {}),
    ...(channel.streamReset ? { onTextReset: (chars: number) => channel.streamReset?.(to(), chars) } : {}),
    onNotice: (text: string) => {
      channel
        .send({ ...target, text, idempotencyKey: `${runId}:wait` })
        .catch((err: unknown) => log.warn({ err }, "could not send the wait notice"));
    },
  };
}

/**
 * Where a turn's live text goes: its chat, the messages it answers, the message it replies to,
 * and whether it is redone (a preview of the earlier attempt may be in the chat).
 */
export function streamTarget(
  target: ChatTarget,
  turn: Pick<PreparedTurn, "replyTo" | "inboxIds" | "runTrigger">,
): StreamTarget {
  return {
    ...target,
    ...(turn.replyTo ? { replyTo: turn.replyTo } : {}),
    inboxIds: turn.inboxIds,
    ...(turn.runTrigger === "recovery" ? { recovered: true } : {}),
  };
}

/** Typing indicators are refreshed this often while a turn works (Telegram's lasts ~5 s). */
const TYPING_REFRESH_MS = 4_500;

/**
 * Shows "typing…" in `target` now and every TYPING_REFRESH_MS until the returned stop function is
 * called or `signal` aborts, then tells the channel it is done (`typingDone`); failures are
 * logged at debug and ignored.
 */
export function keepTyping(
  channel: Channel | undefined,
  target: ChatTarget & { replyTo?: string },
  deps: { clock: Clock; logger: Logger; signal: AbortSignal },
): () => void {
  if (!channel?.typing) return () => {};
  const { clock, signal } = deps;
  let timer: TimerHandle | undefined;
  let stopped = false;
  const send = () => {
    if (stopped) return;
    channel.typing?.(target).catch((err: unknown) => deps.logger.debug({ err }, "typing indicator failed"));
    timer = clock.setTimeout(send, TYPING_REFRESH_MS, { unref: true });
  };
  send();
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clock.clearTimeout(timer);
    channel
      .typingDone?.(target)
      .catch((err: unknown) => deps.logger.debug({ err }, "typing status not cleared"));
  };
  signal.addEventListener("abort", stop, { once: true });
  return stop;
}

/** Counts a committed run in the metrics and logs its summary. */
export function recordRun(metrics: GatewayMetrics, run: RunRecord, log: Logger): void {
  metrics.runs.inc({ trigger: run.trigger, outcome: run.outcome });
  metrics.runDuration.observe(run.durationMs / 1000);
  const labels = { provider: run.provider, model: run.model };
  metrics.tokens.inc({ ...labels, type: "input" }, run.usage.inputTokens);
  metrics.tokens.inc({ ...labels, type: "output" }, run.usage.outputTokens);
  metrics.tokens.inc({ ...labels, type: "cache_read" }, run.usage.cacheReadTokens);
  metrics.tokens.inc({ ...labels, type: "cache_write" }, run.usage.cacheWriteTokens);
  log.info(
    {
      outcome: run.outcome,
      durationMs: run.durationMs,
      toolCalls: run.toolCalls,
      usage: run.usage,
      errorKind: run.errorKind,
      provider: run.provider,
      model: run.model,
    },
    "turn finished",
  );
}

/** The run record of a finished turn, naming whoever made its last model-call attempt. */
export function runRecordOf(
  t: {
    sessionKey: string;
    runId: string;
    turn: PreparedTurn;
    result: AgentRunResult;
    startedAt: number;
    now: number;
  },
  fallback: { provider: string; model: string },
): RunRecord {
  // The router says who answered, not the runner's configuration (a failover changes it).
  const answeredBy = t.result.attempts.at(-1) ?? fallback;
  return {
    runId: t.runId,
    sessionKey: t.sessionKey,
    trigger: t.turn.runTrigger,
    channel: t.turn.target?.channel ?? null,
    provider: answeredBy.provider,
    model: answeredBy.model,
    startedAt: t.startedAt,
    durationMs: t.now - t.startedAt,
    outcome: t.result.outcome === "answered" || t.result.outcome === "yielded" ? t.result.outcome : "failed",
    usage: t.result.usage,
    toolCalls: t.result.toolCalls,
    modelCalls: t.result.modelCalls,
    errorKind: null,
    error: null,
    attempts: t.result.attempts,
    calls: t.result.calls,
    ...(t.turn.subagent ? { billedSessionKey: t.turn.subagent.billTo } : {}),
  };
}

/** The result of a run that broke before the harness could say how it ended. */
export function failedRun(error: Error): AgentRunResult {
  const none = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  return {
    outcome: "failed",
    final: null,
    usage: none,
    toolCalls: 0,
    modelCalls: 0,
    error,
    attempts: [],
    calls: [],
  };
}
