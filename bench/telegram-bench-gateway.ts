/**
 * A real gateway started in-process (temp home, silent logger, port 0) with its Telegram channel
 * long-polling a {@link FakeTelegramBotApi} through real grammY, and its Anthropic provider
 * pointed at a {@link ModelSimulator} through the real SDK. `stop()` stops all three.
 */
import type { RunningGateway } from "../src/main.js";
import type { ModelSimulator, ModelSimulatorOptions } from "../src/simulator/model-simulator.js";
import { FakeTelegramBotApi } from "../test/fakes/telegram-bot-api.js";
import { type BenchGateway, startBenchGateway } from "./bench-gateway.js";

/** The bot the fake serves and the gateway is configured with. */
export const BENCH_BOT = {
  token: "700001:AAbench-token-for-the-fake-bot-api-0",
  id: 700001,
  username: "switchyard_bench_bot",
} as const;

/** A started gateway, its fake Bot API and its simulator. */
export interface TelegramBenchGateway {
  running: RunningGateway;
  telegram: FakeTelegramBotApi;
  simulator: ModelSimulator;
  /** Stops the gateway, then closes the fake and the simulator and removes the temp home; never throws. */
  stop(): Promise<void>;
}

/** Options for {@link startTelegramBenchGateway}. */
export interface TelegramBenchGatewayOptions {
  simulator?: ModelSimulatorOptions;
  /** The fake's clock in ms (call `timeMs`, message dates); default `Date.now`. */
  now?: () => number;
  /** Long-poll hold time in seconds; default 1, so a stop never waits on a held poll. */
  pollTimeoutSeconds?: number;
}

/** Starts a fake Bot API, then a bench gateway (simulator included) whose Telegram DMs are open to anyone. */
export async function startTelegramBenchGateway(
  options: TelegramBenchGatewayOptions = {},
): Promise<TelegramBenchGateway> {
  const telegram = new FakeTelegramBotApi(options.now ? { now: options.now } : {});
  let gw: BenchGateway;
  try {
    await telegram.start();
    telegram.addBot(BENCH_BOT);
    gw = await startBenchGateway({
      ...(options.simulator ? { simulator: options.simulator } : {}),
      config: {
        // A hung turn must not hold the stop for the default 30 s.
        gateway: { drainTimeoutMs: 5_000 },
        channels: {
          telegram: {
            token: BENCH_BOT.token,
            apiRoot: telegram.apiRoot,
            dmPolicy: "open",
            pollTimeoutSeconds: options.pollTimeoutSeconds ?? 1,
          },
        },
      },
    });
  } catch (error) {
    await telegram.close();
    throw error;
  }
  return {
    running: gw.running,
    telegram,
    simulator: gw.simulator,
    stop: async () => {
      try {
        await gw.stop();
      } catch {
        // Reported by the benchmark's own checks; stopping must go on.
      } finally {
        await telegram.close();
      }
    },
  };
}
