/**
 * `npm start` as a user runs it a second time, sources unchanged: npm itself, the launcher's
 * check that dist/ is up to date (no compile), then the daemon, until `GET /readyz` answers 200
 * (fresh home each run, simulator mode). Median of 5. Before issue #4 every start ran tsc first.
 */
import { buildIfStale, isStale } from "../bin/build-if-stale.js";
import { type GatewayChild, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient } from "./http-client.js";
import { fmt, median, progress } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const RUNS = 5;
const TARGET_MS = 1_000;

export const npmStart: Benchmark = {
  id: "npm-start",
  async run(): Promise<BenchRow[]> {
    if (!buildIfStale() || isStale()) throw new Error("dist/ could not be brought up to date");
    const client = new HttpClient({ maxSockets: 1, timeoutMs: 1_000 });
    const times: number[] = [];
    let gw: GatewayChild | undefined;
    try {
      for (let r = 0; r < RUNS; r++) {
        gw = await spawnGateway({ viaNpmStart: true });
        times.push(await waitReady(gw, client));
        progress(`npm-start run ${r + 1}: ready in ${fmt(times[r] ?? Number.NaN, 0)} ms`);
        await gw.kill();
        gw = undefined;
      }
    } finally {
      client.close();
      await gw?.kill();
    }
    const ms = median(times);
    return [
      {
        benchmark:
          "`npm start` to /readyz, second start (sources unchanged: no compile), fresh home (ms, median of 5)",
        figure: `${fmt(ms, 0)} ms (runs: ${times.map((t) => fmt(t, 0)).join(", ")})`,
        target: `< ${TARGET_MS} ms`,
        met: ms < TARGET_MS,
        values: { medianMs: ms },
      },
    ];
  },
};
