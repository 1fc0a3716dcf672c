/**
 * The gateway's lifecycle around the parts that do the work (router, turn scheduler, turn
 * runner, outbox, answer waiters): recovery before intake, then open (replies go out, ready),
 * then on shutdown refuse intake, drain running turns, abort what is left, and stop sending.
 */
import type { InboundSink } from "../channels/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { AnswerWaiters } from "./answer-waiters.js";
import type { ChannelDirectory } from "./channel-directory.js";
import type { GatewayEvents } from "./events.js";
import type { LaneQueue } from "./lanes/lane-queue.js";
import type { OutboxDispatcher } from "./outbox-dispatcher.js";
import { type Recovered, type RecoveryDeps, recover } from "./recovery.js";

/** Whether new messages are taken: on until shutdown begins. Shared by the router and the scheduler. */
export class IntakeSwitch {
  #on = true;
  get on(): boolean {
    return this.#on;
  }
  off(): void {
    this.#on = false;
  }
}

export interface GatewayOptions extends Omit<RecoveryDeps, "outbox"> {
  intake: IntakeSwitch;
  /** Where channels deliver (the router). */
  sink: InboundSink;
  channels: ChannelDirectory;
  lanes: LaneQueue;
  outbox: OutboxDispatcher;
  waiters: AnswerWaiters;
  events: GatewayEvents;
  clock: Clock;
  logger: Logger;
}

/** Owns the order of start-up and shutdown, and readiness. */
export class Gateway {
  readonly #o: GatewayOptions;
  #ready = false;
  /** False until `open()`: replies are committed but not sent before the channels run. */
  #open = false;
  readonly startedAt: number;

  constructor(options: GatewayOptions) {
    this.#o = options;
    this.startedAt = options.clock.now();
    options.events.on((event) => {
      // After the waiters' continuations (an HTTP answer goes out first), before any timer.
      if (event.type === "replies_committed" && this.#open) setImmediate(() => options.outbox.kick());
    });
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Where channels deliver. */
  get sink(): InboundSink {
    return this.#o.sink;
  }

  /** Start-up recovery; call it before any channel starts. */
  recover(): Promise<Recovered> {
    return recover(this.#o);
  }

  /** After recovery and once the channels run: start sending replies, report ready. */
  open(): void {
    this.#open = true;
    this.#o.outbox.kick();
    this.#ready = true;
  }

  /** Stops intake, lets running turns finish for `drainTimeoutMs`, then aborts them (they resume after restart). */
  async shutdown(drainTimeoutMs: number): Promise<{ drained: boolean }> {
    this.#o.intake.off();
    this.#ready = false;
    const { lanes, outbox, logger } = this.#o;
    const drained = await lanes.drain(drainTimeoutMs);
    if (!drained) {
      logger.warn({ drainTimeoutMs }, "drain timed out; aborting running turns (they resume after restart)");
      lanes.abortAll("shutdown");
      await lanes.drain(2_000);
    }
    this.#o.waiters.stop();
    await outbox.idle();
    await outbox.stop();
    return { drained };
  }
}
