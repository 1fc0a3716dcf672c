/**
 * Row 2: what one `POST /v1/chat` turn costs on top of the model's own latency. An in-process
 * gateway talks to a ModelSimulator with a fixed 20 ms time to first byte through the real
 * Anthropic SDK. Each gateway turn is followed by a direct, SDK-free streamed request to the same
 * simulator replaying the exact body the gateway just sent (the baseline: the simulator's own
 * latency for that prompt, its parsing and prompt-cache accounting included, plus one loopback
 * round trip, which the gateway pays too). Overhead of turn i = its client-observed latency −
 * the latency of its own replay. A responder hook stamps when the simulator sees each request,
 * splitting the overhead into "before the model call" (intake, inbox, lane, prompt, SDK) and
 * "after" (stream, commit, answer).
 */
import type { ModelProvider, ProviderEvent } from "../src/harness/providers/types.js";
import { defaultResponder } from "../src/simulator/model-simulator.js";
import { type BenchGateway, startBenchGateway } from "./bench-gateway.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { fmt, median, percentile, progress } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const WARMUP = 20;
const TURNS = 300;
const SENDERS = 10;
const FIRST_BYTE_DELAY_MS = 20;
const TARGET_P50_MS = 2;

interface Timed {
  totalMs: number;
  /** Send → the simulator's responder was called. */
  beforeModelMs: number;
}

/** Client-observed latency and its split for one request; `mark()` returns the responder stamp. */
async function timed(send: () => Promise<boolean>, mark: () => number): Promise<Timed> {
  const start = performance.now();
  const ok = await send();
  const end = performance.now();
  if (!ok) throw new Error("request failed");
  return { totalMs: end - start, beforeModelMs: mark() - start };
}

/** End-to-end overhead of one /v1/chat turn over the simulator's own latency. */
export const chatOverhead: Benchmark = {
  id: "chat-overhead",
  async run(): Promise<BenchRow[]> {
    let gw: BenchGateway | undefined;
    const client = new HttpClient({ maxSockets: 4, timeoutMs: 30_000 });
    try {
      gw = await startBenchGateway({ simulator: { firstByteDelayMs: FIRST_BYTE_DELAY_MS, chunkDelayMs: 0 } });
      const { simulator, url } = gw;
      let lastSeenAt = Number.NaN;
      simulator.setDefault((request) => {
        lastSeenAt = performance.now();
        return defaultResponder(request);
      });
      const mark = () => lastSeenAt;
      const direct = (body: unknown) => () =>
        client
          .postJson(`${simulator.url}/v1/messages`, body, {
            "x-api-key": "sk-ant-bench-key",
            "anthropic-version": "2023-06-01",
          })
          .then((r) => r.status === 200 && r.text.includes("message_stop"));
      const chat = (i: number) => () =>
        client
          .postJson(`${url}/v1/chat`, { sender: `ovh-${i % SENDERS}`, text: `message ${i}` })
          .then(isAnswered);

      const base: Timed[] = [];
      const turns: Timed[] = [];
      let modelCalls = 0;
      for (let i = 0; i < WARMUP + TURNS; i++) {
        const before = simulator.requests.length;
        const t = await timed(chat(i), mark);
        modelCalls += simulator.requests.length - before;
        const sent = simulator.requests.at(-1)?.body;
        const b = await timed(direct(sent), mark);
        if (i >= WARMUP) {
          base.push(b);
          turns.push(t);
        }
      }
      const baseMs = median(base.map((b) => b.totalMs));
      const overhead = turns.map((t, i) => t.totalMs - (base[i] as Timed).totalMs);
      const before = turns.map((t, i) => t.beforeModelMs - (base[i] as Timed).beforeModelMs);
      const after = turns.map((_t, i) => (overhead[i] as number) - (before[i] as number));
      const p50 = percentile(overhead, 50);
      const p99 = percentile(overhead, 99);
      const callsPerTurn = modelCalls / (WARMUP + TURNS);
      progress(
        `chat-overhead: baseline ${fmt(baseMs)} ms, turn p50 ${fmt(median(turns.map((t) => t.totalMs)))} ms; ` +
          `overhead before model call p50 ${fmt(percentile(before, 50))} ms, after p50 ${fmt(percentile(after, 50))} ms; ` +
          `${fmt(callsPerTurn)} model calls per turn`,
      );
      return [
        {
          benchmark: `/v1/chat turn overhead over the simulator's ${FIRST_BYTE_DELAY_MS} ms latency (ms; ${TURNS} sequential turns, ${SENDERS} senders)`,
          figure: `p50 ${fmt(p50)} / p99 ${fmt(p99)} (p50 before the model call ${fmt(percentile(before, 50))}, after it ${fmt(percentile(after, 50))})`,
          target: `p50 < ${TARGET_P50_MS} ms`,
          met: p50 < TARGET_P50_MS,
          values: {
            p50Ms: p50,
            p99Ms: p99,
            beforeModelP50Ms: percentile(before, 50),
            afterModelP50Ms: percentile(after, 50),
            baselineP50Ms: baseMs,
            modelCallsPerTurn: callsPerTurn,
          },
        },
        await ownOverheadRow(),
      ];
    } finally {
      client.close();
      await gw?.stop();
    }
  },
};

/** A provider that answers at once in-process: what is left of a turn is the gateway's own work. */
const instantProvider: ModelProvider = {
  id: "instant",
  simulated: false,
  async *stream(): AsyncIterable<ProviderEvent> {
    yield { type: "text_delta", text: "An answer " };
    yield { type: "text_delta", text: "in two parts." };
    yield {
      type: "usage",
      usage: { inputTokens: 900, outputTokens: 6, cacheReadTokens: 800, cacheWriteTokens: 0 },
    };
    yield { type: "stop", reason: "end_turn" };
  },
};

/**
 * The same turns with the model answering in-process (no vendor SDK, no model connection):
 * HTTP intake, inbox, lanes, prompt, transcript, commit and answer, i.e. the part of the
 * overhead that is the gateway's own.
 */
async function ownOverheadRow(): Promise<BenchRow> {
  const client = new HttpClient({ maxSockets: 4, timeoutMs: 30_000 });
  let gw: BenchGateway | undefined;
  try {
    gw = await startBenchGateway({ provider: instantProvider });
    const url = `${gw.url}/v1/chat`;
    const totals: number[] = [];
    for (let i = 0; i < WARMUP + TURNS; i++) {
      const start = performance.now();
      const ok = isAnswered(
        await client.postJson(url, { sender: `own-${i % SENDERS}`, text: `message ${i}` }),
      );
      if (!ok) throw new Error("request failed");
      if (i >= WARMUP) totals.push(performance.now() - start);
    }
    const p50 = percentile(totals, 50);
    const p99 = percentile(totals, 99);
    progress(`chat-overhead (no SDK): p50 ${fmt(p50)} ms, p99 ${fmt(p99)} ms`);
    return {
      benchmark: `/v1/chat turn with the model answering in-process: the gateway's own share (ms; ${TURNS} turns)`,
      figure: `p50 ${fmt(p50)} / p99 ${fmt(p99)}`,
      target: "—",
      values: { p50Ms: p50, p99Ms: p99 },
    };
  } finally {
    client.close();
    await gw?.stop();
  }
}
