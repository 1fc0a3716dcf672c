/**
 * The BUILT daemon (`node bin/switchyard.js gateway`, fresh home each run, simulator mode) with
 * `channels.discord` pointed at a fake Discord in this process. Start-up: spawn → first 200 from
 * `GET /readyz` (polled every 5 ms), which includes the Discord login: main.ts opens the gateway
 * only after every channel's start, and the Discord channel's start waits for READY (all guilds
 * received) and the per-server slash-command PUT. Median of 3 runs with Discord, interleaved
 * with 3 without, so both figures come from the same machine state. Idle RSS: VmRSS 500 ms after
 * readiness. Then, on the last Discord run, 100,000 MESSAGE_CREATE events in 20 guild channels
 * from 5,000 distinct authors, none mentioning the bot under `requireMention: true`: discord.js
 * parses, caches and emits each (its caches are bounded in src/channels/discord/client.ts), the
 * adapter maps it, and the router keeps it in the inbox as group context. Pushed at most WINDOW
 * ahead of the daemon (its `switchyard_inbound_total{channel="discord"}` counters in /metrics);
 * RSS every 25,000 (after catching up and a 2 s settle), the gateway's readiness, the channel's
 * health and the fake's gateway socket checked each time. The load is bounded to LOAD_LIMIT_MS;
 * what was pushed by then is reported. RSS is read without a forced GC, so it carries ±10-20 MB
 * of not yet collected garbage.
 */
import { FakeDiscord } from "../test/fakes/discord-api.js";
import { type GatewayChild, rssMb, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient } from "./http-client.js";
import { fmt, median, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const RUNS = 3;
const STARTUP_TARGET_MS = 1_000;
const IDLE_RSS_TARGET_MB = 100;
const IDLE_SETTLE_MS = 500;
const LOADED_SETTLE_MS = 2_000;
const MESSAGES = 100_000;
/** RSS is read at each (the row's halves: 50,000 and 100,000). */
const CHECKPOINTS = [25_000, 50_000, 75_000, 100_000];
const CHANNELS = 20;
const AUTHORS = 5_000;
/** Most events pushed but not yet counted by the daemon; pushed in batches of BATCH. */
const WINDOW = 2_000;
const BATCH = 500;
const LOAD_LIMIT_MS = 150_000;
const GROWTH_TARGET_MB = 20;

const GUILD = "220000000000000001";
const TOKEN = "fake-discord-token-for-the-footprint";
const channelId = (i: number) => `32000000000000${String(i).padStart(4, "0")}`;
const author = (i: number) => ({ id: `4200000000${String(i).padStart(8, "0")}`, username: `member${i}` });

function configYaml(fake: FakeDiscord): string {
  return [
    "channels:",
    "  discord:",
    `    token: ${TOKEN}`,
    `    apiUrl: ${fake.apiUrl}`,
    "    guilds:",
    `      "${GUILD}":`,
    "        requireMention: true",
    "",
  ].join("\n");
}

/** Messages the daemon has routed from Discord so far (every verdict), from /metrics. */
async function routed(client: HttpClient, gw: GatewayChild): Promise<Record<string, number>> {
  const res = await client.get(`${gw.url}/metrics`);
  if (res.status !== 200) throw new Error(`discord-footprint: /metrics answered ${res.status}`);
  const counts: Record<string, number> = {};
  for (const m of res.text.matchAll(
    /^switchyard_inbound_total\{channel="discord",verdict="(\w+)"\} (\d+)$/gm,
  ))
    counts[m[1] as string] = Number(m[2]);
  return counts;
}
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** Throws unless the daemon is ready, its Discord channel connected, on the fake's one socket. */
async function checkHealthy(client: HttpClient, gw: GatewayChild, fake: FakeDiscord): Promise<void> {
  const ready = await client.get(`${gw.url}/readyz`);
  const status = JSON.parse((await client.get(`${gw.url}/v1/status`)).text) as {
    channels?: Array<{ name: string; state?: string; detail?: string }>;
  };
  const discord = status.channels?.find((c) => c.name === "discord");
  const problems = [
    ...(ready.status === 200 ? [] : [`/readyz ${ready.status}`]),
    ...(discord?.state === "connected" ? [] : [`discord ${discord?.state} (${discord?.detail ?? "?"})`]),
    ...(fake.connections() === 1 ? [] : [`${fake.connections()} gateway sockets open`]),
  ];
  if (problems.length > 0) throw new Error(`discord-footprint: unhealthy: ${problems.join("; ")}`);
}

interface Checkpoint {
  messages: number;
  rssMb: number;
  elapsedMs: number;
}

/** Pushes up to MESSAGES unmentioned messages, reading RSS at each checkpoint. */
async function load(gw: GatewayChild, fake: FakeDiscord): Promise<Checkpoint[]> {
  const client = new HttpClient({ maxSockets: 2, timeoutMs: 30_000 });
  try {
    const sessions = fake.identifies + fake.resumes;
    const start = performance.now();
    const deadline = start + LOAD_LIMIT_MS;
    const points: Checkpoint[] = [];
    let pushed = 0;
    let counts: Record<string, number> = {};
    let lastReport = start;
    let pausedMs = 0;
    for (const target of CHECKPOINTS) {
      while (performance.now() < deadline) {
        counts = await routed(client, gw);
        const done = sum(counts);
        if (pushed >= target && done >= pushed) break;
        const room = Math.min(BATCH, WINDOW - (pushed - done), target - pushed);
        for (let k = 0; k < room; k++, pushed++)
          fake.userMessage({
            channelId: channelId(pushed % CHANNELS),
            author: author(pushed % AUTHORS),
            content: `chatter ${pushed} among ourselves, not for the bot`,
          });
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          progress(`discord-footprint: ${done}/${MESSAGES} routed, RSS ${fmt(rssMb(gw.pid), 1)} MB`);
        }
        await sleep(10);
      }
      const done = sum(counts);
      if (done < target) {
        progress(`discord-footprint: time limit: ${done} of ${MESSAGES} routed`);
        break;
      }
      const elapsedMs = performance.now() - start - pausedMs;
      const paused = performance.now();
      await sleep(LOADED_SETTLE_MS);
      await checkHealthy(client, gw, fake);
      points.push({ messages: done, rssMb: rssMb(gw.pid), elapsedMs });
      pausedMs += performance.now() - paused;
      progress(
        `discord-footprint: ${done} routed in ${fmt(elapsedMs / 1000, 1)} s, RSS ${fmt(points.at(-1)?.rssMb ?? 0, 1)} MB`,
      );
    }
    if (fake.identifies + fake.resumes !== sessions)
      throw new Error("discord-footprint: the bot reconnected under load");
    const { context: _context, ...other } = counts;
    if (sum(other) > 0)
      throw new Error(`discord-footprint: not all kept as context: ${JSON.stringify(counts)}`);
    return points;
  } finally {
    client.close();
  }
}

