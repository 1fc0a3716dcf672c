/**
 * The control page's speed rows (#28), each against the BUILT gateway as a child process so its
 * CPU is the daemon's alone (/proc/<pid>/task/<tid>/schedstat summed over threads; see
 * proc-cpu.ts); load generators, the model simulator and the clients run in this process.
 *
 * - ui-first-load: a browser's first visit to `/ui/` (page-load.ts) on the checkout's real
 *   `dist/ui`: bytes on the wire (gzip bodies) and raw, files, and the daemon's CPU for a cold
 *   load (first request: files read and gzipped; median of 3 fresh daemons) and a warm one
 *   (median of 20 further loads).
 * - admin-stream: 50 senders chatting for 10 s over /v1/chat against a 200 ms model, all 50
 *   sessions' calls admitted at once; a client on `/v1/admin/events`: frames/s by event, and the
 *   daemon's CPU per second with the stream open vs two runs of the same load without it.
 * - admin-sessions: `/v1/admin/sessions?limit=10000` with 10,000 sessions in the store, 30
 *   requests after a warm-up; the store's two queries timed on their own for the breakdown.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ModelSimulator } from "../src/simulator/model-simulator.js";
import { openSqliteStore } from "../src/store/sqlite/open-sqlite-store.js";
import { utcDayStart } from "../src/admin/session-views.js";
import { type GatewayChild, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { loadPage, type PageLoad } from "./page-load.js";
import { cpuOf, cpuSince } from "./proc-cpu.js";
import { seedSessions } from "./seed-sessions.js";
import { openSseCounter, type SseCounter } from "./sse-counter.js";
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
const PHASE_MS = 10_000;
const WARMUP_MS = 3_000;

interface Phase {
  seconds: number;
  turns: number;
  failed: number;
  cpuMsPerS: number;
  mainMsPerS: number;
  frames: Map<string, number>;
  bytes: number;
}

/** 50 senders chatting until `ms` passed (each finishes its turn); the daemon's CPU meanwhile. */
async function chatPhase(gw: GatewayChild, client: HttpClient, ms: number, stream: boolean): Promise<Phase> {
  let sse: SseCounter | undefined;
  if (stream) {
    sse = await openSseCounter(`${gw.url}/v1/admin/events`);
    await sleep(200); // its first overview is not the load's
    sse.frames.clear();
  }
  const bytes0 = sse?.bytes ?? 0;
  let turns = 0;
  let failed = 0;
  const before = cpuOf(gw.pid);
  const start = performance.now();
  const deadline = start + ms;
  const sender = async (s: number) => {
    for (let m = 0; performance.now() < deadline; m++) {
      const res = await client.postJson(`${gw.url}/v1/chat`, { sender: `sender-${s}`, text: `message ${m}` });
      if (isAnswered(res)) turns++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, (_, s) => sender(s)));
  const seconds = (performance.now() - start) / 1000;
  const cpu = cpuSince(gw.pid, before);
  const frames = new Map(sse?.frames ?? []);
  const bytes = (sse?.bytes ?? 0) - bytes0;
  sse?.close();
  return {
    seconds,
    turns,
    failed,
    cpuMsPerS: cpu.ms / seconds,
    mainMsPerS: cpu.mainMs / seconds,
    frames,
    bytes,
  };
}

