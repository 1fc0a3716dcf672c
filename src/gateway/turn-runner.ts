/**
 * Runs one turn of a session inside its lane, the same way whatever started it: the source
 * claims the turn's work (queued messages, or a heartbeat's instruction), the harness runs it
 * (`AgentSession.run`), and the answer — or the failure notice — is committed atomically with
 * the inbox state and the outbox rows, then announced on the event bus. A turn aborted by
 * shutdown commits nothing: its messages stay `running` and are redone after restart.
 */
import type { Channel, ChatTarget } from "../channels/types.js";
import type { AgentSession } from "../harness/agent-session.js";
import type { ModelRouter } from "../harness/models/model-router.js";
import type { AgentRunResult } from "../harness/run.js";
import type { SessionFence } from "../store/repos/lease-repo.js";
import type { SessionMode } from "../store/repos/session-repo.js";
import type { CommitTurn, Store } from "../store/types.js";
import { backoffDelayMs } from "../util/backoff.js";
import type { Clock } from "../util/clock.js";
import { newId } from "../util/ids.js";
import type { Logger } from "../util/logger.js";
import type { GatewayEvents } from "./events.js";
import { failureNotice } from "./failure-notice.js";
import type { LaneTaskContext } from "./lanes/types.js";
import { LaneAbortedError } from "./lanes/errors.js";
import type { AbortReason } from "./lanes/types.js";
import type { GatewayMetrics } from "./metrics.js";
import { replyRows } from "./replies.js";
import type { SessionLeases } from "./session-leases.js";
import type { PreparedTurn, TurnSource } from "./turn-sources.js";
import { failedRun, keepTyping, liveText, recordRun, runRecordOf, streamTarget } from "./turn-effects.js";

export interface TurnRunnerOptions {
  store: Store;
  /** The harness: runs a turn from its inputs to its answer. */
  session: AgentSession;
  /** Who answers model calls: the run record falls back to its primary route. */
  router: Pick<ModelRouter, "primary">;
  /** Finds the channel that delivers to a target (limits, typing, live text). */
  channelFor(target: ChatTarget): Channel | undefined;
  events: GatewayEvents;
  /** Session ownership: a turn runs only under its session's lease. */
  leases: SessionLeases;
  /** A turn found its session held by another process (HeldSessionWatch: sweep when it frees). */
  onHeldElsewhere?(sessionKey: string): void;
  /** For the failure notice of a turn the watchdog stopped. */
  progressTimeoutMs: number;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
}

/** What a turn takes from its session row: the `/model` choice and the mode. */
interface SessionSettings {
  model: string | null;
  mode: SessionMode;
}

/** commitTurn attempts before a turn's result is given up (full-jitter backoff from 0.5 s, capped). */
const [COMMIT_ATTEMPTS, COMMIT_RETRY_BASE_MS, COMMIT_RETRY_MAX_MS] = [8, 500, 15_000] as const;

/** Claims, runs and commits turns (see the file header). */
export class TurnRunner {
  readonly #o: TurnRunnerOptions;
  constructor(options: TurnRunnerOptions) {
    this.#o = options;
  }

  /**
   * Runs the next turn of `sessionKey` that `source` prepares, under the session's lease:
   * nothing when another process holds the session (its queue sweep schedules the work once
   * the lease is free) or when the source finds no work.
   */
  async run(sessionKey: string, source: TurnSource, lane: LaneTaskContext): Promise<void> {
    const { store, clock, events, leases } = this.#o;
    const lease = await leases.acquire(sessionKey);
    if (!lease) {
      this.#o.logger.debug({ sessionKey }, "session held by another process; its turn runs there");
      this.#o.onHeldElsewhere?.(sessionKey);
      events.emit({ type: "turn_ended", sessionKey });
      return;
    }
    // An unsaved turn (the store kept failing) keeps its lease, renewed: its messages stay
    // `running` and are redone after a restart, not retried at once against a failing disk.
    let keepLease = false;
    try {
      const { sessionId, model, mode } = await this.#session(sessionKey);
      const runId = newId("run");
      const turn = await source.prepare({ store, sessionKey, sessionId, runId, lease, now: clock.now() });
      if (!turn) return; // another turn (collect/steer) already took the messages
      const log = this.#o.logger.child({ runId, sessionKey, trigger: turn.trigger });
      log.debug({ inboxIds: turn.inboxIds }, "turn started");
      keepLease =
        (await this.#execute(sessionKey, sessionId, runId, { model, mode }, lease, turn, lane, log)) ===
        "unsaved";
    } finally {
      leases.release(sessionKey, lease, { keep: keepLease });
      events.emit({ type: "turn_ended", sessionKey });
    }
  }

  async #session(
    sessionKey: string,
  ): Promise<{ sessionId: string; model: string | null; mode: SessionMode }> {
    const { store, clock } = this.#o;
    const session =
      (await store.sessions.get(sessionKey)) ??
      (await store.sessions.ensure(sessionKey, newId("ses"), null, clock.now()));
    return { sessionId: session.sessionId, model: session.model ?? null, mode: session.mode };
  }

