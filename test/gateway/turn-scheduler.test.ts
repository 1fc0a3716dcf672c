/**
 * The turn scheduler and the router on a store that fails on demand: a store failure after a
 * collect/steer turn is logged and leaves the messages queued (it used to be an unhandled
 * rejection that killed the daemon), and a channel without an access policy admits no one.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import { ChannelDirectory } from "../../src/gateway/channel-directory.js";
import { GatewayEvents } from "../../src/gateway/events.js";
import { GlobalLane } from "../../src/gateway/lanes/global-lane.js";
import { LaneQueue } from "../../src/gateway/lanes/lane-queue.js";
import { GatewayMetrics } from "../../src/gateway/metrics.js";
import { NO_ACCESS_POLICY, Router } from "../../src/gateway/router.js";
import type { TurnRunner } from "../../src/gateway/turn-runner.js";
import { TurnScheduler } from "../../src/gateway/turn-scheduler.js";
import { ManualClock } from "../../src/util/clock.js";
import { createLogger } from "../../src/util/logger.js";
import { failingStore } from "../helpers/failing-store.js";
import { until } from "../helpers/until.js";

function capturingLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ level: "debug", format: "json", destination }), lines };
}

function message(channel: InboundMessage["channel"], id: string): InboundMessage {
  return {
    channel,
    accountId: "default",
    chatId: "42",
    senderId: "42",
    senderName: "Ann",
    isDirect: true,
    mentionsBot: true,
    text: "hello",
    attachments: [],
    platformMessageId: id,
    receivedAt: 1,
  };
}

describe("TurnScheduler on a failing store", () => {
  it("logs a store failure after a collect turn instead of crashing, and keeps the messages queued", async () => {
    const { store, failing } = failingStore();
    const { logger, lines } = capturingLogger();
    const lanes = new LaneQueue({ pool: new GlobalLane({ maxConcurrent: 1, reservedForHuman: 0 }) });
    let ran = 0;
    const turns = { run: async () => void ran++ } as unknown as TurnRunner;
    const scheduler = new TurnScheduler({
      lanes,
      turns,
      store,
      queueMode: "collect",
      logger,
      isAccepting: () => true,
    });
    failing.add("inbox.sessionsWithQueued");
    scheduler.schedule("s1", "human", 1);
    await until(() => lines.some((l) => l.msg.includes("could not look for messages")), "the logged failure");
    expect(ran).toBe(1);
    expect(lines.find((l) => l.msg.includes("could not look for messages"))?.level).toBe(50);
  });
});

describe("Router", () => {
  it("admits no one on a channel that declared no access policy", async () => {
    const { store } = failingStore();
    const { logger, lines } = capturingLogger();
    const lanes = new LaneQueue({ pool: new GlobalLane({ maxConcurrent: 1, reservedForHuman: 0 }) });
    const scheduler = new TurnScheduler({
      lanes,
      turns: { run: async () => {} } as unknown as TurnRunner,
      store,
      queueMode: "followup",
      logger,
      isAccepting: () => true,
    });
    const clock = new ManualClock();
    const router = new Router({
      agentId: "main",
      dmScope: "per-channel-peer",
      store,
      access: {},
      scheduler,
      channels: new ChannelDirectory(),
      commands: { store, lanes, clock, modelRef: "simulator/x", simulated: true },
      events: new GatewayEvents(),
      isAccepting: () => true,
      clock,
      logger,
      metrics: new GatewayMetrics(),
    });
    expect(await router.admits(message("telegram", "1"))).toBe(false);
    const result = await router.accept(message("telegram", "2"));
    expect(result).toMatchObject({ status: "rejected", reason: NO_ACCESS_POLICY });
    expect((await store.inbox.countByState()).queued).toBe(0);
    expect(lines.filter((l) => l.msg.includes("has no access policy"))).toHaveLength(1);
  });
});
