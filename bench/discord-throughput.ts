/**
 * Messages per second through the Discord channel: real discord.js (gateway WebSocket and REST)
 * against the fake Discord server, a zero-latency simulator behind the real Anthropic SDK. One
 * server with 20 text channels at once (plus 4 for warm-up), answered without a mention, each
 * sending its 50 messages in order, the next as soon as the previous one is answered (as
 * slack-throughput does). Latency runs from handing MESSAGE_CREATE to the fake to the fake
 * answering the `POST /channels/:id/messages` that replies to it. A missing or duplicate reply
 * fails the row. Discord's own global cap (50 REST requests/s per bot; an answer costs a typing
 * call and a message POST) would bound this to about 25 replies/s, so the bench lifts the
 * client's throttle (`restRequestsPerSecond: 10000`) to measure the gateway itself.
 */
import { FakeDiscord } from "../test/fakes/discord-api.js";
import { type BenchGateway, startBenchGateway } from "./bench-gateway.js";
import { fmt, percentile, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const CHATS = 20;
const PER_CHAT = 50;
const WARMUP_CHATS = 4;
const WARMUP_PER_CHAT = 3;
const LIMIT_MS = 60_000;
const SETTLE_MS = 300;
/** Discord's global REST limit per bot; two requests (typing, message) per answer. */
const DISCORD_GLOBAL_RPS = 50;

const GUILD = "210000000000000001";
const TOKEN = "fake-discord-token-for-the-bench";
/** Channel `i` (warm-up ones first), and the one person writing in it. */
const channelId = (i: number) => `31000000000000${String(i).padStart(4, "0")}`;
const author = (i: number) => ({ id: `41000000000000${String(i).padStart(4, "0")}`, username: `user${i}` });
const MESSAGE_PATH = /^\/channels\/(\d+)\/messages$/;

const now = () => performance.timeOrigin + performance.now();

/** Discord throughput, 20 guild channels × 50 messages over the gateway WebSocket. */
export const discordThroughput: Benchmark = {
  id: "discord-throughput",
  async run(): Promise<BenchRow[]> {
    const total = WARMUP_CHATS + CHATS;
    const fake = new FakeDiscord({
      token: TOKEN,
      heartbeatIntervalMs: 41_250, // Discord's usual interval
      guilds: [
        {
          id: GUILD,
          name: "Bench",
          channels: Array.from({ length: total }, (_, i) => ({ id: channelId(i), name: `bench-${i}` })),
        },
      ],
    });
    let gw: BenchGateway | undefined;
    try {
      await fake.start();
      gw = await startBenchGateway({
        simulator: { firstByteDelayMs: 0, chunkDelayMs: 0 },
        config: {
          gateway: { drainTimeoutMs: 5_000 },
          channels: {
            discord: {
              token: TOKEN,
              apiUrl: fake.apiUrl,
              // Every message in the server is answered, no mention needed.
              guilds: { [GUILD]: { requireMention: false } },
              slashCommands: "off",
              // Discord itself allows 50 requests/s per bot (≈ 25 answers/s: typing + post);
              // lifted here so the figure is the gateway's, not Discord's cap.
              restRequestsPerSecond: 10_000,
            },
          },
        },
      });
      // Each channel's waiting sender is woken by the post that replies to its message; every
      // successful reply is counted by the message it answers.
      const waiting = new Map<string, { messageId: string; wake: () => void }>();
      const replies = new Map<string, number>();
      let stray = 0;
      fake.onAnswered((method, path, body, status) => {
        const channel = MESSAGE_PATH.exec(path)?.[1];
        if (method !== "POST" || channel === undefined || status !== 200) return;
        const ref = (body as { message_reference?: { message_id?: string } } | undefined)?.message_reference
          ?.message_id;
        if (ref === undefined) {
          stray++;
          return;
        }
        replies.set(ref, (replies.get(ref) ?? 0) + 1);
        const w = waiting.get(channel);
        if (w?.messageId !== ref) return;
        waiting.delete(channel);
        w.wake();
      });
      const pushed: string[] = [];
      const deadline = now() + LIMIT_MS;
      const chat = async (i: number, count: number, latencies: number[]) => {
        const ch = channelId(i);
        for (let m = 0; m < count; m++) {
          let wake = () => {};
          const answered = new Promise<void>((resolve, reject) => {
            wake = resolve;
            setTimeout(
              () => reject(new Error(`discord-throughput: no reply in ${ch} within ${LIMIT_MS / 1000} s`)),
              deadline - now(),
            ).unref();
          });
          const t0 = now();
          const sent = fake.userMessage({ channelId: ch, author: author(i), content: `message ${m}` });
          waiting.set(ch, { messageId: sent.id, wake });
          pushed.push(sent.id);
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
      checkReplies(pushed, replies, stray, fake.botMessages().length);
      const perSecond = (messages / wallMs) * 1000;
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      progress(
        `discord-throughput: ${messages} messages in ${fmt(wallMs, 0)} ms; latency p50 ${fmt(p50, 1)} / ` +
          `p99 ${fmt(p99, 1)} / max ${fmt(Math.max(...latencies), 1)} ms`,
      );
      return [
        {
          benchmark:
            `Discord throughput, ${CHATS} guild channels × ${PER_CHAT} messages via fake Discord (gateway WebSocket + REST), ` +
            `zero-latency simulator, REST throttle lifted (Discord's real cap of ${DISCORD_GLOBAL_RPS} requests/s ` +
            `bounds a bot to ~${DISCORD_GLOBAL_RPS / 2} replies/s: typing + post) (messages/s; MESSAGE_CREATE → reply POST ms)`,
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

/** Throws unless every pushed message got exactly one successful reply and nothing else was posted. */
function checkReplies(pushed: string[], replies: Map<string, number>, stray: number, stored: number): void {
  const problems: string[] = [];
  const missing = pushed.filter((id) => !replies.has(id));
  const doubled = pushed.filter((id) => (replies.get(id) ?? 0) > 1);
  const sent = new Set(pushed);
  const unknown = [...replies.keys()].filter((id) => !sent.has(id));
  if (missing.length > 0) problems.push(`${missing.length} message(s) without a reply`);
  if (doubled.length > 0) problems.push(`${doubled.length} message(s) answered more than once`);
  if (unknown.length > 0) problems.push(`${unknown.length} reply(ies) to messages never sent`);
  if (stray > 0) problems.push(`${stray} post(s) replying to no message`);
  if (stored !== pushed.length) problems.push(`${stored} bot messages stored, ${pushed.length} expected`);
  if (problems.length > 0) throw new Error(`discord-throughput: bad replies: ${problems.join("; ")}`);
}
