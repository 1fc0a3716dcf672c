/**
 * One chaos run: a fake chat platform and a streaming model simulator in this process, the built
 * gateway as a child on a temp home; user traffic at a steady pace while the planned kills land,
 * each followed at once by a restart; then a bounded wait for the last answers, a SIGTERM, and the
 * verdict on what the chats finally show. Everything it starts is stopped and removed on every path.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { chaosResponder, chunkCharsFor } from "./answers.js";
import type { ChaosFlags } from "./flags.js";
import { type GatewayLife, GatewayRunner } from "./gateway-runner.js";
import { COMMON_MOMENTS, type PlannedKill, planKills, seededRandom } from "./kill-plan.js";
import { killAtMoment } from "./killer.js";
import { ModelTap } from "./model-tap.js";
import { platforms } from "./platforms/registry.js";
import { restartFigures } from "./restart-figures.js";
import { Timeline } from "./timeline.js";
import { paceFor, runTraffic } from "./traffic.js";
import { firstRoundAnswered, lastAnswers } from "./settle.js";
import { RecordedMessages } from "./recorded-messages.js";
import { recordWrites, writeTrace } from "./trace.js";
import type { ChaosSummary, ChatPlatform, KillRecord } from "./types.js";
import { judge, summarize } from "./verdict.js";
import { WaitAborted } from "./waits.js";

/** Model pacing: answers of 150–300 characters take about a second to stream. */
const CHUNK_DELAY_MS = 25;
/** Longest wait for a gateway to print "listening on", in ms. */
const LISTEN_LIMIT_MS = 60_000;
/** Expected time per kill (start-up plus the wait for its moment): the traffic is spread over the kills. */
const PER_KILL_MS = 2_500;
/** Longest wait for a SIGKILLed process to be dead before its records are read. */
const GONE_LIMIT_MS = 2_000;
/** Longest wait for each chat's first answer before the first kill, in ms. */
const FIRST_ROUND_LIMIT_MS = 30_000;
/** SIGTERM drains; after this the process is killed. */
const TERM_LIMIT_MS = 20_000;

/** What the run reports besides its summary. */
export interface ChaosRunResult {
  summary: ChaosSummary;
  /** The last gateway's stderr tail. */
  stderrTail: string;
  /** The home kept with --keep-home. */
  keptHome?: string;
}

/**
 * The gateway's config for the run: the model behind the tap, the channel with streaming
 * previews, and a model slot per chat (so a restart's figure measures the gateway's waits, not
 * chats queueing for the default 4 slots).
 */
function configYaml(platform: ChatPlatform, modelUrl: string, chats: number): string {
  return [
    "agent:",
    "  model: anthropic/claude-test",
    "lanes:",
    `  maxConcurrent: ${Math.max(4, chats + 1)}`,
    "providers:",
    "  anthropic:",
    "    apiKey: sk-ant-chaos-test-key",
    `    baseUrl: ${modelUrl}`,
    "channels:",
    ...platform.configLines(),
    "logging:",
    `  level: ${process.env.CHAOS_LOG_LEVEL ?? "warn"}`,
    "",
  ].join("\n");
}

/**
 * Runs the chaos described by `flags`; `progress` gets one line per step. Rejects when a gateway
 * does not start or exits by itself (with its stderr), or when `signal` aborts.
 */
