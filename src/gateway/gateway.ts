/**
 * The gateway: the router every channel delivers to (dedupe, commands, access, session key),
 * the scheduler that turns queued inbox rows into lane tasks, start-up recovery, and graceful
 * shutdown. The inbox is the source of truth: a lane task is only a wake-up that claims the
 * session's oldest queued message(s) when it starts.
 */
import {
  type AcceptResult,
  type Channel,
  type ChatAnswer,
  type ChatTarget,
  type InboundMessage,
  type InboundSink,
  SinkUnavailableError,
} from "../channels/types.js";
import type { ModelProvider } from "../harness/providers/types.js";
import {
  COMMAND_REASON_PREFIX,
  type InboxRecord,
  NOT_MENTIONED,
  type Store,
  StoreError,
} from "../store/types.js";
import type { Clock } from "../util/clock.js";
import { newId } from "../util/ids.js";
import type { Logger } from "../util/logger.js";
import { type AccessPolicy, allowAll } from "./access.js";
import { helpText, parseCommand } from "./commands.js";
import type { LaneQueue } from "./lanes/lane-queue.js";
import type { LanePriority } from "./lanes/types.js";
import { LaneAbortedError } from "./lanes/types.js";
import type { GatewayMetrics } from "./metrics.js";
import type { OutboxDispatcher } from "./outbox-dispatcher.js";
import { chatTargetOf, replyRows } from "./replies.js";
import { type DmScope, sessionKeyFor } from "./session-key.js";
import type { TurnRunner } from "./turn-runner.js";

export type QueueMode = "followup" | "collect" | "steer";

export interface GatewayOptions {
  agentId: string;
  dmScope: DmScope;
  queueMode: QueueMode;
  store: Store;
  lanes: LaneQueue;
  turns: TurnRunner;
  outbox: OutboxDispatcher;
  provider: ModelProvider;
  /** "provider/model" as configured. */
  modelRef: string;
  /** Access policy per channel name; channels without one (console, HTTP) allow everyone. */
  access?: Partial<Record<string, AccessPolicy>>;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
}

/** What a waiting caller (HTTP request) learns when its message is finished. */
export type Answer = ChatAnswer;

export class Gateway implements InboundSink {
  readonly #o: GatewayOptions;
  readonly #channels = new Map<string, Channel>();
  readonly #waiters = new Map<number, Array<(answer: Answer) => void>>();
  /** Sessions with a collect/steer turn task waiting to start. */
  readonly #waitingTurn = new Set<string>();
  /** Inbox ids being routed now: a redelivery of one of them must not route it a second time. */
  readonly #routing = new Set<number>();
  #ready = false;
  /** False until `open()`: replies are committed but not sent before the channels run. */
  #open = false;
  #accepting = true;
  readonly startedAt: number;

  constructor(options: GatewayOptions) {
    this.#o = options;
    this.startedAt = options.clock.now();
  }

  get ready(): boolean {
    return this.#ready;
  }

  addChannel(channel: Channel): void {
    this.#channels.set(`${channel.name}:${channel.accountId}`, channel);
  }

