/**
 * The PostgreSQL store (#27 Speed) beside SQLite, one node: an in-process gateway over a
 * zero-latency simulator, on a throwaway local PostgreSQL cluster (test/helpers/postgres.ts;
 * fsync off there, as the tests run it — a production server's commit adds its fsync), then on
 * SQLite. Per engine: a turn's latency, one sender after another (p50/p90: the gateway's time
 * beyond a 0 ms model, HTTP included), and throughput with 20 senders × 50 messages.
 * Several nodes need several processes (they share one event loop in-process): not measured here.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres } from "../test/helpers/postgres.js";
import { type BenchGateway, startBenchGateway } from "./bench-gateway.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { fmt, percentile, progress } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const WARMUP = 30;
const SEQUENTIAL = 200;
const SENDERS = 20;
const PER_SENDER = 50;

interface EngineFigures {
  p50Ms: number;
  p90Ms: number;
  perSecond: number;
  failed: number;
}

async function measure(store: Record<string, unknown> | undefined): Promise<EngineFigures> {
  const workspace = mkdtempSync(join(tmpdir(), "sy-bench-ws-"));
  let gw: BenchGateway | undefined;
  const client = new HttpClient({ maxSockets: SENDERS, timeoutMs: 30_000 });
  try {
    gw = await startBenchGateway({
      simulator: { firstByteDelayMs: 0, chunkDelayMs: 0 },
      config: { ...(store ? { store } : {}), agent: { model: "anthropic/claude-bench", workspace } },
    });
    const url = `${gw.url}/v1/chat`;
    for (let i = 0; i < WARMUP; i++)
      await client.postJson(url, { sender: `warm-${i % 4}`, text: `warm ${i}` });
    const latencies: number[] = [];
    let failed = 0;
    for (let i = 0; i < SEQUENTIAL; i++) {
      const t0 = performance.now();
      const res = await client.postJson(url, { sender: `seq-${i % 10}`, text: `message ${i}` });
      latencies.push(performance.now() - t0);
      if (!isAnswered(res)) failed++;
    }
    let sent = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: SENDERS }, async (_, s) => {
        for (let m = 0; m < PER_SENDER; m++) {
          const res = await client.postJson(url, { sender: `tp-${s}`, text: `message ${m}` });
          sent++;
          if (!isAnswered(res)) failed++;
        }
      }),
    );
    const perSecond = (sent / (performance.now() - start)) * 1000;
    return { p50Ms: percentile(latencies, 50), p90Ms: percentile(latencies, 90), perSecond, failed };
  } finally {
    client.close();
    await gw?.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** PostgreSQL beside SQLite: a turn's latency and throughput, one node. */
export const pgStore: Benchmark = {
  id: "pg-store",
  async run(): Promise<BenchRow[]> {
    const server = await startPostgres();
    let pg: EngineFigures;
    try {
      const url = await server.createDatabase("bench");
      pg = await measure({ engine: "postgres", url, poolSize: 10 });
    } finally {
      await server.stop();
    }
    const sqlite = await measure(undefined);
    progress(
      `pg-store: turn p50 ${fmt(pg.p50Ms, 2)} ms on PostgreSQL vs ${fmt(sqlite.p50Ms, 2)} on SQLite; ${fmt(pg.perSecond, 0)} vs ${fmt(sqlite.perSecond, 0)} msg/s`,
    );
    const failed = pg.failed + sqlite.failed;
    return [
      {
        benchmark: `A /v1/chat turn with a 0 ms model, one sender at a time (${SEQUENTIAL} turns, ms p50 / p90): PostgreSQL (local, one node); SQLite`,
        figure: `${fmt(pg.p50Ms, 2)} / ${fmt(pg.p90Ms, 2)}; ${fmt(sqlite.p50Ms, 2)} / ${fmt(sqlite.p90Ms, 2)}${failed > 0 ? `; ${failed} FAILED` : ""}`,
        target: "< 3 ms on a local PostgreSQL",
        met: pg.p50Ms < 3 && failed === 0,
        values: {
          pgP50Ms: pg.p50Ms,
          pgP90Ms: pg.p90Ms,
          sqliteP50Ms: sqlite.p50Ms,
          sqliteP90Ms: sqlite.p90Ms,
        },
      },
      {
        benchmark: `Throughput, ${SENDERS} sessions × ${PER_SENDER} messages, zero-latency simulator (messages/s): PostgreSQL (one node); SQLite`,
        figure: `${fmt(pg.perSecond, 0)}; ${fmt(sqlite.perSecond, 0)}`,
        target: "—",
        values: { pgPerSecond: pg.perSecond, sqlitePerSecond: sqlite.perSecond },
      },
    ];
  },
};
