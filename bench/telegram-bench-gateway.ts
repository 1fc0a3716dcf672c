/**
 * A real gateway started in-process (temp home, silent logger, port 0) with its Telegram channel
 * long-polling a {@link FakeTelegramBotApi} through real grammY, and its Anthropic provider
 * pointed at a {@link ModelSimulator} through the real SDK. `stop()` stops all three.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../src/config/load.js";
import { type RunningGateway, startGateway } from "../src/main.js";
import { ModelSimulator, type ModelSimulatorOptions } from "../src/simulator/model-simulator.js";
import { silentLogger } from "../src/util/logger.js";
import { FakeTelegramBotApi } from "../test/fakes/telegram-bot-api.js";

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

/** Starts a simulator and a fake Bot API, then a gateway whose Telegram DMs are open to anyone. */
export async function startTelegramBenchGateway(
  options: TelegramBenchGatewayOptions = {},
): Promise<TelegramBenchGateway> {
  const simulator = new ModelSimulator(options.simulator ?? {});
  const telegram = new FakeTelegramBotApi(options.now ? { now: options.now } : {});
  const home = mkdtempSync(join(tmpdir(), "sy-bench-tg-"));
  const cleanUp = async () => {
    await telegram.close();
    await simulator.close();
    rmSync(home, { recursive: true, force: true });
  };
  let running: RunningGateway;
  try {
    await simulator.start();
    await telegram.start();
    telegram.addBot(BENCH_BOT);
    const config = parseConfig(
      {
        // A hung turn must not hold the stop for the default 30 s.
        gateway: { drainTimeoutMs: 5_000 },
        agent: { model: "anthropic/claude-bench" },
        providers: { anthropic: { apiKey: "sk-ant-bench-key", baseUrl: simulator.url } },
        channels: {
          telegram: {
            token: BENCH_BOT.token,
            apiRoot: telegram.apiRoot,
            dmPolicy: "open",
            pollTimeoutSeconds: options.pollTimeoutSeconds ?? 1,
          },
        },
      },
      undefined,
    );
    running = await startGateway({
      config,
      configFile: undefined,
      home,
      env: {},
      logger: silentLogger(),
      port: 0,
    });
  } catch (error) {
    await cleanUp();
    throw error;
  }
  return {
    running,
    telegram,
    simulator,
    stop: async () => {
      try {
        await running.stop();
      } catch {
        // Reported by the benchmark's own checks; stopping must go on.
      } finally {
        await cleanUp();
      }
    },
  };
}