  async #execute(
    sessionKey: string,
    sessionId: string,
    runId: string,
    settings: SessionSettings,
    lease: SessionFence,
    turn: PreparedTurn,
    lane: LaneTaskContext,
    log: Logger,
  ): Promise<"unsaved" | undefined> {
    const o = this.#o;
    const { target } = turn;
    const channel = target ? o.channelFor(target) : undefined;
    const startedAt = o.clock.now();
    const typing = { clock: o.clock, logger: o.logger, signal: lane.signal };
    const stopTyping =
      turn.interactive && target
        ? keepTyping(channel, { ...target, replyTo: turn.replyTo }, typing)
        : () => {};
    try {
      const result = await this.#runSafely(
        sessionKey,
        sessionId,
        runId,
        settings,
        lease,
        turn,
        channel,
        lane,
        log,
      );
      if (result.outcome === "aborted" && isShutdown(result.error, lane.signal)) {
        log.info("turn interrupted by shutdown; it will be redone after restart");
        return;
      }
      // The session's lease was lost (this process stalled past its TTL): the session may run
      // elsewhere now. Nothing of this turn is committed — no failure notice — and its messages,
      // still `running` under the expired lease, are redone by whoever holds the session next.
      if (result.outcome === "aborted" && abortReasonOf(result.error, lane.signal) === "evicted") {
        log.warn("the session's lease was lost mid-turn; its messages are redone under the next lease");
        return;
      }
      const run = runRecordOf(
        { sessionKey, runId, turn, result, startedAt, now: o.clock.now() },
        o.router.primary,
      );
      const final = result.outcome === "answered" ? result.final : null;
      let text: string | null;
      let commit: Omit<CommitTurn, "outbox">;
      const base = {
        sessionKey,
        sessionId,
        runId,
        lease,
        inboxIds: turn.inboxIds,
        run,
        ...(turn.lastTarget ? { lastTarget: turn.lastTarget } : {}),
      };
      if (final) {
        text = turn.deliver(final.text);
        if (text === null && !turn.subagent) log.info("nothing to deliver for this turn's answer");
        commit = { ...base, inboxState: "answered", events: [final] };
      } else if (result.outcome === "yielded") {
        [text, commit] = [null, { ...base, inboxState: "answered", events: [] }]; // ended on purpose, no answer
      } else {
        const notice = failureNotice(result.error, o.progressTimeoutMs);
        if (result.error instanceof LaneAbortedError && result.error.reason === "user_stop")
          run.outcome = "aborted";
        if (notice.kind === "progress_timeout") run.outcome = "timeout";
        run.errorKind = notice.kind;
        run.error = result.error?.message ?? null;
        text = turn.interactive ? notice.text : null;
        if (!turn.interactive) log.warn({ errorKind: notice.kind, err: run.error }, "background turn failed");
        commit = {
          ...base,
          inboxState: "failed",
          error: `${notice.kind}: ${result.error?.message ?? "unknown"}`,
          events: [{ type: "notice", text: notice.text }],
        };
      }
      // A child's end (its result, or why it failed) is written with its last turn.
      if (turn.subagent && result.outcome !== "yielded") {
        const failure = final ? null : (run.error ?? run.errorKind ?? "failed");
        commit = { ...commit, subagent: await turn.subagent.end(final?.text ?? null, failure) };
      }
      const outbox =
        text === null || !target
          ? []
          : replyRows(channel, target, text, {
              kind: final ? "reply" : "notice",
              replyTo: turn.replyTo,
              recipientId: turn.recipientId,
            });
      const committed = await this.#commit({ ...commit, outbox }, lane.signal, log);
      if (committed === "unsaved") {
        o.events.emit({ type: "turn_unsaved", sessionKey, inboxIds: turn.inboxIds });
        return "unsaved";
      }
      // Nothing of this turn goes to its chat: a preview it (or an earlier attempt) showed goes.
      if ((!committed || outbox.length === 0) && turn.interactive && target)
        channel?.streamDiscard?.(streamTarget(target, turn));
      if (!committed) {
        log.warn(
          { inboxIds: turn.inboxIds },
          "turn result discarded: its messages were finished by another run",
        );
        return;
      }
      recordRun(this.#o.metrics, run, log);
      o.events.emit({
        type: "turn_committed",
        sessionKey,
        inboxIds: turn.inboxIds,
        state: run.outcome === "answered" ? "answered" : "failed",
        replies: outbox.map((row) => row.text),
        usage: run.usage,
        run,
      });
      if (outbox.length > 0) o.events.emit({ type: "replies_committed" });
    } finally {
      stopTyping();
    }
  }

  /** The harness run; a bug or a broken store becomes a failed result (the person is told). */
  async #runSafely(
    sessionKey: string,
    sessionId: string,
    runId: string,
    { model, mode }: SessionSettings,
    lease: SessionFence,
    turn: PreparedTurn,
    channel: Channel | undefined,
    lane: LaneTaskContext,
    log: Logger,
  ): Promise<AgentRunResult> {
    const o = this.#o;
    const { target } = turn;
    try {
      return await o.session.run({
        sessionKey,
        sessionId,
        runId,
        trigger: turn.trigger,
        origin: turn.runTrigger === "user" ? "human" : turn.runTrigger,
        modelOverride: model,
        mode,
        chat: turn.chat,
        asker: turn.subagent?.asker ?? {
          privateChat: turn.chat.privateChat,
          groupChat: turn.chat.chatKind === "group",
          senderId: turn.recipientId,
        },
        ...(turn.subagent
          ? {
              helper: turn.subagent.helper,
              limits: { maxToolCallsPerRun: turn.subagent.maxToolCallsPerRun },
              ...(turn.subagent.policyTarget ? { replyTarget: turn.subagent.policyTarget } : {}),
            }
          : target
            ? { replyTarget: target }
            : {}),
        lease,
        inputs: turn.inputs,
        ...(turn.tools ? { tools: turn.tools } : {}),
        lane,
        log,
        ...(turn.steer
          ? {
              takeSteered: async () => {
                const steer = { all: true, lease };
                const more = await o.store.inbox.claim(sessionKey, sessionId, runId, steer, o.clock.now());
                for (const r of more) turn.inboxIds.push(r.id);
                return more.map((r) => r.message.text);
              },
            }
          : {}),
        onProviderError: (error) =>
          o.metrics.providerErrors.inc({
            provider: error.provider ?? o.router.primary.provider,
            kind: error.kind,
          }),
        // Live text, its replacement after a failed attempt, and a notice of a long wait.
        ...liveText(turn.interactive ? channel : undefined, target ?? undefined, turn, runId, log),
      });
    } catch (err) {
      // A bug or a broken store must not strand the claimed messages in `running`.
      log.error({ err }, "turn failed unexpectedly");
      return failedRun(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /**
   * commitTurn, retried with backoff while the store fails (a full disk, a locked file): the
   * answer exists only in memory until it is committed. Gives up after COMMIT_ATTEMPTS or on
   * shutdown; the messages then stay `running` and are redone after restart, so nothing is lost.
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
        try {
          await clock.sleep(
            backoffDelayMs(attempt, { baseMs: COMMIT_RETRY_BASE_MS, maxMs: COMMIT_RETRY_MAX_MS }),
            signal,
          );
        } catch {
          return "unsaved"; // aborted while waiting: shutdown, or /stop of a finished turn
        }
      }
    }
  }
}

function isShutdown(error: Error | null, signal: AbortSignal): boolean {
  return abortReasonOf(error, signal) === "shutdown";
}

/** Why the lane aborted the turn (the signal's reason first), if it did. */
function abortReasonOf(error: Error | null, signal: AbortSignal): AbortReason | undefined {
  const reason: unknown = signal.reason;
  if (reason instanceof LaneAbortedError) return reason.reason;
  return error instanceof LaneAbortedError ? error.reason : undefined;
}