  channels(): Channel[] {
    return [...this.#channels.values()];
  }

  channelFor = (target: ChatTarget): Channel | undefined =>
    this.#channels.get(`${target.channel}:${target.accountId}`);

  /**
   * The router. Resolves only after the message is durably committed (or rejected); rejects
   * with SinkUnavailableError when it could not be (shutting down, the store failing), so the
   * channel leaves it to the platform to deliver again.
   */
  async accept(message: InboundMessage): Promise<AcceptResult> {
    try {
      return await this.#accept(message);
    } catch (err) {
      if (err instanceof StoreError)
        throw new SinkUnavailableError(`the message could not be saved: ${err.message}`, 1_000, {
          cause: err,
        });
      throw err;
    }
  }

  async #accept(message: InboundMessage): Promise<AcceptResult> {
    const { store, clock, logger, metrics } = this.#o;
    if (!this.#accepting) {
      metrics.inbound.inc({ channel: message.channel, verdict: "draining" });
      // Not committed: the channel must not acknowledge it, so the platform delivers it again.
      throw new SinkUnavailableError("the gateway is shutting down; the message was not accepted");
    }
    const sessionKey = sessionKeyFor(message, this.#o.agentId, this.#o.dmScope);
    const access = this.#accessFor(message.channel);
    if (!message.isDirect && message.mentionsBot && access.groupHistoryLimit > 0 && !message.groupContext) {
      const earlier = await store.inbox.groupContext(sessionKey, access.groupHistoryLimit);
      if (earlier.length > 0) {
        message = {
          ...message,
          groupContext: earlier.map((r) => ({ senderName: r.message.senderName, text: r.message.text })),
        };
      }
    }
    // A message the policy admits without side effects, and no command, is committed straight
    // into the queue: one step. Anything else is committed `received`, then routed.
    const admitted = parseCommand(message.text) === undefined && (await this.admits(message));
    const { record, duplicate } = await store.inbox.receive(
      message,
      sessionKey,
      clock.now(),
      admitted ? "queued" : "received",
    );
    if (duplicate) {
      if (record.state === "received" && !this.#routing.has(record.id)) {
        // Committed earlier, but routing failed (a store error): finish what the first try began.
        logger.warn({ inboxId: record.id }, "redelivered message was never routed; routing it now");
        return this.#route(record);
      }
      metrics.inbound.inc({ channel: message.channel, verdict: "duplicate" });
      logger.info({ inboxId: record.id, dedupeKey: record.dedupeKey }, "duplicate delivery ignored");
      return { status: "duplicate", inboxId: record.id, sessionKey };
    }
    return admitted ? this.#queued(record, true) : this.#route(record);
  }

  /**
   * Access, commands, then queue. Also used at start-up for rows left `received` by a crash
   * (`schedule: false`: recovery schedules every session with queued rows once, afterwards).
   */
  async #route(record: InboxRecord, schedule = true): Promise<AcceptResult> {
    this.#routing.add(record.id);
    try {
      return await this.#routeOnce(record, schedule);
    } finally {
      this.#routing.delete(record.id);
    }
  }

