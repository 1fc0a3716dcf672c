/**
 * The control page's speed rows (#28), each against the BUILT gateway as a child process so its
 * CPU is the daemon's alone (/proc/<pid>/task/<tid>/schedstat summed over threads; see
 * proc-cpu.ts); load generators, the model simulator and the clients run in this process.
 *
 * - ui-first-load: a browser's first visit to `/ui/` (page-load.ts) on the checkout's real
 *   `dist/ui`: bytes on the wire (gzip bodies) and raw, files, and the daemon's CPU for a cold
 *   load (first request: files read and gzipped; median of 3 fresh daemons) and a warm one
 *   (median of 20 further loads).
 * - admin-stream: 50 senders chatting over /v1/chat without pause against a 200 ms model, with
 *   the default 4 model slots and with all 50 calls admitted at once; 2.5 s windows alternate
 *   between no stream and one client on `/v1/admin/events` (10 s of each): frames/s by event,
 *   and the daemon's CPU per second (and per turn) with the stream open vs without it.
 * - admin-sessions: `/v1/admin/sessions?limit=10000` with 10,000 sessions in the store, 30
 *   requests after a warm-up; the store's two queries timed on their own for the breakdown.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ModelSimulator } from "../src/simulator/model-simulator.js";
import { openSqliteStore } from "../src/store/sqlite/open-sqlite-store.js";
import { dayStart as utcDayStart } from "../src/harness/models/usage-meter.js";
import { type GatewayChild, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { loadPage, type PageLoad } from "./page-load.js";
import { cpuOf, cpuSince } from "./proc-cpu.js";
import { seedSessions } from "./seed-sessions.js";
import { openSseCounter } from "./sse-counter.js";
import { fmt, median, percentile, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const ROOT = resolve(import.meta.dirname, "..");
const UI_INDEX = join(ROOT, "dist", "ui", "index.html");
const KB = 1000; // as browsers' network panels count

/** The checkout's built page, built now if the build knows how; throws when it is not there. */
function assertPageBuilt(): void {
  if (existsSync(UI_INDEX)) return;
  progress("ui-first-load: dist/ui/index.html is missing; running node bin/build-if-stale.js");
  spawnSync(process.execPath, [join(ROOT, "bin", "build-if-stale.js")], { stdio: ["ignore", 2, 2] });
  if (!existsSync(UI_INDEX))
    throw new Error(
      `${UI_INDEX} is missing, also after \`node bin/build-if-stale.js\`: this checkout's build does not write the control page; the row measures the real page only`,
    );
}

/** One load with the daemon's CPU around it. */
async function measuredLoad(gw: GatewayChild): Promise<{ load: PageLoad; cpuMs: number }> {
  const before = cpuOf(gw.pid);
  const load = await loadPage(gw.url);
  const bad = load.files.filter((f) => f.status !== 200);
  if (bad.length > 0)
    throw new Error(`page files failed: ${bad.map((f) => `${f.path} ${f.status}`).join(", ")}`);
  return { load, cpuMs: cpuSince(gw.pid, before).ms };
}

const COLD_DAEMONS = 3;
const WARM_LOADS = 20;

