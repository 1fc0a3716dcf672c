/**
 * Row 3: messages per second through `POST /v1/chat` with a zero-latency simulator: 20 senders,
 * each sending 50 messages one after another, all senders at once (lanes.maxConcurrent 4).
 */
import { type BenchGateway, startBenchGateway } from "./bench-gateway.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { fmt, progress } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const SENDERS = 20;
const PER_SENDER = 50;
const WARMUP = 20;
const LIMIT_MS = 60_000;

/** Throughput, 20 sessions × 50 messages. */
export const chatThroughput: Benchmark = {
  id: "chat-throughput",
  async run(): Promise<BenchRow[]> {
    let gw: BenchGateway | undefined;
    const client = new HttpClient({ maxSockets: SENDERS, timeoutMs: 30_000 });
    try {
      gw = await startBenchGateway({ simulator: { firstByteDelayMs: 0, chunkDelayMs: 0 } });
      const url = `${gw.url}/v1/chat`;
      for (let i = 0; i < WARMUP; i++) {
        await client.postJson(url, { sender: `warm-${i % 4}`, text: `warm-up ${i}` });
      }
      const deadline = performance.now() + LIMIT_MS;
      let failed = 0;
      let sent = 0;
      const sender = async (s: number) => {
        for (let m = 0; m < PER_SENDER && performance.now() < deadline; m++) {
          const res = await client.postJson(url, { sender: `tp-${s}`, text: `message ${m}` });
          sent++;
          if (!isAnswered(res)) failed++;
        }
      };
      const start = performance.now();
      await Promise.all(Array.from({ length: SENDERS }, (_, s) => sender(s)));
      const wallMs = performance.now() - start;
      const perSecond = (sent / wallMs) * 1000;
      progress(`chat-throughput: ${sent} messages in ${fmt(wallMs, 0)} ms, ${failed} failed`);
      return [
        {
          benchmark: `Throughput, ${SENDERS} sessions × ${PER_SENDER} messages, zero-latency simulator (messages/s)`,
          figure: `${fmt(perSecond, 0)} msg/s (${sent} in ${fmt(wallMs / 1000)} s${failed > 0 ? `, ${failed} FAILED` : ""})`,
          target: "—",
          values: { messagesPerSecond: perSecond, messages: sent, wallMs, failed },
        },
      ];
    } finally {
      client.close();
      await gw?.stop();
    }
  },
};