/** Row 2: the live stream's cost under 50 active sessions. */
export const adminStream: Benchmark = {
  id: "admin-stream",
  async run(): Promise<BenchRow[]> {
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
        lanes: { maxConcurrent: SENDERS },
      };
      gw = await spawnGateway({ configYaml: `${JSON.stringify(config, null, 2)}\n` });
      await waitReady(gw, client);
      await chatPhase(gw, client, WARMUP_MS, false);
      const without1 = await chatPhase(gw, client, PHASE_MS, false);
      const withStream = await chatPhase(gw, client, PHASE_MS, true);
      const without2 = await chatPhase(gw, client, PHASE_MS, false);
      const baseMsPerS = (without1.cpuMsPerS + without2.cpuMsPerS) / 2;
      const baseTurnsPerS = (without1.turns / without1.seconds + without2.turns / without2.seconds) / 2;
      const turnsPerS = withStream.turns / withStream.seconds;
      const extraMsPerS = withStream.cpuMsPerS - baseMsPerS;
      // The same difference per turn, scaled to the stream run's turn rate (the load is closed-loop).
      const extraPerTurnMs = withStream.cpuMsPerS / turnsPerS - baseMsPerS / baseTurnsPerS;
      const overviewPerS = (withStream.frames.get("overview") ?? 0) / withStream.seconds;
      const sessionPerS = (withStream.frames.get("session") ?? 0) / withStream.seconds;
      const failed = without1.failed + withStream.failed + without2.failed;
      progress(
        `admin-stream: without ${fmt(without1.cpuMsPerS, 1)} / ${fmt(without2.cpuMsPerS, 1)} ms/s at ${fmt(without1.turns / without1.seconds, 1)} / ${fmt(without2.turns / without2.seconds, 1)} turns/s; ` +
          `with ${fmt(withStream.cpuMsPerS, 1)} ms/s (main ${fmt(withStream.mainMsPerS, 1)}) at ${fmt(turnsPerS, 1)} turns/s; ` +
          `${fmt(withStream.bytes / withStream.seconds / KB, 1)} KB/s streamed; ${failed} failed`,
      );
      return [
        {
          benchmark: `Live stream /v1/admin/events with ${SENDERS} sessions chatting over /v1/chat (${MODEL_MS} ms model, all calls admitted at once, ${PHASE_MS / 1000} s), built daemon: frames/s received; daemon CPU ms per s with the stream vs the mean of a run before and after without it (schedstat, all threads)`,
          figure: `overview ${fmt(overviewPerS, 1)}/s, session ${fmt(sessionPerS, 0)}/s (${fmt(withStream.bytes / withStream.seconds / KB, 1)} KB/s); CPU ${fmt(withStream.cpuMsPerS, 0)} vs ${fmt(baseMsPerS, 0)} ms/s (${extraMsPerS >= 0 ? "+" : ""}${fmt(extraMsPerS, 1)} ms/s; per turn ${extraPerTurnMs >= 0 ? "+" : ""}${fmt(extraPerTurnMs, 3)} ms at ${fmt(turnsPerS, 0)} turns/s)${failed > 0 ? `; ${failed} turns FAILED` : ""}`,
          target: "< 50 ms CPU per s (5% of one core)",
          met: extraMsPerS < 50 && failed === 0,
          values: {
            overviewPerS,
            sessionPerS,
            streamBytesPerS: withStream.bytes / withStream.seconds,
            cpuMsPerSWithStream: withStream.cpuMsPerS,
            cpuMsPerSWithout: baseMsPerS,
            extraCpuMsPerS: extraMsPerS,
            extraCpuMsPerTurn: extraPerTurnMs,
            turnsPerS,
            turnsPerSWithout: baseTurnsPerS,
            failed,
          },
        },
      ];
    } finally {
      client.close();
      await gw?.kill();
      await sim.close();
    }
  },
};

const SESSIONS = 10_000;
const REQUESTS = 30;
const WARMUP_REQUESTS = 3;

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
      const url = `${gw.url}/v1/admin/sessions?limit=${SESSIONS}`;
      const ms: number[] = [];
      let bytes = 0;
      for (let i = 0; i < WARMUP_REQUESTS + REQUESTS; i++) {
        const start = performance.now();
        const res = await client.get(url);
        const took = performance.now() - start;
        if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${res.text.slice(0, 200)}`);
        if (i === 0) {
          const n = (JSON.parse(res.text) as { sessions: unknown[] }).sessions.length;
          if (n !== SESSIONS) throw new Error(`GET ${url} listed ${n} sessions, expected ${SESSIONS}`);
        }
        bytes = Buffer.byteLength(res.text);
        if (i >= WARMUP_REQUESTS) ms.push(took);
      }
      const p50 = percentile(ms, 50);
      const p90 = percentile(ms, 90);
      const max = Math.max(...ms);
      const parts = await storeBreakdown(gw.home);
      progress(`admin-sessions: ${ms.map((m) => fmt(m, 1)).join(" ")} ms`);
      return [
        {
          benchmark: `GET /v1/admin/sessions?limit=10000 with ${SESSIONS.toLocaleString("en-US")} sessions in the store, built daemon (ms over ${REQUESTS} requests after ${WARMUP_REQUESTS}; the store's two queries alone, median)`,
          figure: `p50 ${fmt(p50, 1)} / p90 ${fmt(p90, 1)} / max ${fmt(max, 1)} ms (${fmt(bytes / KB, 0)} KB JSON; sessions.list ${fmt(parts.listMs, 1)} ms, usage by session ${fmt(parts.summarizeMs, 1)} ms)`,
          target: "< 50 ms (p90)",
          met: p90 < 50,
          values: {
            p50Ms: p50,
            p90Ms: p90,
            maxMs: max,
            bytes,
            listMs: parts.listMs,
            summarizeMs: parts.summarizeMs,
          },
        },
      ];
    } finally {
      client.close();
      await gw?.kill();
    }
  },
};