/** Row 1: the page's first load. */
export const uiFirstLoad: Benchmark = {
  id: "ui-first-load",
  async run(): Promise<BenchRow[]> {
    assertPageBuilt();
    const cold: number[] = [];
    const warm: number[] = [];
    const warmWallMs: number[] = [];
    let first: PageLoad | undefined;
    for (let d = 0; d < COLD_DAEMONS; d++) {
      const gw = await spawnGateway();
      const client = new HttpClient({ maxSockets: 1, timeoutMs: 2_000 });
      try {
        await waitReady(gw, client);
        client.close();
        await sleep(500); // start-up's last work settles
        const c = await measuredLoad(gw);
        cold.push(c.cpuMs);
        first ??= c.load;
        if (d === 0) {
          for (let i = 0; i < WARM_LOADS; i++) {
            await sleep(20);
            const w = await measuredLoad(gw);
            warm.push(w.cpuMs);
            warmWallMs.push(w.load.wallMs);
          }
        }
      } finally {
        client.close();
        await gw.kill();
      }
    }
    const load = first as PageLoad;
    const coldMs = median(cold);
    const warmMs = median(warm);
    progress(
      `ui-first-load: ${load.files.map((f) => `${f.path} ${f.wireBytes}/${f.rawBytes}`).join(", ")}; cold ${cold.map((c) => fmt(c, 1)).join(", ")} ms`,
    );
    return [
      {
        benchmark: `First load of /ui/ as a browser makes it (the page, what its HTML names, the main script's static imports), built daemon (KB gzip bodies; files; daemon CPU ms, all threads from /proc schedstat: cold = first request reads and gzips, median of ${COLD_DAEMONS} daemons; warm = median of ${WARM_LOADS} later loads)`,
        figure: `${fmt(load.wireBytes / KB, 1)} KB gzip (${fmt(load.rawBytes / KB, 1)} KB raw), ${load.files.length} files; CPU cold ${fmt(coldMs, 1)} ms, warm ${fmt(warmMs, 2)} ms (warm load ${fmt(median(warmWallMs), 1)} ms wall)`,
        target: "< 150 KB gzip",
        met: load.wireBytes < 150 * KB,
        values: {
          wireBytes: load.wireBytes,
          rawBytes: load.rawBytes,
          files: load.files.length,
          coldCpuMs: coldMs,
          warmCpuMs: warmMs,
          warmWallMs: median(warmWallMs),
        },
      },
    ];
  },
};

const SENDERS = 50;
const MODEL_MS = 200;
const WINDOW_MS = 2_500;
const WINDOWS = 8; // alternating without / with the stream: 10 s of each
const WARMUP_MS = 3_000;

/** What one condition (stream open or not) summed over its windows. */
interface Condition {
  seconds: number;
  turns: number;
  cpuMs: number;
  frames: Map<string, number>;
  bytes: number;
}

/**
 * 50 senders chatting without pause for the whole run; after a warm-up, windows of 2.5 s
 * alternate between no stream and one client on the stream (opened at the window's start,
 * closed at its end), so drift and the machine's other load fall on both conditions alike.
 */
async function alternatingLoad(
  gw: GatewayChild,
  client: HttpClient,
): Promise<{ off: Condition; on: Condition; failed: number }> {
  const empty = (): Condition => ({ seconds: 0, turns: 0, cpuMs: 0, frames: new Map(), bytes: 0 });
  const off = empty();
  const on = empty();
  let turns = 0;
  let failed = 0;
  let stop = false;
  const sender = async (s: number) => {
    for (let m = 0; !stop; m++) {
      const res = await client.postJson(`${gw.url}/v1/chat`, { sender: `sender-${s}`, text: `message ${m}` });
      if (isAnswered(res)) turns++;
      else failed++;
    }
  };
  const senders = Promise.all(Array.from({ length: SENDERS }, (_, s) => sender(s)));
  try {
    await sleep(WARMUP_MS);
    for (let w = 0; w < WINDOWS; w++) {
      const c = w % 2 === 1 ? on : off;
      const before = cpuOf(gw.pid);
      const turns0 = turns;
      const t0 = performance.now();
      const sse = c === on ? await openSseCounter(`${gw.url}/v1/admin/events`) : undefined;
      await sleep(WINDOW_MS - (performance.now() - t0));
      sse?.close();
      c.cpuMs += cpuSince(gw.pid, before).ms;
      c.seconds += (performance.now() - t0) / 1000;
      c.turns += turns - turns0;
      c.bytes += sse?.bytes ?? 0;
      for (const [name, n] of sse?.frames ?? []) c.frames.set(name, (c.frames.get(name) ?? 0) + n);
    }
  } finally {
    stop = true;
    await senders;
  }
  return { off, on, failed };
}