  async #routeOnce(record: InboxRecord, schedule: boolean): Promise<AcceptResult> {
    const { store, clock, logger, metrics } = this.#o;
    const message = record.message;
    const sessionKey = record.sessionKey;
    const verdict = await this.#accessFor(message.channel).check(message);
    if (!verdict.allowed) {
      if (verdict.reply) await this.#rejectWithReply(record, verdict.reason, verdict.reply);
      else await store.inbox.reject(record.id, verdict.reason, clock.now());
      if (verdict.reason === NOT_MENTIONED) {
        metrics.inbound.inc({ channel: message.channel, verdict: "context" });
        logger.debug(
          { inboxId: record.id, chatId: message.chatId },
          "group message kept as context (bot not addressed)",
        );
      } else {
        metrics.inbound.inc({ channel: message.channel, verdict: "rejected" });
        logger.info(
          { inboxId: record.id, senderId: message.senderId, reason: verdict.reason },
          "inbound rejected",
        );
      }
      this.#settle(record.id, {
        inboxId: record.id,
        state: "rejected",
        replies: verdict.reply ? [verdict.reply] : [],
      });
      return {
        status: "rejected",
        reason: verdict.reason,
        sessionKey,
        ...(verdict.reply ? { reply: verdict.reply } : {}),
      };
    }
    const command = parseCommand(message.text);
    if (command) {
      const reply = await this.#runCommand(command, sessionKey);
      await this.#rejectWithReply(record, `${COMMAND_REASON_PREFIX}${command}`, reply);
      metrics.inbound.inc({ channel: message.channel, verdict: "command" });
      this.#settle(record.id, { inboxId: record.id, state: "rejected", replies: [reply] });
      return { status: "command", reply, sessionKey };
    }
    await store.inbox.markQueued(record.id, clock.now());
    return this.#queued(record, schedule);
  }

  /** A message is in the queue: count it and (unless recovery schedules later) wake its lane. */
  #queued(record: InboxRecord, schedule: boolean): AcceptResult {
    this.#o.metrics.inbound.inc({ channel: record.message.channel, verdict: "accepted" });
    if (schedule) this.#schedule(record.sessionKey, "human", 1);
    return { status: "accepted", inboxId: record.id, sessionKey: record.sessionKey };
  }

  /**
   * A gateway answer without a run (pairing code, command reply) goes through the outbox like
   * any reply: committed with the inbox verdict, then sent with retries, exactly once.
   */
  async #rejectWithReply(record: InboxRecord, reason: string, text: string): Promise<void> {
    const m = record.message;
    const target = chatTargetOf(m);
    const rows = replyRows(this.channelFor(target), target, text, {
      kind: "notice",
      replyTo: m.platformMessageId,
      recipientId: m.senderId,
    });
    await this.#o.store.rejectWithReply(record.id, reason, rows, this.#o.clock.now());
    this.#kickOutbox();
  }

  #kickOutbox(): void {
    // After the waiters' continuations (an HTTP answer goes out first), before any timer.
    if (this.#open) setImmediate(() => this.#o.outbox.kick());
  }

  /** InboundSink.admits: the channel's access policy, without side effects. */
  async admits(message: InboundMessage): Promise<boolean> {
    const policy = this.#accessFor(message.channel);
    return policy.admits ? policy.admits(message) : true;
  }

  #accessFor(channel: string): AccessPolicy {
    return this.#o.access?.[channel] ?? allowAll;
  }

  /** Resolves when the inbox row is finished; rejects if `signal` aborts first. */
  async waitForAnswer(inboxId: number, signal?: AbortSignal): Promise<Answer> {
    const pending = new Promise<Answer>((resolve, reject) => {
      const list = this.#waiters.get(inboxId) ?? [];
      const waiter = (answer: Answer) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(answer);
      };
      const onAbort = () => {
        const rest = (this.#waiters.get(inboxId) ?? []).filter((w) => w !== waiter);
        if (rest.length > 0) this.#waiters.set(inboxId, rest);
        else this.#waiters.delete(inboxId);
        reject(signal?.reason ?? new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      list.push(waiter);
      this.#waiters.set(inboxId, list);
    });
    // Already finished before we registered?
    const record = await this.#o.store.inbox.get(inboxId);
    if (!record) {
      this.#settle(inboxId, { inboxId, state: "rejected", replies: [] });
    } else if (record.state === "answered" || record.state === "failed") {
      const [rows, run] = await Promise.all([
        this.#o.store.outbox.listForInbox(inboxId),
        record.runId ? this.#o.store.runs.get(record.runId) : undefined,
      ]);
      this.#settle(inboxId, {
        inboxId,
        state: record.state,
        replies: rows.map((r) => r.text),
        ...(run ? { usage: run.usage } : {}),
      });
    } else if (record.state === "rejected") {
      this.#settle(inboxId, { inboxId, state: "rejected", replies: [] });
    }
    return pending;
  }

  #settle(inboxId: number, answer: Answer): void {
    const list = this.#waiters.get(inboxId);
    if (!list) return;
    this.#waiters.delete(inboxId);
    for (const w of list) w(answer);
  }

  /** TurnRunner callback. */
  onCommitted = (
    inboxIds: number[],
    state: "answered" | "failed",
    replies: string[],
    usage?: ChatAnswer["usage"],
  ): void => {
    for (const id of inboxIds) this.#settle(id, { inboxId: id, state, replies, ...(usage ? { usage } : {}) });
    this.#kickOutbox();
  };

  /** TurnRunner callback: the store would not save a turn; its messages are redone after restart. */
  onUnsaved = (inboxIds: number[]): void => {
    const text =
      "⚠️ Sorry, I couldn't save my answer (the gateway's database is failing); I'll answer after it restarts.";
    for (const id of inboxIds) this.#settle(id, { inboxId: id, state: "failed", replies: [text] });
  };

  /** Enqueues turn tasks for a session: one per message (followup) or one coalesced turn. */
  #schedule(
    sessionKey: string,
    priority: LanePriority,
    messages: number,
    origin: "user" | "recovery" = "user",
  ): void {
    const mode = this.#o.queueMode;
    const tasks = mode === "followup" ? messages : this.#waitingTurn.has(sessionKey) ? 0 : 1;
    for (let i = 0; i < tasks; i++) {
      if (mode !== "followup") this.#waitingTurn.add(sessionKey);
      const handle = this.#o.lanes.enqueue({
        sessionKey,
        priority,
        origin,
        run: (ctx) => {
          this.#waitingTurn.delete(sessionKey);
          return this.#o.turns.run(
            sessionKey,
            { collectAll: mode !== "followup", steer: mode === "steer" },
            ctx,
          );
        },
      });
      handle.done.then(
        () => this.#afterTurn(sessionKey),
        (err: unknown) => {
          this.#waitingTurn.delete(sessionKey);
          if (err instanceof LaneAbortedError && err.reason === "shutdown") return;
          this.#o.logger.error(
            { err, sessionKey },
            "turn crashed; its messages stay queued for the next turn",
          );
          this.#afterTurn(sessionKey);
        },
      );
    }
  }

  /** Steered messages that the run did not take, and anything else still queued, get a turn. */
  #afterTurn(sessionKey: string): void {
    if (!this.#accepting || this.#o.queueMode === "followup") return;
    void this.#o.store.inbox.sessionsWithQueued().then((keys) => {
      if (keys.includes(sessionKey)) this.#schedule(sessionKey, "human", 1);
    });
  }

  async #runCommand(command: ReturnType<typeof parseCommand> & string, sessionKey: string): Promise<string> {
    const { store, clock, lanes } = this.#o;
    switch (command) {
      case "new": {
        await store.sessions.reset(sessionKey, newId("ses"), clock.now());
        return "Started a new session. Earlier messages are kept on disk but no longer sent to the model.";
      }
      case "stop":
        return lanes.abortRunning(sessionKey, "user_stop")
          ? "Stopping the current turn."
          : "Nothing is running.";
      case "status": {
        const stats = lanes.stats();
        const session = await store.sessions.get(sessionKey);
        return [
          `Session: ${sessionKey}${session ? ` (${session.sessionId})` : ""}`,
          `Model: ${this.#o.modelRef}${this.#o.provider.simulated ? " — SIMULATED replies (no API key configured)" : ""}`,
          `This session: ${lanes.isBusy(sessionKey) ? "running" : "idle"}, ${lanes.pendingCount(sessionKey)} waiting`,
          `Gateway: ${stats.running} running, ${stats.pending.human + stats.pending.normal + stats.pending.background} waiting, ${stats.lanes} active sessions`,
        ].join("\n");
      }
      case "help":
        return helpText();
    }
  }

  /**
   * Start-up recovery; call it before any channel starts (nothing else may write the inbox
   * meanwhile). Replies left `sending` by a crash go back to `pending`, stale ones are expired,
   * interrupted runs are re-queued, rows left `received` are routed (access control included),
   * and every session with queued messages is scheduled once per message. Replies are sent
   * only after `open()`.
   */
  async recover(): Promise<{ requeued: number; rerouted: number; expired: number; resent: number }> {
    const { store, clock, logger } = this.#o;
    // Each of these may have reached its chat before the crash: sent again, it arrives twice
    // on a platform that takes no idempotency key (Telegram). Counted and logged, never hidden.
    const reset = await store.outbox.resetSending(clock.now());
    for (const row of reset) {
      this.#o.metrics.outboxResent.inc({ channel: row.target.channel });
      logger.warn(
        { outboxId: row.id, channel: row.target.channel, chatId: row.target.chatId, seq: row.seq },
        "reply chunk was mid-send when the gateway stopped; sending it again (it may arrive twice)",
      );
    }
    const resent = reset.length;
    const expired = await this.#o.outbox.expireStale();
    // First, so that nothing routed below can be mistaken for an interrupted run.
    const requeued = await store.inbox.requeueInterrupted(clock.now());
    let rerouted = 0;
    const perSession = new Map<string, number>();
    for (const record of await store.inbox.listUnfinished()) {
      if (record.state === "received") {
        rerouted++;
        const routed = await this.#route(record, false);
        if (routed.status !== "accepted") continue;
      }
      perSession.set(record.sessionKey, (perSession.get(record.sessionKey) ?? 0) + 1);
    }
    for (const [sessionKey, count] of perSession) this.#schedule(sessionKey, "human", count, "recovery");
    if (requeued > 0 || perSession.size > 0) {
      logger.info({ requeued, rerouted, sessions: perSession.size }, "recovered unfinished messages");
    }
    return { requeued, rerouted, expired, resent };
  }

  /** After recovery and once the channels run: start sending replies, report ready. */
  open(): void {
    this.#open = true;
    this.#o.outbox.kick();
    this.#ready = true;
  }

  /** Stops intake, lets running turns finish for `drainTimeoutMs`, then aborts them (they resume after restart). */
  async shutdown(drainTimeoutMs: number): Promise<{ drained: boolean }> {
    this.#accepting = false;
    this.#ready = false;
    const drained = await this.#o.lanes.drain(drainTimeoutMs);
    if (!drained) {
      this.#o.logger.warn(
        { drainTimeoutMs },
        "drain timed out; aborting running turns (they resume after restart)",
      );
      this.#o.lanes.abortAll("shutdown");
      await this.#o.lanes.drain(2_000);
    }
    await this.#o.outbox.idle();
    await this.#o.outbox.stop();
    return { drained };
  }
}
