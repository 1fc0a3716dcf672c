/**
 * Runs one turn of a session inside its lane: claim the session's queued messages, load and
 * repair the transcript, assemble the prompt, run the agent, and commit the answer (or the
 * failure notice) atomically with the inbox state. A turn aborted by shutdown commits nothing:
 * its messages stay `running` and are redone from the transcript after restart.
 */
import type { Channel, ChatTarget } from "../channels/types.js";
import { chunkText } from "../channels/chunking.js";
import { assembleSystemPrompt } from "../harness/prompt.js";
import { type ModelProvider, ZERO_USAGE } from "../harness/providers/types.js";
import { type AgentRunResult, runAgent } from "../harness/run.js";
import type { ToolRegistry } from "../harness/tools/registry.js";
import { findOrphanedToolCalls, toChatMessages } from "../harness/transcript.js";
import type { CommitTurn, InboxRecord, OutboxInsert, RunRecord, Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import { newId } from "../util/ids.js";
import type { Logger } from "../util/logger.js";
import { failureNotice } from "./failure-notice.js";
import type { LaneTaskContext } from "./lanes/types.js";
import { LaneAbortedError } from "./lanes/types.js";
import type { GatewayMetrics } from "./metrics.js";

export interface TurnRunnerOptions {
  store: Store;
  provider: ModelProvider;
  /** Model name sent to the provider (without the provider prefix). */
  model: string;
  tools: ToolRegistry;
  workspaceDir: string;
  maxTokens: number;
  maxToolCallsPerRun: number;
  historyLimit: number;
  progressTimeoutMs: number;
  bootstrapMaxChars: number;
  bootstrapTotalMaxChars: number;
  /** Finds the channel that delivers to a target (for limits, typing, live deltas). */
  channelFor(target: ChatTarget): Channel | undefined;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
  /** Called after a turn committed, with every inbox id it finished. */
  onCommitted(inboxIds: number[], state: "answered" | "failed", replies: string[]): void;
  /** Called when a turn's result could not be saved (the store kept failing); ids stay `running`. */
  onUnsaved(inboxIds: number[]): void;
}

/** Typing indicators are refreshed this often while a turn works (Telegram's lasts ~5 s). */
const TYPING_REFRESH_MS = 4_500;
/** commitTurn attempts before a turn's result is given up (backoff 0.5 s doubling, capped). */
const COMMIT_ATTEMPTS = 8;
const COMMIT_RETRY_MAX_MS = 15_000;

export class TurnRunner {
  readonly #o: TurnRunnerOptions;
  constructor(options: TurnRunnerOptions) {
    this.#o = options;
  }

  /**
   * Runs the next turn of `sessionKey`: claims its oldest queued message, or all of them with
   * `collectAll`; with `steer`, messages queued while it runs join it at each tool boundary.
   */
  async run(
    sessionKey: string,
    mode: { collectAll: boolean; steer: boolean },
    lane: LaneTaskContext,
  ): Promise<void> {
    const o = this.#o;
    const { store, clock } = o;
    const session = await store.sessions.get(sessionKey);
    const sessionId = session?.sessionId ?? newId("ses");
    if (!session) await store.sessions.ensure(sessionKey, sessionId, null, clock.now());
    const runId = newId("run");
    const claimed = await store.inbox.claim(
      sessionKey,
      sessionId,
      runId,
      { all: mode.collectAll },
      clock.now(),
    );
    if (claimed.length === 0) return; // another turn (collect/steer) already took them
    const inboxIds = claimed.map((r) => r.id);
    const last = claimed[claimed.length - 1] as InboxRecord;
    const target: ChatTarget = {
      channel: last.message.channel,
      accountId: last.message.accountId,
      chatId: last.message.chatId,
      ...(last.message.threadId ? { threadId: last.message.threadId } : {}),
    };
    const channel = o.channelFor(target);
    const log = o.logger.child({ runId, sessionKey });
    const startedAt = clock.now();
    log.debug({ inboxIds, attempt: last.attempts }, "turn started");

    const stopTyping = this.#keepTyping(channel, target, lane.signal);
    try {
      let result: AgentRunResult;
      try {
        result = await (async () => {
          const tail = await store.transcript.tail(sessionKey, sessionId, o.historyLimit);
          const repairs = findOrphanedToolCalls(tail);
          if (repairs.length > 0) {
            log.warn(
              { count: repairs.length },
              "transcript repair: tool calls left without results by an interruption",
            );
            await store.transcript.append(sessionKey, sessionId, runId, repairs, clock.now());
          }
          const prompt = await assembleSystemPrompt({
            workspaceDir: o.workspaceDir,
            maxCharsPerFile: o.bootstrapMaxChars,
            maxTotalChars: o.bootstrapTotalMaxChars,
          });
          return await runAgent({
            runId,
            sessionKey,
            provider: o.provider,
            model: o.model,
            system: prompt.text,
            messages: toChatMessages(tail),
            tools: o.tools,
            workspaceDir: o.workspaceDir,
            maxTokens: o.maxTokens,
            maxToolCallsPerRun: o.maxToolCallsPerRun,
            lane,
            logger: log,
            append: (payloads) =>
              store.transcript.append(sessionKey, sessionId, runId, payloads, clock.now()),
            takeSteered: !mode.steer
              ? undefined
              : async () => {
                  const more = await store.inbox.claim(
                    sessionKey,
                    sessionId,
                    runId,
                    { all: true },
                    clock.now(),
                  );
                  for (const r of more) inboxIds.push(r.id);
                  return more.map((r) => r.message.text);
                },
            onProviderError: (error) =>
              o.metrics.providerErrors.inc({ provider: error.provider ?? o.provider.id, kind: error.kind }),
            onTextDelta: channel?.streamDelta
              ? (delta) =>
                  channel.streamDelta?.({ ...target, recipientId: last.message.senderId, inboxIds }, delta)
              : undefined,
          });
        })();
      } catch (err) {
        // A bug or a broken store must not strand the claimed messages in `running`:
        // the person gets the failure notice like for any other failed turn.
        log.error({ err }, "turn failed unexpectedly");
        const error = err instanceof Error ? err : new Error(String(err));
        result = { outcome: "failed", final: null, usage: ZERO_USAGE, toolCalls: 0, modelCalls: 0, error };
      }

      if (result.outcome === "aborted" && isShutdown(result.error, lane.signal)) {
        log.info("turn interrupted by shutdown; it will be redone after restart");
        return;
      }
      const durationMs = clock.now() - startedAt;
      const base: Omit<OutboxInsert, "text" | "seq" | "kind"> = {
        target,
        replyTo: last.message.platformMessageId,
        recipientId: last.message.senderId,
        ...(channel?.deliversOnCommit ? { delivered: true } : {}),
      };
      const run: RunRecord = {
        runId,
        sessionKey,
        trigger: last.attempts > 1 ? "recovery" : "user",
        channel: target.channel,
        provider: o.provider.id,
        model: o.model,
        startedAt,
        durationMs,
        outcome: result.outcome === "answered" ? "answered" : "failed",
        usage: result.usage,
        toolCalls: result.toolCalls,
        modelCalls: result.modelCalls,
        errorKind: null,
        error: null,
      };
      let committed: boolean | "unsaved";
      let replies: string[];
      if (result.outcome === "answered" && result.final) {
        // An empty answer is a deliberate silence (nothing to say): answered, nothing sent.
        replies =
          result.final.text.trim() === ""
            ? []
            : channel?.prepare
              ? channel.prepare(result.final.text)
              : chunkText(result.final.text, channel?.limits.maxMessageChars ?? 4000);
        if (replies.length === 0) log.info("the model answered with no text; nothing is sent");
        committed = await this.#commit(
          {
            sessionKey,
            sessionId,
            runId,
            inboxIds,
            inboxState: "answered",
            events: [result.final],
            outbox: replies.map((text, seq) => ({ ...base, text, seq, kind: "reply" as const })),
            run,
          },
          lane.signal,
          log,
        );
      } else {
        const notice = failureNotice(result.error, o.progressTimeoutMs);
        if (result.error instanceof LaneAbortedError && result.error.reason === "user_stop")
          run.outcome = "aborted";
        if (notice.kind === "progress_timeout") run.outcome = "timeout";
        run.errorKind = notice.kind;
        run.error = result.error?.message ?? null;
        replies = channel?.prepare ? channel.prepare(notice.text) : [notice.text];
        committed = await this.#commit(
          {
            sessionKey,
            sessionId,
            runId,
            inboxIds,
            inboxState: "failed",
            error: `${notice.kind}: ${result.error?.message ?? "unknown"}`,
            events: [{ type: "notice", text: notice.text }],
            outbox: replies.map((text, seq) => ({ ...base, text, seq, kind: "notice" as const })),
            run,
          },
          lane.signal,
          log,
        );
      }
      if (committed === "unsaved") {
        o.onUnsaved(inboxIds);
        return;
      }
      if (!committed) {
        log.warn({ inboxIds }, "turn result discarded: its messages were finished by another run");
        return;
      }
      o.metrics.runs.inc({ trigger: run.trigger, outcome: run.outcome });
      o.metrics.runDuration.observe(durationMs / 1000);
      const labels = { provider: o.provider.id, model: o.model };
      o.metrics.tokens.inc({ ...labels, type: "input" }, result.usage.inputTokens);
      o.metrics.tokens.inc({ ...labels, type: "output" }, result.usage.outputTokens);
      o.metrics.tokens.inc({ ...labels, type: "cache_read" }, result.usage.cacheReadTokens);
      o.metrics.tokens.inc({ ...labels, type: "cache_write" }, result.usage.cacheWriteTokens);
      log.info(
        {
          outcome: run.outcome,
          durationMs,
          toolCalls: result.toolCalls,
          usage: result.usage,
          errorKind: run.errorKind,
        },
        "turn finished",
      );
      o.onCommitted(inboxIds, run.outcome === "answered" ? "answered" : "failed", replies);
    } finally {
      stopTyping();
    }
  }

  /**
   * commitTurn, retried with backoff while the store fails (a full disk, a locked file): the
   * answer exists only in memory until it is committed. Gives up after ~1 minute or on shutdown;
   * the messages then stay `running` and are redone after restart, so nothing is lost.
   */
  async #commit(turn: CommitTurn, signal: AbortSignal, log: Logger): Promise<boolean | "unsaved"> {
    const { store, clock } = this.#o;
    for (let attempt = 1; ; attempt++) {
      try {
        return await store.commitTurn(turn, clock.now());
      } catch (err) {
        const giveUp = attempt >= COMMIT_ATTEMPTS || isShutdown(null, signal);
        log.error(
          { err, attempt, inboxIds: turn.inboxIds },
          giveUp
            ? "could not save the turn; its messages stay unfinished and are redone after restart"
            : "could not save the turn; retrying",
        );
        if (giveUp) return "unsaved";
        await sleep(Math.min(COMMIT_RETRY_MAX_MS, 250 * 2 ** attempt));
      }
    }
  }

  #keepTyping(channel: Channel | undefined, target: ChatTarget, signal: AbortSignal): () => void {
    if (!channel?.typing) return () => {};
    const send = () => {
      channel
        .typing?.(target)
        .catch((err: unknown) => this.#o.logger.debug({ err }, "typing indicator failed"));
    };
    send();
    const timer = setInterval(send, TYPING_REFRESH_MS);
    timer.unref();
    const stop = () => clearInterval(timer);
    signal.addEventListener("abort", stop, { once: true });
    return stop;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isShutdown(error: Error | null, signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  if (reason instanceof LaneAbortedError) return reason.reason === "shutdown";
  return error instanceof LaneAbortedError && error.reason === "shutdown";
}