/** The stream's cost under 50 sessions chatting, with `slots` model calls admitted at once. */
async function streamCost(slots: number): Promise<BenchRow> {
  const sim = new ModelSimulator({ keepRequests: 10 });
  sim.setDefault(async () => {
    await sleep(MODEL_MS);
    return { text: "A short answer after some thought." };
  });
  await sim.start();
  let gw: GatewayChild | undefined;
  const client = new HttpClient({ maxSockets: SENDERS + 4, timeoutMs: 30_000 });
  try {
    const config = {
      agent: { model: "anthropic/claude-bench" },
      providers: { anthropic: { apiKey: "sk-ant-bench-key", baseUrl: sim.url } },
      lanes: { maxConcurrent: slots },
    };
    gw = await spawnGateway({ configYaml: `${JSON.stringify(config, null, 2)}\n` });
    await waitReady(gw, client);
    const { off, on, failed } = await alternatingLoad(gw, client);
    const offMsPerS = off.cpuMs / off.seconds;
    const onMsPerS = on.cpuMs / on.seconds;
    const offTurnsPerS = off.turns / off.seconds;
    const onTurnsPerS = on.turns / on.seconds;
    const extraMsPerS = onMsPerS - offMsPerS;
    // Per turn, then at the stream windows' turn rate: fair when the two rates differ (a
    // saturated daemon answers fewer turns while it also streams).
    const extraPerTurnMs = on.cpuMs / on.turns - off.cpuMs / off.turns;
    const overviewPerS = (on.frames.get("overview") ?? 0) / on.seconds;
    const sessionPerS = (on.frames.get("session") ?? 0) / on.seconds;
    const kbPerS = on.bytes / on.seconds / KB;
    progress(
      `admin-stream (${slots} slots): without ${fmt(offMsPerS, 1)} ms/s at ${fmt(offTurnsPerS, 1)} turns/s; ` +
        `with ${fmt(onMsPerS, 1)} ms/s at ${fmt(onTurnsPerS, 1)} turns/s; ${fmt(kbPerS, 1)} KB/s streamed; ${failed} failed`,
    );
    const sign = (x: number, d: number) => `${x >= 0 ? "+" : ""}${fmt(x, d)}`;
    return {
      benchmark: `Live stream /v1/admin/events, ${SENDERS} sessions chatting over /v1/chat without pause (${MODEL_MS} ms model, lanes.maxConcurrent ${slots}${slots === 4 ? ", the default" : ""}), built daemon: frames/s received; daemon CPU ms per s (schedstat, all threads) in 2.5 s windows alternating with and without one stream client, 10 s of each`,
      figure: `overview ${fmt(overviewPerS, 1)}/s, session ${fmt(sessionPerS, 0)}/s (${fmt(kbPerS, 1)} KB/s); CPU ${fmt(onMsPerS, 0)} vs ${fmt(offMsPerS, 0)} ms/s at ${fmt(onTurnsPerS, 0)} vs ${fmt(offTurnsPerS, 0)} turns/s (${sign(extraMsPerS, 0)} ms/s; per turn ${sign(extraPerTurnMs, 2)} ms = ${sign(extraPerTurnMs * onTurnsPerS, 0)} ms/s at the stream's turn rate)${failed > 0 ? `; ${failed} turns FAILED` : ""}`,
      target: "< 50 ms CPU per s (5% of one core)",
      met: Math.max(extraMsPerS, extraPerTurnMs * onTurnsPerS) < 50 && failed === 0,
      values: {
        slots,
        overviewPerS,
        sessionPerS,
        streamBytesPerS: on.bytes / on.seconds,
        cpuMsPerSWithStream: onMsPerS,
        cpuMsPerSWithout: offMsPerS,
        extraCpuMsPerS: extraMsPerS,
        extraCpuMsPerTurn: extraPerTurnMs,
        turnsPerSWithStream: onTurnsPerS,
        turnsPerSWithout: offTurnsPerS,
        failed,
      },
    };
  } finally {
    client.close();
    await gw?.kill();
    await sim.close();
  }
}

/** Row 2: the live stream's cost under 50 active sessions, default slots and all 50 admitted. */
export const adminStream: Benchmark = {
  id: "admin-stream",
  async run(): Promise<BenchRow[]> {
    return [await streamCost(4), await streamCost(SENDERS)];
  },
};

const SESSIONS = 10_000;
const REQUESTS = 30;
const WARMUP_REQUESTS = 3;
/** What `/v1/admin/sessions` lists without `limit` (contract.ts). */
const DEFAULT_LIMIT = 200;

