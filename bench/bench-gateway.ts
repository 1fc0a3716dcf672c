/**
 * A real gateway started in-process (temp home, silent logger, port 0) whose Anthropic provider
 * points at a {@link ModelSimulator} through the real SDK. `stop()` stops both and removes the home.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../src/config/load.js";
import { type RunningGateway, startGateway } from "../src/main.js";
import { ModelSimulator, type ModelSimulatorOptions } from "../src/simulator/model-simulator.js";
import type { ModelProvider } from "../src/harness/providers/types.js";
import { silentLogger } from "../src/util/logger.js";

/** A started gateway and its simulator. */
export interface BenchGateway {
  running: RunningGateway;
  simulator: ModelSimulator;
  url: string;
  /** Stops the gateway, closes the simulator, removes the temp home; never throws. */
  stop(): Promise<void>;
}

/** Options for {@link startBenchGateway}. */
export interface BenchGatewayOptions {
  simulator?: ModelSimulatorOptions;
  /** Merged into the `lanes` section; default {} (maxConcurrent 4, reservedForHuman 1). */
  lanes?: { maxConcurrent?: number; reservedForHuman?: number };
  /** Answer with this provider instead of the SDK → simulator (the simulator still starts). */
  provider?: ModelProvider;
  /** More config sections (`gateway`, `channels`, …), merged over the bench defaults. */
  config?: Record<string, unknown>;
}

/** Starts a simulator, then a gateway pointed at it. */
export async function startBenchGateway(options: BenchGatewayOptions = {}): Promise<BenchGateway> {
  const simulator = new ModelSimulator(options.simulator ?? {});
  await simulator.start();
  const home = mkdtempSync(join(tmpdir(), "sy-bench-"));
  let running: RunningGateway;
  try {
    const config = parseConfig(
      {
        agent: { model: "anthropic/claude-bench" },
        providers: { anthropic: { apiKey: "sk-ant-bench-key", baseUrl: simulator.url } },
        lanes: options.lanes ?? {},
        ...options.config,
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
      ...(options.provider ? { provider: options.provider } : {}),
    });
  } catch (error) {
    await simulator.close();
    rmSync(home, { recursive: true, force: true });
    throw error;
  }
  return {
    running,
    simulator,
    url: running.url,
    stop: async () => {
      try {
        await running.stop();
      } finally {
        await simulator.close();
        rmSync(home, { recursive: true, force: true });
      }
    },
  };
}
