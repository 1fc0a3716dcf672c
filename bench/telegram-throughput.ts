/**
 * Messages per second through the Telegram channel: real grammY long-polling a fake Bot API,
 * a zero-latency simulator behind the real Anthropic SDK. 20 private chats at once, each sending
 * its 50 messages in order, the next as soon as the previous one is answered (as chat-throughput's
 * senders do). Latency runs from pushing the update into the fake to the fake receiving the
 * `sendMessage` that answers it. A missing, stray or duplicate reply fails the row.
 */
import { fmt, percentile, progress, sleep } from "./stats.js";
import { BENCH_BOT, type TelegramBenchGateway, startTelegramBenchGateway } from "./telegram-bench-gateway.js";
import { TelegramReplyTracker } from "./telegram-reply-tracker.js";
import type { Benchmark, BenchRow } from "./types.js";

const CHATS = 20;
const PER_CHAT = 50;
/** Warm-up: this many chats, each sending WARMUP_PER_CHAT messages, outside the measurement. */
const WARMUP_CHATS = 4;
const WARMUP_PER_CHAT = 3;
const LIMIT_MS = 60_000;
/** After the last reply, how long late duplicates still count. */
const SETTLE_MS = 300;
/** Chat ids: warm-up chats first, then the measured ones; private chat id = user id. */
const FIRST_CHAT_ID = 910_000;

/** A high-resolution wall clock in ms, shared by the fake (call times) and the pushes. */
const now = () => performance.timeOrigin + performance.now();

/** Telegram throughput, 20 chats × 50 messages. */
export const telegramThroughput: Benchmark = {
  id: "telegram-throughput",
  async run(): Promise<BenchRow[]> {
    let gw: TelegramBenchGateway | undefined;
    const limit = new AbortController();
    const timer = setTimeout(() => limit.abort(), LIMIT_MS);
    try {
      gw = await startTelegramBenchGateway({ simulator: { firstByteDelayMs: 0, chunkDelayMs: 0 }, now });
      const tracker = new TelegramReplyTracker({
        telegram: gw.telegram,
        token: BENCH_BOT.token,
        now,
        watchMs: LIMIT_MS + 10_000,
      });
      limit.signal.addEventListener("abort", () => {
        const stuck = tracker.unanswered();
        tracker.fail(
          new Error(
            `telegram-throughput: no reply within ${LIMIT_MS / 1000} s to ${stuck.length} message(s) ` +
              `(chat:message ${stuck.slice(0, 5).join(", ")}${stuck.length > 5 ? ", …" : ""}); ` +
              `${tracker.answered} answered`,
          ),
        );
      });

      const chat = async (chatId: number, count: number, latencies: number[]) => {
        for (let m = 0; m < count; m++) latencies.push(await tracker.push(chatId, `message ${m}`));
      };
      const warmup: number[] = [];
      await Promise.all(
        Array.from({ length: WARMUP_CHATS }, (_, c) => chat(FIRST_CHAT_ID + c, WARMUP_PER_CHAT, warmup)),
      );

      const latencies: number[] = [];
      const firstMeasured = FIRST_CHAT_ID + WARMUP_CHATS;
      const start = now();
      await Promise.all(
        Array.from({ length: CHATS }, (_, c) => chat(firstMeasured + c, PER_CHAT, latencies)),
      );
      const wallMs = now() - start;

      await sleep(SETTLE_MS);
      const messages = CHATS * PER_CHAT;
      checkReplies(gw, tracker, messages + WARMUP_CHATS * WARMUP_PER_CHAT);
      const perSecond = (messages / wallMs) * 1000;
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      progress(
        `telegram-throughput: ${messages} messages in ${fmt(wallMs, 0)} ms; ` +
          `latency p50 ${fmt(p50, 1)} / p99 ${fmt(p99, 1)} / max ${fmt(Math.max(...latencies), 1)} ms`,
      );
      return [
        {
          benchmark: `Telegram throughput, ${CHATS} chats × ${PER_CHAT} messages via fake Bot API, zero-latency simulator (messages/s; push → sendMessage ms)`,
          figure: `${fmt(perSecond, 0)} msg/s (${messages} in ${fmt(wallMs / 1000)} s); p50 ${fmt(p50, 1)} / p99 ${fmt(p99, 1)} ms`,
          target: "—",
          values: { messagesPerSecond: perSecond, messages, wallMs, p50Ms: p50, p99Ms: p99 },
        },
      ];
    } finally {
      clearTimeout(timer);
      await gw?.stop();
    }
  },
};

/**
 * Throws unless every pushed message got exactly one successful reply: no stray or duplicate
 * `sendMessage` call, and the fake's sent log (successful sends only) agrees one to one.
 */
function checkReplies(gw: TelegramBenchGateway, tracker: TelegramReplyTracker, expected: number): void {
  const problems = [...tracker.problems];
  const sent = gw.telegram.sentMessages({ token: BENCH_BOT.token });
  const seen = new Set<string>();
  for (const m of sent) {
    const k = `${m.chat.id}:${m.reply_to_message?.message_id ?? "none"}`;
    if (seen.has(k)) problems.push(`duplicate delivered reply ${k}`);
    seen.add(k);
  }
  if (sent.length !== expected) problems.push(`${sent.length} replies delivered, ${expected} expected`);
  if (tracker.answered !== expected)
    problems.push(`${tracker.answered} replies matched, ${expected} expected`);
  if (problems.length > 0) {
    const more = problems.length > 5 ? `; and ${problems.length - 5} more` : "";
    throw new Error(`telegram-throughput: bad replies: ${problems.slice(0, 5).join("; ")}${more}`);
  }
}