/** Times `REQUESTS` GETs of `url` after a warm-up; checks the first lists `expected` sessions. */
async function timeRequests(
  client: HttpClient,
  url: string,
  expected: number,
): Promise<{ ms: number[]; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < WARMUP_REQUESTS + REQUESTS; i++) {
    const start = performance.now();
    const res = await client.get(url);
    const took = performance.now() - start;
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${res.text.slice(0, 200)}`);
    if (i === 0) {
      const n = (JSON.parse(res.text) as { sessions: unknown[] }).sessions.length;
      if (n !== expected) throw new Error(`GET ${url} listed ${n} sessions, expected ${expected}`);
    }
    bytes = Buffer.byteLength(res.text);
    if (i >= WARMUP_REQUESTS) ms.push(took);
  }
  return { ms, bytes };
}

/** The two store queries of `/v1/admin/sessions`, timed alone on the daemon's database (ms, median of 5). */
async function storeBreakdown(home: string): Promise<{ listMs: number; summarizeMs: number }> {
  const store = openSqliteStore({ path: join(home, "switchyard.db"), readonly: true });
  try {
    const list: number[] = [];
    const summarize: number[] = [];
    for (let i = 0; i < 6; i++) {
      let t0 = performance.now();
      await store.sessions.list(SESSIONS);
      if (i > 0) list.push(performance.now() - t0);
      t0 = performance.now();
      await store.usage.summarize({ since: utcDayStart(Date.now()), by: "session" });
      if (i > 0) summarize.push(performance.now() - t0);
    }
    return { listMs: median(list), summarizeMs: median(summarize) };
  } finally {
    await store.close();
  }
}

/** Row 3: the sessions list with 10,000 sessions. */
export const adminSessions: Benchmark = {
  id: "admin-sessions",
  async run(): Promise<BenchRow[]> {
    let gw: GatewayChild | undefined;
    const client = new HttpClient({ maxSockets: 1, timeoutMs: 30_000 });
    try {
      const t0 = performance.now();
      gw = await spawnGateway({ prepareHome: async (home) => void (await seedSessions(home, SESSIONS)) });
      progress(`admin-sessions: ${SESSIONS} sessions seeded in ${fmt((performance.now() - t0) / 1000, 1)} s`);
      await waitReady(gw, client, 5, 60_000);
      const all = await timeRequests(client, `${gw.url}/v1/admin/sessions?limit=${SESSIONS}`, SESSIONS);
      const page = await timeRequests(client, `${gw.url}/v1/admin/sessions`, DEFAULT_LIMIT);
      const p50 = percentile(all.ms, 50);
      const p90 = percentile(all.ms, 90);
      const max = Math.max(...all.ms);
      const bytes = all.bytes;
      const parts = await storeBreakdown(gw.home);
      progress(`admin-sessions: ${all.ms.map((m) => fmt(m, 1)).join(" ")} ms`);
      return [
        {
          benchmark: `GET /v1/admin/sessions?limit=10000 with ${SESSIONS.toLocaleString("en-US")} sessions in the store, built daemon (ms over ${REQUESTS} requests after ${WARMUP_REQUESTS}; the store's two queries alone, median of 5; the page's default limit of ${DEFAULT_LIMIT})`,
          figure: `p50 ${fmt(p50, 1)} / p90 ${fmt(p90, 1)} / max ${fmt(max, 1)} ms (${fmt(bytes / KB, 0)} KB JSON; sessions.list ${fmt(parts.listMs, 1)} ms, usage by session ${fmt(parts.summarizeMs, 1)} ms); limit ${DEFAULT_LIMIT}: p50 ${fmt(percentile(page.ms, 50), 1)} / p90 ${fmt(percentile(page.ms, 90), 1)} ms`,
          target: "< 50 ms (p90)",
          met: p90 < 50,
          values: {
            p50Ms: p50,
            p90Ms: p90,
            maxMs: max,
            bytes,
            listMs: parts.listMs,
            summarizeMs: parts.summarizeMs,
            defaultLimitP50Ms: percentile(page.ms, 50),
            defaultLimitP90Ms: percentile(page.ms, 90),
          },
        },
      ];
    } finally {
      client.close();
      await gw?.kill();
    }
  },
};
