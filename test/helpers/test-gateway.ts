/**
 * Starts a real gateway in-process on 127.0.0.1:0 with a temp home, pointed at a model
 * simulator through the real provider SDKs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogTail } from "../../src/admin/log-tail.js";
import type { CapabilityModule } from "../../src/capabilities/types.js";
import { parseConfig } from "../../src/config/load.js";
import { type RunningGateway, startGateway } from "../../src/main.js";
import type { Store } from "../../src/store/types.js";
import type { Clock } from "../../src/util/clock.js";
import { createLogger, silentLogger } from "../../src/util/logger.js";
import type { ModelSimulator } from "../fakes/model-simulator.js";

export interface TestGateway {
  running: RunningGateway;
  url: string;
  home: string;
  chat(sender: string, text: string, id?: string): Promise<ChatResponse>;
  stop(): Promise<void>;
}

export interface ChatResponse {
  status: number;
  body: {
    sessionKey?: string;
    state?: string;
    replies?: Array<{ text: string }>;
    error?: { code: string; message: string };
  };
}

export function simulatorConfig(simulator: ModelSimulator, protocol: "openai" | "anthropic") {
  return protocol === "openai"
    ? {
        agent: { model: "openai/gpt-test" },
        providers: { openai: { apiKey: "sk-test-key", baseUrl: `${simulator.url}/v1` } },
      }
    : {
        agent: { model: "anthropic/claude-test" },
        providers: { anthropic: { apiKey: "sk-ant-test-key", baseUrl: simulator.url } },
      };
}

export async function startTestGateway(
  raw: Record<string, unknown>,
  options: {
    home?: string;
    wrapStore?: (store: Store) => Store;
    /** The gateway's clock (a ManualClock drives its timers); default the system clock. */
    clock?: Clock;
    /** The gateway's environment (what `exec` commands are scrubbed from); default empty. */
    env?: NodeJS.ProcessEnv;
    /** The capability modules (default the registry's); a test adds its own this way. */
    capabilityModules?: readonly CapabilityModule[];
    /** Gets the gateway's log lines (info and up) for the control page's Logs view. */
    logTail?: LogTail;
    /** The built control page's folder (default the package's dist/ui). */
    uiDir?: string;
  } = {},
): Promise<TestGateway> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "sy-gw-"));
  const config = parseConfig(raw, undefined);
  const running = await startGateway({
    config,
    configFile: undefined,
    home,
    env: options.env ?? {},
    // SWITCHYARD_TEST_LOG=debug shows the gateway's log while a test runs.
    logger: process.env.SWITCHYARD_TEST_LOG
      ? createLogger({
          level: process.env.SWITCHYARD_TEST_LOG,
          format: "json",
          ...(options.logTail ? { tap: options.logTail } : {}),
        })
      : options.logTail
        ? createLogger({ level: "info", format: "json", destination: nowhere(), tap: options.logTail })
        : silentLogger(),
    ...(options.logTail ? { logTail: options.logTail } : {}),
    ...(options.uiDir ? { uiDir: options.uiDir } : {}),
    port: 0,
    ...(options.wrapStore ? { wrapStore: options.wrapStore } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.capabilityModules ? { capabilityModules: options.capabilityModules } : {}),
  });
  return {
    running,
    url: running.url,
    home,
    chat: (sender, text, id) => postChat(running.url, sender, text, id),
    stop: async () => {
      await running.stop();
      if (!options.home) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A log destination that drops every line (the tap still gets them). */
function nowhere(): { write(line: string): void } {
  return { write: () => {} };
}

export async function postChat(
  url: string,
  sender: string,
  text: string,
  id?: string,
): Promise<ChatResponse> {
  const res = await fetch(`${url}/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sender, text, ...(id ? { id } : {}) }),
  });
  return { status: res.status, body: (await res.json()) as ChatResponse["body"] };
}
