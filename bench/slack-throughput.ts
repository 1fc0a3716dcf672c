/**
 * Messages per second through the Slack channel: real Bolt over Socket Mode against the fake
 * Slack server, a zero-latency simulator behind the real Anthropic SDK. 20 DM channels at once,
 * each sending its 50 messages in order, the next as soon as the previous one is answered (as
 * telegram-throughput does). Latency runs from handing the event to the fake to the fake
 * answering the `chat.postMessage` that replies. A missing or duplicate reply fails the row.
 */
import { FakeSlack } from "../test/fakes/slack-api.js";
import { type BenchGateway, startBenchGateway } from "./bench-gateway.js";
import { fmt, percentile, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const CHATS = 20;
const PER_CHAT = 50;
const WARMUP_CHATS = 4;
const WARMUP_PER_CHAT = 3;
const LIMIT_MS = 60_000;
const SETTLE_MS = 300;

const now = () => performance.timeOrigin + performance.now();

/** Slack throughput, 20 DM channels × 50 messages over Socket Mode. */
export const slackThroughput: Benchmark = {
  id: "slack-throughput",
  async run(): Promise<BenchRow[]> {
    const fake = new FakeSlack();
    let gw: BenchGateway | undefined;
    try {
      await fake.start();
      const users = WARMUP_CHATS + CHATS;
      for (let i = 0; i < users; i++) {
        fake.addUser({ id: `U${i}`, name: `user${i}` });
        fake.addChannel({ id: `D${i}`, name: "", kind: "im", user: `U${i}` });
      }
      gw = await startBenchGateway({
        simulator: { firstByteDelayMs: 0, chunkDelayMs: 0 },
        config: {
          gateway: { drainTimeoutMs: 5_000 },
          channels: {
            slack: {
              botToken: fake.botToken,
              appToken: fake.appToken,
              apiUrl: fake.apiUrl,
              dmPolicy: "open",
              workingStatus: "off",
            },
          },
        },
      });
      // Each channel's waiting sender is woken by the post that answers it.
      const waiting = new Map<string, () => void>();
      let posts = 0;
      fake.onAnswered((method, params) => {
        if (method !== "chat.postMessage") return;
        posts++;
        const wake = waiting.get(String(params.channel));
        waiting.delete(String(params.channel));
        wake?.();
      });
      const deadline = now() + LIMIT_MS;
      const chat = async (i: number, count: number, latencies: number[]) => {
        for (let m = 0; m < count; m++) {
          const answered = new Promise<void>((resolve, reject) => {
            waiting.set(`D${i}`, resolve);
            const left = deadline - now();
            setTimeout(
              () => reject(new Error(`slack-throughput: no reply in D${i} within ${LIMIT_MS / 1000} s`)),
              left,
            ).unref();
          });
          const t0 = now();
          await fake.userMessage({ channel: `D${i}`, user: `U${i}`, text: `message ${m}` });
          await answered;
          latencies.push(now() - t0);
        }
      };
      const warmup: number[] = [];
      await Promise.all(Array.from({ length: WARMUP_CHATS }, (_, c) => chat(c, WARMUP_PER_CHAT, warmup)));
      const latencies: number[] = [];
      const start = now();
      await Promise.all(Array.from({ length: CHATS }, (_, c) => chat(WARMUP_CHATS + c, PER_CHAT, latencies)));
      const wallMs = now() - start;
      await sleep(SETTLE_MS);
      const messages = CHATS * PER_CHAT;
      const expected = messages + WARMUP_CHATS * WARMUP_PER_CHAT;
      if (posts !== expected)
        throw new Error(`slack-throughput: ${posts} replies posted, ${expected} expected`);
      const perSecond = (messages / wallMs) * 1000;
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      progress(
        `slack-throughput: ${messages} messages in ${fmt(wallMs, 0)} ms; latency p50 ${fmt(p50, 1)} / p99 ${fmt(p99, 1)} ms`,
      );
      return [
        {
          benchmark: `Slack throughput, ${CHATS} DMs × ${PER_CHAT} messages via fake Slack (Socket Mode), zero-latency simulator (messages/s; event → chat.postMessage ms)`,
          figure: `${fmt(perSecond, 0)} msg/s (${messages} in ${fmt(wallMs / 1000)} s); p50 ${fmt(p50, 1)} / p99 ${fmt(p99, 1)} ms`,
          target: "within 20% of Telegram",
          values: { messagesPerSecond: perSecond, messages, wallMs, p50Ms: p50, p99Ms: p99 },
        },
      ];
    } finally {
      await gw?.stop().catch(() => undefined);
      await fake.close();
    }
  },
};
