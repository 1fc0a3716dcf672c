/**
 * Runs one turn of a session inside its lane: claim the session's queued messages (or, for a
 * heartbeat, record its instruction), load and repair the transcript, assemble the prompt, run
 * the agent, and commit the answer (or the failure notice) atomically with the inbox state. A
 * turn aborted by shutdown commits nothing: its messages stay `running` and are redone from the
 * transcript after restart.
 */
import type { Channel, ChatTarget } from "../channels/types.js";
import { heartbeatDelivery, heartbeatTriggerText } from "../harness/heartbeat.js";
import { assembleSystemPrompt } from "../harness/prompt.js";
import { type ModelProvider, type TokenUsage, ZERO_USAGE } from "../harness/providers/types.js";
import { type AgentRunResult, runAgent } from "../harness/run.js";
import type { ToolRegistry } from "../harness/tools/registry.js";
import { findOrphanedToolCalls, toChatMessages } from "../harness/transcript.js";
import type { CommitTurn, InboxRecord, RunRecord, RunTrigger, Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import { newId } from "../util/ids.js";
import { sleep } from "../util/sleep.js";
import type { Logger } from "../util/logger.js";
import { failureNotice } from "./failure-notice.js";
import type { LaneTaskContext } from "./lanes/types.js";
import { LaneAbortedError } from "./lanes/types.js";
import type { GatewayMetrics } from "./metrics.js";
import { chatTargetOf, replyRows } from "./replies.js";

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
  /** Called after a turn committed, with every inbox id it finished and the run's token usage. */
  onCommitted(inboxIds: number[], state: "answered" | "failed", replies: string[], usage: TokenUsage): void;
  /** Called when a turn's result could not be saved (the store kept failing); ids stay `running`. */
  onUnsaved(inboxIds: number[]): void;
}

/** Typing indicators are refreshed this often while a turn works (Telegram's lasts ~5 s). */
const TYPING_REFRESH_MS = 4_500;
/** commitTurn attempts before a turn's result is given up (backoff 0.5 s doubling, capped). */
const COMMIT_ATTEMPTS = 8;
const COMMIT_RETRY_MAX_MS = 15_000;