/** When the daemon asked the fake for the gateway URL (discord.js loaded, login begun), ms after spawn. */
function loginAt(fake: FakeDiscord, gw: GatewayChild): number {
  const call = fake.calls({ method: "GET", path: "/gateway/bot" }).at(-1);
  if (!call) throw new Error("discord-footprint: ready without logging in to the fake Discord");
  return call.at - (performance.timeOrigin + gw.spawnedAtMs);
}

const signed = (x: number) => `${x < 0 ? "−" : "+"}${fmt(Math.abs(x), 1)}`;

/** Start-up with Discord (and without, interleaved), idle RSS, then RSS over 100,000 messages. */
export const discordFootprint: Benchmark = {
  id: "discord-footprint",
  async run(): Promise<BenchRow[]> {
    const fake = new FakeDiscord({
      token: TOKEN,
      heartbeatIntervalMs: 41_250, // Discord's usual interval
      guilds: [
        {
          id: GUILD,
          name: "Footprint",
          channels: Array.from({ length: CHANNELS }, (_, i) => ({ id: channelId(i), name: `talk-${i}` })),
        },
      ],
    });
    const client = new HttpClient({ maxSockets: 1, timeoutMs: 1_000 });
    const on = { startup: [] as number[], idle: [] as number[], login: [] as number[] };
    const off = { startup: [] as number[], idle: [] as number[] };
    let gw: GatewayChild | undefined;
    try {
      await fake.start();
      for (let r = 0; r < RUNS; r++) {
        for (const discord of [false, true]) {
          gw = await spawnGateway(discord ? { configYaml: configYaml(fake) } : {});
          const into = discord ? on : off;
          into.startup.push(await waitReady(gw, client));
          if (discord) on.login.push(loginAt(fake, gw));
          await sleep(IDLE_SETTLE_MS);
          into.idle.push(rssMb(gw.pid));
          progress(
            `discord-footprint run ${r + 1}, Discord ${discord ? "on" : "off"}: ready in ` +
              `${fmt(into.startup.at(-1) ?? Number.NaN, 0)} ms, RSS ${fmt(into.idle.at(-1) ?? Number.NaN, 1)} MB`,
          );
          if (r < RUNS - 1 || !discord) {
            await gw.kill();
            gw = undefined;
          }
        }
      }
      client.close();
      if (!gw) throw new Error("no gateway left running");
      if (fake.connections() !== 1) throw new Error(`${fake.connections()} gateway sockets open, 1 expected`);
      const idleMb = on.idle.at(-1) ?? Number.NaN;
      const points = await load(gw, fake);
      const startupMs = median(on.startup);
      const idleMedian = median(on.idle);
      const last = points.at(-1);
      const mid = points.find((p) => p.messages === MESSAGES / 2);
      const complete = last?.messages === MESSAGES;
      const growth = (last?.rssMb ?? Number.NaN) - idleMb;
      const runs = (xs: number[], d: number) => xs.map((x) => fmt(x, d)).join(", ");
      return [
        {
          benchmark: `Start-up to /readyz with Discord on (readiness waits for the login to the fake Discord: READY + slash-command PUT), built daemon, fresh home (ms, median of ${RUNS})`,
          figure:
            `${fmt(startupMs, 0)} ms (runs: ${runs(on.startup, 0)}; login begun at ${fmt(median(on.login), 0)} ms, ` +
            `once discord.js is loaded); Discord off, same run: ${fmt(median(off.startup), 0)} ms`,
          target: `< ${STARTUP_TARGET_MS} ms`,
          met: startupMs < STARTUP_TARGET_MS,
          values: { medianMs: startupMs, loginMs: median(on.login), offMedianMs: median(off.startup) },
        },
        {
          benchmark: `Idle RSS after readiness with Discord on (MB, median of ${RUNS})`,
          figure: `${fmt(idleMedian, 1)} MB (runs: ${runs(on.idle, 1)}); Discord off, same run: ${fmt(median(off.idle), 1)} MB`,
          target: `< ${IDLE_RSS_TARGET_MB} MB`,
          met: idleMedian < IDLE_RSS_TARGET_MB,
          values: { medianMb: idleMedian, offMedianMb: median(off.idle) },
        },
        {
          benchmark: `RSS over ${MESSAGES.toLocaleString("en-US")} unmentioned guild messages via fake Discord (${CHANNELS} channels, ${AUTHORS.toLocaleString("en-US")} authors, requireMention: true, each kept as group context) (MB)`,
          figure:
            `idle ${fmt(idleMb, 1)} → ${points.map((p) => `${fmt(p.messages / 1000, 0)}k ${fmt(p.rssMb, 1)}`).join(" → ")} MB ` +
            `(${signed(growth)}; ${mid && last && last !== mid ? `${signed(last.rssMb - mid.rssMb)} over the second half; ` : ""}` +
            `${last?.messages ?? 0} routed in ${fmt((last?.elapsedMs ?? 0) / 1000, 1)} s` +
            `${complete ? "" : `, only ${last?.messages ?? 0} of ${MESSAGES} within ${LOAD_LIMIT_MS / 1000} s`}; healthy)`,
          target: `flat (< +${GROWTH_TARGET_MB} MB over 100k)`,
          met: complete && growth < GROWTH_TARGET_MB,
          values: {
            idleMb,
            rssMb: last?.rssMb ?? Number.NaN,
            growthMb: growth,
            messages: last?.messages ?? 0,
            wallMs: last?.elapsedMs ?? 0,
            ...(mid ? { midRssMb: mid.rssMb } : {}),
          },
        },
      ];
    } finally {
      client.close();
      await gw?.kill();
      await fake.close();
    }
  },
};
