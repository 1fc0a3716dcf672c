/**
 * The router every channel delivers to: session key, access policy, dedupe (the inbox), chat
 * commands, then the queue. It resolves only after the message is durably committed (or
 * rejected), so a channel acknowledges only what is safe; access is denied by default — a
 * channel without a policy admits no one.
 */
import type {
  ChatTarget,
  AcceptResult,
  AccessPolicy,
  ChannelName,
  InboundMessage,
  InboundSink,
} from "../channels/types.js";
import { SinkUnavailableError } from "../channels/errors.js";
import type { InboxRecord } from "../store/repos/inbox-repo.js";
import type { Store } from "../store/types.js";
import { COMMAND_REASON_PREFIX, NOT_MENTIONED } from "../store/reasons.js";
import { StoreError } from "../store/store-error.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { type CommandContext, parseCommand, runCommand } from "./commands.js";
import type { GatewayEvents } from "./events.js";
import type { GatewayMetrics } from "./metrics.js";
import { chatTargetOf, replyRows } from "./replies.js";
import { type DmScope, sessionKeyFor } from "./session-key.js";
import type { TurnScheduler } from "./turn-scheduler.js";
import type { ChannelDirectory } from "./channel-directory.js";

/** The reason given for a message on a channel that declared no access policy. */
export const NO_ACCESS_POLICY = "no_access_policy";

/** What a channel without a declared policy gets: no one may talk (access is denied by default). */
const denyAll: AccessPolicy = {
  check: async () => ({ allowed: false, reason: NO_ACCESS_POLICY }),
  admits: async () => false,
  groupHistoryLimit: 0,
};

export interface RouterOptions {
  agentId: string;
  dmScope: DmScope;
  store: Store;
  /** Access policy per channel; a channel without one admits no one. */
  access: Partial<Record<ChannelName, AccessPolicy>>;
  scheduler: TurnScheduler;
  channels: ChannelDirectory;
  commands: CommandContext;
  /**
   * Questions assignments wait on: the owner's next message in that chat is the answer
   * (`answer` returns the reply to send, or undefined when nothing was waiting after all).
   */
  questions?: {
    waiting(target: ChatTarget, senderId: string): Promise<boolean>;
    /** `inboxId`: the message's row (a re-route after a crash finds the answer it already gave). */
    answer(target: ChatTarget, senderId: string, text: string, inboxId: number): Promise<string | undefined>;
  };
  events: GatewayEvents;
  /** False while shutting down: messages are refused uncommitted, so platforms redeliver them. */
  isAccepting(): boolean;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
}

/** Owns the way in: from an inbound message to a committed, queued or answered inbox row. */
export class Router implements InboundSink {
  readonly #o: RouterOptions;
  /** Inbox ids being routed now: a redelivery of one of them must not route it a second time. */
  readonly #routing = new Set<number>();
  /** Channels already warned about having no access policy. */
  readonly #warnedNoPolicy = new Set<string>();

  constructor(options: RouterOptions) {
    this.#o = options;
  }

  /**
   * Resolves once the message is committed (or rejected); rejects with SinkUnavailableError
   * when it could not be (shutting down, the store failing): the channel leaves it to the
   * platform to deliver again.
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

  /** InboundSink.admits: the channel's access policy, without side effects. */
  async admits(message: InboundMessage): Promise<boolean> {
    const policy = this.#accessFor(message.channel);
    // Without a side-effect-free answer, assume no: intake work is only for admitted senders.
    return policy.admits ? policy.admits(message) : false;
  }

