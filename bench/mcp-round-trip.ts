/**
 * MCP stdio round trip: one tools/call to a trivial local server (test/fakes/mcp-server.mjs
 * `echo`, run with node) through the gateway's McpServerConnection, after the server started.
 * Target < 5 ms per call (issue #24, Speed).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { McpServerConnection } from "../src/capabilities/mcp/server-connection.js";
import { serverEnv } from "../src/capabilities/mcp/server-env.js";
import { systemClock } from "../src/util/clock.js";
import { silentLogger } from "../src/util/logger.js";
import { fmt, percentile, progress } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CALLS = 500;
const WARMUP = 50;
const TARGET_MS = 5;

export const mcpRoundTrip: Benchmark = {
  id: "mcp-round-trip",
  async run(): Promise<BenchRow[]> {
    const connection = new McpServerConnection({
      name: "bench",
      endpoint: {
        type: "stdio",
        process: {
          command: process.execPath,
          args: [path.join(ROOT, "test/fakes/mcp-server.mjs"), "normal"],
          env: serverEnv(process.env, {}, ROOT),
          cwd: ROOT,
        },
      },
      timeoutMs: 10_000,
      clock: systemClock,
      logger: silentLogger(),
      restart: false,
      onTools: () => {},
    });
    try {
      progress("mcp-round-trip: starting the server");
      await connection.start();
      if (connection.state !== "running") throw new Error(`the server did not start: ${connection.reason}`);
      const signal = new AbortController().signal;
      const times: number[] = [];
      for (let i = 0; i < WARMUP + CALLS; i++) {
        const t0 = performance.now();
        await connection.call("echo", { text: "x" }, signal);
        if (i >= WARMUP) times.push(performance.now() - t0);
      }
      const p50 = percentile(times, 50);
      const p99 = percentile(times, 99);
      return [
        {
          benchmark: "MCP stdio round trip, tools/call after start (ms)",
          figure: `p50 ${fmt(p50)} / p99 ${fmt(p99)}`,
          target: `< ${TARGET_MS} ms`,
          met: p50 < TARGET_MS,
          values: { p50Ms: p50, p99Ms: p99 },
        },
      ];
    } finally {
      await connection.stop();
    }
  },
};
