/**
 * MCP stdio round trip: one tools/call to a trivial local server (test/fakes/mcp-server.mjs
 * `echo`, run with node) through the gateway's McpServerConnection, after the server started.
 * Target < 5 ms per call (issue #24, Speed). Then the built daemon's idle RSS with two MCP
 * servers configured but unused against none (median of 3 each): servers start on first use,
 * so it should not move.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { McpServerConnection } from "../src/capabilities/mcp/server-connection.js";
import { serverEnv } from "../src/capabilities/mcp/server-env.js";
import { systemClock } from "../src/util/clock.js";
import { silentLogger } from "../src/util/logger.js";
import { HttpClient } from "./http-client.js";
import { killAllChildren, rssMb, spawnGateway, waitReady } from "./gateway-child.js";
import { fmt, median, percentile, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CALLS = 500;
const WARMUP = 50;
const TARGET_MS = 5;
const IDLE_RUNS = 3;
const IDLE_SETTLE_MS = 500;

/** Idle RSS (MB) of the built daemon 500 ms after readiness, with this config. */
async function idleRss(configYaml: string): Promise<number> {
  const gw = await spawnGateway({ configYaml });
  const client = new HttpClient({ maxSockets: 1, timeoutMs: 5_000 });
  try {
    await waitReady(gw, client);
    await sleep(IDLE_SETTLE_MS);
    return rssMb(gw.pid);
  } finally {
    client.close();
    await gw.kill();
  }
}

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
      const server = `{ command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(path.join(ROOT, "test/fakes/mcp-server.mjs"))}] }`;
      const withMcp = `mcp:\n  servers:\n    a: ${server}\n    b: ${server}\n`;
      const none: number[] = [];
      const configured: number[] = [];
      for (let i = 0; i < IDLE_RUNS; i++) {
        progress(`mcp-round-trip: idle RSS, run ${i + 1}/${IDLE_RUNS}`);
        none.push(await idleRss("agent: {}\n"));
        configured.push(await idleRss(withMcp));
      }
      killAllChildren();
      const [noneMb, mcpMb] = [median(none), median(configured)];
      return [
        {
          benchmark: "MCP stdio round trip, tools/call after start (ms)",
          figure: `p50 ${fmt(p50)} / p99 ${fmt(p99)}`,
          target: `< ${TARGET_MS} ms`,
          met: p50 < TARGET_MS,
          values: { p50Ms: p50, p99Ms: p99 },
        },
        {
          benchmark: "Idle RSS of the built daemon with 2 MCP servers configured, unused (MB, median of 3)",
          figure: `${fmt(mcpMb)} MB vs ${fmt(noneMb)} MB without (runs: ${configured.map(fmt).join(", ")} / ${none.map(fmt).join(", ")})`,
          target: "unchanged (servers start on first use)",
          met: mcpMb - noneMb < 3,
          values: { mcpMb, noneMb },
        },
      ];
    } finally {
      await connection.stop();
    }
  },
};