  async #accept(message: InboundMessage): Promise<AcceptResult> {
    const { store, clock, logger, metrics } = this.#o;
    if (!this.#o.isAccepting()) {
      metrics.inbound.inc({ channel: message.channel, verdict: "draining" });
      // Not committed: the channel must not acknowledge it, so the platform delivers it again.
      throw new SinkUnavailableError("the gateway is shutting down; the message was not accepted");
    }
    const sessionKey = sessionKeyFor(message, this.#o.agentId, this.#o.dmScope);
    const access = this.#accessFor(message.channel);
    if (!message.isDirect && message.mentionsBot && access.groupHistoryLimit > 0 && !message.groupContext) {
      // A message opening its own thread sees its chat's context, as of the last answer in any thread.
      const withThreads = message.startsThread === true;
      const contextKey = withThreads
        ? sessionKeyFor({ ...message, threadId: undefined }, this.#o.agentId, this.#o.dmScope)
        : sessionKey;
      const earlier = await store.inbox.groupContext(contextKey, access.groupHistoryLimit, { withThreads });
      if (earlier.length > 0) {
        message = {
          ...message,
          groupContext: earlier.map((r) => ({ senderName: r.message.senderName, text: r.message.text })),
        };
      }
    }
    // A message the policy admits without side effects, and no command, is committed straight
    // into the queue: one step. Anything else is committed `received`, then routed.
    const admitted =
      parseCommand(message.text, this.#o.commands.extra) === undefined &&
      !(await this.#o.questions?.waiting(chatTargetOf(message), message.senderId)) &&
      (await this.admits(message));
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
        return this.route(record);
      }
      metrics.inbound.inc({ channel: message.channel, verdict: "duplicate" });
      logger.info({ inboxId: record.id, dedupeKey: record.dedupeKey }, "duplicate delivery ignored");
      return { status: "duplicate", inboxId: record.id, sessionKey };
    }
    return admitted ? this.#queued(record, true) : this.route(record);
  }

  /**
   * Access, commands, then queue. Also used at start-up for rows left `received` by a crash
   * (`schedule: false`: recovery schedules every session with queued rows once, afterwards).
   */
  async route(record: InboxRecord, schedule = true): Promise<AcceptResult> {
    this.#routing.add(record.id);
    try {
      return await this.#routeOnce(record, schedule);
    } finally {
      this.#routing.delete(record.id);
    }
  }

  async #routeOnce(record: InboxRecord, schedule: boolean): Promise<AcceptResult> {
    const { store, clock, logger, metrics } = this.#o;
    const { message, sessionKey } = record;
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
      this.#o.events.emit({
        type: "message_rejected",
        inboxId: record.id,
        replies: verdict.reply ? [verdict.reply] : [],
      });
      return {
        status: "rejected",
        reason: verdict.reason,
        sessionKey,
        ...(verdict.reply ? { reply: verdict.reply } : {}),
      };
    }
    const command = parseCommand(message.text, this.#o.commands.extra);
    if (command) {
      const from = { chat: chatTargetOf(message), senderId: message.senderId, isDirect: message.isDirect };
      const reply = await runCommand(command, sessionKey, this.#o.commands, message.text, from);
      await this.#rejectWithReply(record, `${COMMAND_REASON_PREFIX}${command}`, reply);
      metrics.inbound.inc({ channel: message.channel, verdict: "command" });
      this.#o.events.emit({ type: "message_rejected", inboxId: record.id, replies: [reply] });
      return { status: "command", reply, sessionKey };
    }
    const answered = await this.#o.questions?.answer(
      chatTargetOf(message),
      message.senderId,
      message.text,
      record.id,
    );
    if (answered) {
      await this.#rejectWithReply(record, "answered an assignment's question", answered);
      metrics.inbound.inc({ channel: message.channel, verdict: "command" });
      this.#o.events.emit({ type: "message_rejected", inboxId: record.id, replies: [answered] });
      return { status: "command", reply: answered, sessionKey };
    }
    await store.inbox.markQueued(record.id, clock.now());
    return this.#queued(record, schedule);
  }

  /** A message is in the queue: count it and (unless recovery schedules later) wake its lane. */
  #queued(record: InboxRecord, schedule: boolean): AcceptResult {
    this.#o.metrics.inbound.inc({ channel: record.message.channel, verdict: "accepted" });
    if (schedule) this.#o.scheduler.schedule(record.sessionKey, "human", 1);
    return { status: "accepted", inboxId: record.id, sessionKey: record.sessionKey };
  }

  /**
   * A gateway answer without a run (pairing code, command reply) goes through the outbox like
   * any reply: committed with the inbox verdict, then sent with retries, exactly once.
   */
  async #rejectWithReply(record: InboxRecord, reason: string, text: string): Promise<void> {
    const m = record.message;
    const target = chatTargetOf(m);
    const rows = replyRows(this.#o.channels.channelFor(target), target, text, {
      kind: "notice",
      replyTo: m.platformMessageId,
      recipientId: m.senderId,
      delivered: m.answeredInPlace,
    });
    await this.#o.store.rejectWithReply(record.id, reason, rows, this.#o.clock.now());
    this.#o.events.emit({ type: "replies_committed" });
  }

  #accessFor(channel: ChannelName): AccessPolicy {
    const policy = this.#o.access[channel];
    if (policy) return policy;
    if (!this.#warnedNoPolicy.has(channel)) {
      this.#warnedNoPolicy.add(channel);
      this.#o.logger.error(
        { channel },
        "channel has no access policy: its messages are refused (denied by default)",
      );
    }
    return denyAll;
  }
}
