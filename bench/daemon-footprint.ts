/**
 * Rows 5 and 6: the BUILT daemon as users run it (`node bin/switchyard.js gateway`, fresh home
 * each run). Start-up: spawn → first 200 from `GET /readyz`, polled every 5 ms, median of 5 runs
 * in simulator mode (no API key). Memory: VmRSS 500 ms after readiness (median of the 5), then,
 * on the last run, after 10,000 messages from 10,000 distinct senders (50 in flight) and a 2 s
 * settle. The built-in simulator lives in the daemon and keeps every request it received, so the
 * load is repeated against a daemon whose model server (a ModelSimulator) lives in this process:
 * that figure is the gateway's own.
 */
import { ModelSimulator } from "../src/simulator/model-simulator.js";
import { type GatewayChild, rssMb, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { fmt, median, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const RUNS = 5;
const STARTUP_TARGET_MS = 1_000;
const IDLE_RSS_TARGET_MB = 100;
const SESSIONS = 10_000;
const IN_FLIGHT = 50;
/** Per load phase; two phases must fit the whole run's 5 minutes. */
const SESSIONS_LIMIT_MS = 80_000;
const IDLE_SETTLE_MS = 500;
const LOADED_SETTLE_MS = 2_000;

interface Loaded {
  sent: number;
  failed: number;
  wallMs: number;
  idleMb: number;
  rssMb: number;
}

/**
 * Sends one message per distinct sender, IN_FLIGHT at a time, until done or the deadline, then
 * settles and reads the RSS. `tick` runs after every answer.
 */
async function loadSessions(gw: GatewayChild, label: string, tick: () => void = () => {}): Promise<Loaded> {
  const client = new HttpClient({ maxSockets: IN_FLIGHT, timeoutMs: 60_000 });
  try {
    const idleMb = rssMb(gw.pid);
    const deadline = performance.now() + SESSIONS_LIMIT_MS;
    let next = 0;
    let failed = 0;
    const start = performance.now();
    let lastReport = start;
    const worker = async () => {
      while (next < SESSIONS && performance.now() < deadline) {
        const i = next++;
        try {
          const res = await client.postJson(`${gw.url}/v1/chat`, { sender: `user-${i}`, text: `hello ${i}` });
          if (!isAnswered(res)) failed++;
        } catch {
          failed++;
        }
        tick();
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          progress(`daemon-footprint (${label}): ${next}/${SESSIONS} sessions sent`);
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const wallMs = performance.now() - start;
    client.close(); // idle keep-alive sockets would otherwise stay open in the daemon
    await sleep(LOADED_SETTLE_MS);
    const loaded = { sent: next, failed, wallMs, idleMb, rssMb: rssMb(gw.pid) };
    progress(
      `daemon-footprint (${label}): ${loaded.sent} sessions in ${fmt(wallMs / 1000, 1)} s ` +
        `(${fmt((loaded.sent / wallMs) * 1000, 0)} msg/s), ${failed} failed; RSS ${fmt(idleMb, 1)} → ${fmt(loaded.rssMb, 1)} MB`,
    );
    return loaded;
  } finally {
    client.close();
  }
}

function loadedRow(name: string, loaded: Loaded): BenchRow {
  const complete = loaded.sent === SESSIONS && loaded.failed === 0;
  return {
    benchmark: name,
    figure:
      `${fmt(loaded.rssMb, 1)} MB (+${fmt(loaded.rssMb - loaded.idleMb, 1)}; ${loaded.sent} answered in ` +
      `${fmt(loaded.wallMs / 1000, 1)} s${complete ? "" : `, ${loaded.failed} FAILED`})`,
    target: "—",
    values: {
      rssMb: loaded.rssMb,
      growthMb: loaded.rssMb - loaded.idleMb,
      sent: loaded.sent,
      failed: loaded.failed,
      wallMs: loaded.wallMs,
    },
  };
}

/** Start-up, idle RSS and RSS after 10,000 sessions with the built-in simulator. */
async function builtInSimulator(): Promise<BenchRow[]> {
  const client = new HttpClient({ maxSockets: 1, timeoutMs: 1_000 });
  const startups: number[] = [];
  const idle: number[] = [];
  let gw: GatewayChild | undefined;
  try {
    for (let r = 0; r < RUNS; r++) {
      gw = await spawnGateway();
      startups.push(await waitReady(gw, client));
      await sleep(IDLE_SETTLE_MS);
      idle.push(rssMb(gw.pid));
      progress(
        `daemon-footprint run ${r + 1}: ready in ${fmt(startups[r] ?? Number.NaN, 0)} ms, RSS ${fmt(idle[r] ?? Number.NaN, 1)} MB`,
      );
      if (r < RUNS - 1) {
        await gw.kill();
        gw = undefined;
      }
    }
    client.close();
    if (!gw) throw new Error("no gateway left running");
    const loaded = await loadSessions(gw, "built-in simulator");
    const startupMs = median(startups);
    const idleMb = median(idle);
    return [
      {
        benchmark: `Start-up to /readyz, built daemon, fresh home (ms, median of ${RUNS})`,
        figure: `${fmt(startupMs, 0)} ms (runs: ${startups.map((s) => fmt(s, 0)).join(", ")})`,
        target: `< ${STARTUP_TARGET_MS} ms`,
        met: startupMs < STARTUP_TARGET_MS,
        values: { medianMs: startupMs, minMs: Math.min(...startups), maxMs: Math.max(...startups) },
      },
      {
        benchmark: `Idle RSS after readiness (MB, median of ${RUNS})`,
        figure: `${fmt(idleMb, 1)} MB`,
        target: `< ${IDLE_RSS_TARGET_MB} MB`,
        met: idleMb < IDLE_RSS_TARGET_MB,
        values: { medianMb: idleMb },
      },
      loadedRow(
        `RSS after ${SESSIONS.toLocaleString("en-US")} distinct sessions, built-in simulator (MB; ${IN_FLIGHT} in flight)`,
        loaded,
      ),
    ];
  } finally {
    client.close();
    await gw?.kill();
  }
}

/** RSS after 10,000 sessions when the model server is outside the daemon. */
async function externalModel(): Promise<BenchRow[]> {
  const simulator = new ModelSimulator();
  let gw: GatewayChild | undefined;
  const client = new HttpClient({ maxSockets: 1, timeoutMs: 1_000 });
  try {
    await simulator.start();
    gw = await spawnGateway({
      configYaml: [
        "agent:",
        "  model: anthropic/claude-bench",
        "providers:",
        "  anthropic:",
        "    apiKey: sk-ant-bench-key",
        `    baseUrl: ${simulator.url}`,
        "",
      ].join("\n"),
    });
    await waitReady(gw, client);
    client.close();
    await sleep(IDLE_SETTLE_MS);
    // This process keeps no record of the requests: the figure is about the daemon.
    const loaded = await loadSessions(gw, "external model server", () => {
      simulator.requests.length = 0;
    });
    return [
      loadedRow(
        `RSS after ${SESSIONS.toLocaleString("en-US")} distinct sessions, external model server (MB; ${IN_FLIGHT} in flight)`,
        loaded,
      ),
    ];
  } finally {
    client.close();
    await gw?.kill();
    await simulator.close();
  }
}

/** Start-up time to /readyz, idle RSS, RSS after 10,000 sessions (both model set-ups). */
export const daemonFootprint: Benchmark = {
  id: "daemon-footprint",
  async run(): Promise<BenchRow[]> {
    return [...(await builtInSimulator()), ...(await externalModel())];
  },
};