export async function runChaos(
  flags: ChaosFlags,
  progress: (line: string) => void,
  signal: AbortSignal,
): Promise<ChaosRunResult> {
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const platform = platforms[flags.channel](now);
  const sim = new ModelSimulator({
    chunkDelayMs: CHUNK_DELAY_MS,
    chunkChars: chunkCharsFor(flags.chats, flags.messages),
  });
  sim.setDefault(chaosResponder);
  const home = mkdtempSync(join(tmpdir(), "sy-chaos-home-"));
  const cwd = mkdtempSync(join(tmpdir(), "sy-chaos-cwd-"));
  const runner = new GatewayRunner({
    home,
    configPath: join(home, "switchyard.yaml"),
    cwd,
    now,
    reapAtOnce: flags.reapAtOnce,
  });
  const onExit = () => runner.killAll();
  process.once("exit", onExit);
  const stop = new AbortController();
  const running = AbortSignal.any([signal, stop.signal]);
  const timeline = new Timeline(now);
  const recorded = new RecordedMessages(home, flags.channel);
  let tap: ModelTap | undefined;
  try {
    await sim.start();
    tap = new ModelTap({ upstream: sim.url, now });
    await tap.start();
    await platform.start(flags.chats);
    writeFileSync(join(home, "switchyard.yaml"), configYaml(platform, tap.url, flags.chats));
    timeline.attach(platform, tap);
    const writes = flags.keepHome ? recordWrites(platform) : [];
    const deps = { platform, tap, timeline, now };
    const plan = planKills(
      flags.kills,
      [...COMMON_MOMENTS, ...platform.ownMoments],
      seededRandom(flags.seed),
    );
    const kills: KillRecord[] = [];
    const afterKill: GatewayLife[] = [];
    const notes: string[] = [];
    const spawn = () => {
      const next = runner.spawn();
      platform.spawned();
      return next;
    };

    let life = spawn();
    await listening(life);
    progress(
      `gateway up in ${Math.round((life.listeningAtMs ?? 0) - life.spawnedAtMs)} ms; ${flags.messages} messages over ${flags.chats} chats, ${flags.kills} kills, seed ${flags.seed}`,
    );
    const traffic = runTraffic({
      platform,
      timeline,
      messages: flags.messages,
      chats: flags.chats,
      paceMs: paceFor(flags.messages, Math.max(1, flags.kills) * PER_KILL_MS),
      random: seededRandom(flags.seed ^ 0x5eed),
      now,
      signal: running,
    });
    traffic.catch(() => {}); // awaited below; a teardown must not leave it unhandled
    const firstChats = Math.min(flags.chats, flags.messages);
    if (flags.kills > 0 && !(await firstRoundAnswered(timeline, firstChats, FIRST_ROUND_LIMIT_MS, running))) {
      notes.push(
        `not every chat's first message was answered within ${FIRST_ROUND_LIMIT_MS / 1000} s; the kills started anyway`,
      );
    }
    for (const [i, planned] of plan.entries()) {
      if (!platform.ownMoments.includes(planned.moment)) await listening(life);
      const record = await killWithin(life, planned, deps);
      // What the dead process had recorded, read before its successor changes anything: a
      // millisecond or so after the kill (its figures count from the spawn).
      if (await life.gone(GONE_LIMIT_MS)) record.recorded = recorded.read();
      else
        notes.push(
          `gateway #${life.index} still ran ${GONE_LIMIT_MS} ms after SIGKILL: its records were not read`,
        );
      kills.push(record);
      const what = record.missed ? `${record.missed} missed` : record.moment;
      progress(
        `kill ${i + 1}/${plan.length} at ${(record.atMs / 1000).toFixed(1)} s: ${what} (${record.observed ?? ""}); mid-turn chats [${record.chatsMidTurn.join(", ")}]`,
      );
      life = spawn(); // at once: the dead process may not even be reaped yet
      afterKill.push(life);
    }
    await listening(life);
    await traffic;
    progress(
      `all ${timeline.sent.length} messages sent, ${timeline.answered} answered; waiting for the rest`,
    );
    await lastAnswers(timeline, now, kills.at(-1)?.atMs, running);
    const endMs = now();
    const code = await life.terminate(TERM_LIMIT_MS);
    if (code !== 0) notes.push(`the last gateway did not stop cleanly on SIGTERM (${life.exitStatus})`);
    for (const l of [...afterKill, life]) {
      if (l.stderrTail().includes("sources changed since the last build")) {
        notes.push(
          `gateway #${l.index} recompiled src/ when it started (a source file changed during the run)`,
        );
      }
    }
    for (const k of kills)
      if (k.missed) notes.push(`${k.missed} did not happen within the limit: killed then`);
    const figures = restartFigures({
      kills,
      restartSpawnedAtMs: afterKill.map((l) => l.spawnedAtMs),
      restartListeningAtMs: afterKill.map((l) => l.listeningAtMs),
      completions: timeline.completions,
      streams: tap.streams,
      endMs,
    });
    const verdict = judge({
      channel: flags.channel,
      sent: timeline.sent,
      chats: platform.view(),
      kills,
      figures,
    });
    const summary = summarize({
      channel: flags.channel,
      seed: flags.seed,
      chats: flags.chats,
      sent: timeline.sent,
      kills,
      verdict,
      durationMs: now(),
      notes: [...new Set(notes)],
    });
    if (flags.keepHome) {
      const chats = platform.view();
      writeTrace(home, {
        flags,
        kills,
        restarts: afterKill,
        timeline,
        writes,
        streams: tap.streams,
        figures,
        chats,
      });
    }
    return { summary, stderrTail: life.stderrTail(), ...(flags.keepHome ? { keptHome: home } : {}) };
  } finally {
    stop.abort("run over");
    runner.killAll();
    process.removeListener("exit", onExit);
    await platform.close().catch(() => {});
    await tap?.close().catch(() => {});
    await sim.close().catch(() => {});
    recorded.close();
    if (!flags.keepHome) rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }

  /**
   * Waits for "listening on" (bounded); rejects when the process exits first or the run aborts.
   * Then the gateways killed before it are reaped: it has looked at its predecessors by now.
   */
  async function listening(l: GatewayLife): Promise<void> {
    let onAbort = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new WaitAborted(running.reason));
      if (running.aborted) onAbort();
      else running.addEventListener("abort", onAbort, { once: true });
    });
    aborted.catch(() => {});
    try {
      await Promise.race([l.listening(LISTEN_LIMIT_MS), aborted]);
    } finally {
      running.removeEventListener("abort", onAbort);
    }
    runner.reapDead();
  }

  /** Kills at the planned moment; a process that exits by itself first ends the run. */
  async function killWithin(
    l: GatewayLife,
    planned: PlannedKill,
    deps: Parameters<typeof killAtMoment>[2],
  ): Promise<KillRecord> {
    const ownExit = new AbortController();
    void l.exited.then(() => ownExit.abort(`gateway #${l.index} exited by itself (${l.exitStatus})`));
    try {
      return await killAtMoment(l, planned, deps, AbortSignal.any([running, ownExit.signal]));
    } catch (error) {
      if (ownExit.signal.aborted && !running.aborted) {
        throw new Error(
          `gateway #${l.index} exited by itself (${l.exitStatus}) during the run:\n${l.stderrTail()}`,
        );
      }
      throw error;
    }
  }
}