/** One turn, whatever started it: what it answers, where replies go, how they are chosen. */
interface TurnSpec {
  sessionKey: string;
  sessionId: string;
  runId: string;
  trigger: RunTrigger;
  /** Where replies go; null: nowhere (the turn only updates the transcript). */
  target: ChatTarget | null;
  /** Inbox rows the turn answers; steer mode adds to it while the turn runs. */
  inboxIds: number[];
  replyTo?: string;
  recipientId?: string;
  /** Recorded as the session's last target (a direct chat). */
  lastTarget?: ChatTarget;
  steer: boolean;
  /**
   * A person is waiting: typing is shown, live text streamed, and a failure is told in the chat.
   * False for background work (a heartbeat), whose failures are only logged and recorded.
   */
  interactive: boolean;
  /** The text of the final answer that is delivered; null: deliver nothing. */
  deliver(answer: string): string | null;
  log: Logger;
}

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
    const { store, clock } = this.#o;
    const sessionId = await this.#sessionId(sessionKey);
    const runId = newId("run");
    const claimed = await store.inbox.claim(
      sessionKey,
      sessionId,
      runId,
      { all: mode.collectAll },
      clock.now(),
    );
    if (claimed.length === 0) return; // another turn (collect/steer) already took them
    const last = claimed[claimed.length - 1] as InboxRecord;
    const m = last.message;
    const target = chatTargetOf(m);
    const log = this.#o.logger.child({ runId, sessionKey });
    log.debug({ inboxIds: claimed.map((r) => r.id), attempt: last.attempts }, "turn started");
    await this.#execute(
      {
        sessionKey,
        sessionId,
        runId,
        trigger: last.attempts > 1 ? "recovery" : "user",
        target,
        inboxIds: claimed.map((r) => r.id),
        replyTo: m.platformMessageId,
        recipientId: m.senderId,
        ...(m.isDirect ? { lastTarget: target } : {}),
        steer: mode.steer,
        interactive: true,
        deliver: (answer) => (answer.trim() === "" ? null : answer),
        log,
      },
      lane,
    );
  }

  /**
   * A heartbeat turn in `sessionKey`: its instruction and the `checklist` (HEARTBEAT.md) are
   * recorded in the transcript, and only an answer that is more than an acknowledgement goes
   * to `target`. A failure is logged and recorded, never sent to the person.
   */
  async runHeartbeat(
    sessionKey: string,
    options: { checklist: string; target: ChatTarget | null; ackMaxChars: number },
    lane: LaneTaskContext,
  ): Promise<void> {
    const { store, clock } = this.#o;
    const sessionId = await this.#sessionId(sessionKey);
    const runId = newId("run");
    const log = this.#o.logger.child({ runId, sessionKey, trigger: "heartbeat" });
    await store.transcript.append(
      sessionKey,
      sessionId,
      runId,
      [{ type: "trigger", origin: "heartbeat", text: heartbeatTriggerText(options.checklist) }],
      clock.now(),
    );
    await this.#execute(
      {
        sessionKey,
        sessionId,
        runId,
        trigger: "heartbeat",
        target: options.target,
        // The target is a direct chat: its chat id names the person (the HTTP mailbox key).
        ...(options.target ? { recipientId: options.target.chatId } : {}),
        inboxIds: [],
        steer: false,
        interactive: false,
        deliver: (answer) => heartbeatDelivery(answer, options.ackMaxChars),
        log,
      },
      lane,
    );
  }

  async #sessionId(sessionKey: string): Promise<string> {
    const { store, clock } = this.#o;
    const session = await store.sessions.get(sessionKey);
    if (session) return session.sessionId;
    return (await store.sessions.ensure(sessionKey, newId("ses"), null, clock.now())).sessionId;
  }

  async #execute(spec: TurnSpec, lane: LaneTaskContext): Promise<void> {
    const o = this.#o;
    const { clock } = o;
    const { sessionKey, runId, target, log } = spec;
    const channel = target ? o.channelFor(target) : undefined;
    const startedAt = clock.now();
    const stopTyping = spec.interactive && target ? this.#keepTyping(channel, target, lane.signal) : () => {};
    try {
      let result: AgentRunResult;
      try {
        result = await this.#runAgent(spec, channel, lane);
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
      const run: RunRecord = {
        runId,
        sessionKey,
        trigger: spec.trigger,
        channel: target?.channel ?? null,
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
      const final = result.outcome === "answered" ? result.final : null;
      let text: string | null;
      let turn: Omit<CommitTurn, "outbox">;
      if (final) {
        text = spec.deliver(final.text);
        if (text === null) log.info("nothing to deliver for this turn's answer");
        turn = { ...this.#turnBase(spec, run), inboxState: "answered", events: [final] };
      } else {
        const notice = failureNotice(result.error, o.progressTimeoutMs);
        if (result.error instanceof LaneAbortedError && result.error.reason === "user_stop")
          run.outcome = "aborted";
        if (notice.kind === "progress_timeout") run.outcome = "timeout";
        run.errorKind = notice.kind;
        run.error = result.error?.message ?? null;
        text = spec.interactive ? notice.text : null;
        if (!spec.interactive) log.warn({ errorKind: notice.kind, err: run.error }, "background turn failed");
        turn = {
          ...this.#turnBase(spec, run),
          inboxState: "failed",
          error: `${notice.kind}: ${result.error?.message ?? "unknown"}`,
          events: [{ type: "notice", text: notice.text }],
        };
      }
      const outbox =
        text === null || !target
          ? []
          : replyRows(channel, target, text, {
              kind: final ? "reply" : "notice",
              replyTo: spec.replyTo,
              recipientId: spec.recipientId,
            });
      const replies = outbox.map((row) => row.text);
      const committed = await this.#commit({ ...turn, outbox }, lane.signal, log);
      if (committed === "unsaved") {
        o.onUnsaved(spec.inboxIds);
        return;
      }
      if (!committed) {
        log.warn(
          { inboxIds: spec.inboxIds },
          "turn result discarded: its messages were finished by another run",
        );
        return;
      }
      this.#record(run, result, durationMs, log);
      o.onCommitted(spec.inboxIds, run.outcome === "answered" ? "answered" : "failed", replies, run.usage);
    } finally {
      stopTyping();
    }
  }

  async #runAgent(
    spec: TurnSpec,
    channel: Channel | undefined,
    lane: LaneTaskContext,
  ): Promise<AgentRunResult> {
    const o = this.#o;
    const { store, clock } = o;
    const { sessionKey, sessionId, runId, target, log, inboxIds } = spec;
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
    const stream = spec.interactive && target ? channel?.streamDelta?.bind(channel) : undefined;
    return runAgent({
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
      append: (payloads) => store.transcript.append(sessionKey, sessionId, runId, payloads, clock.now()),
      takeSteered: !spec.steer
        ? undefined
        : async () => {
            const more = await store.inbox.claim(sessionKey, sessionId, runId, { all: true }, clock.now());
            for (const r of more) inboxIds.push(r.id);
            return more.map((r) => r.message.text);
          },
      onProviderError: (error) =>
        o.metrics.providerErrors.inc({ provider: error.provider ?? o.provider.id, kind: error.kind }),
      // `inboxIds` is the live array: messages steered in later get the rest of the text.
      onTextDelta:
        stream && target
          ? (delta) =>
              stream({ ...target, ...(spec.replyTo ? { replyTo: spec.replyTo } : {}), inboxIds }, delta)
          : undefined,
    });
  }

  #turnBase(spec: TurnSpec, run: RunRecord): Omit<CommitTurn, "outbox" | "inboxState" | "events"> {
    return {
      sessionKey: spec.sessionKey,
      sessionId: spec.sessionId,
      runId: spec.runId,
      inboxIds: spec.inboxIds,
      run,
      ...(spec.lastTarget ? { lastTarget: spec.lastTarget } : {}),
    };
  }

  #record(run: RunRecord, result: AgentRunResult, durationMs: number, log: Logger): void {
    const { metrics, provider, model } = this.#o;
    metrics.runs.inc({ trigger: run.trigger, outcome: run.outcome });
    metrics.runDuration.observe(durationMs / 1000);
    const labels = { provider: provider.id, model };
    metrics.tokens.inc({ ...labels, type: "input" }, result.usage.inputTokens);
    metrics.tokens.inc({ ...labels, type: "output" }, result.usage.outputTokens);
    metrics.tokens.inc({ ...labels, type: "cache_read" }, result.usage.cacheReadTokens);
    metrics.tokens.inc({ ...labels, type: "cache_write" }, result.usage.cacheWriteTokens);
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
  }

  /**
   * commitTurn, retried with backoff while the store fails (a full disk, a locked file): the
   * answer exists only in memory until it is committed. Gives up after ~45 s or on shutdown;
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
        await sleep(Math.min(COMMIT_RETRY_MAX_MS, 250 * 2 ** attempt), signal);
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

function isShutdown(error: Error | null, signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  if (reason instanceof LaneAbortedError) return reason.reason === "shutdown";
  return error instanceof LaneAbortedError && error.reason === "shutdown";
}
