/**
 * Restart → first answer: a conversation is mid-turn (its model call open) when the built gateway
 * is SIGKILLed; a new gateway starts at once in the same home, and the client asks again with the
 * same message id (as it would after its connection dropped). The figure is the time from the
 * restart's spawn to that answer, minus the model's own time for the redone call (its exact
 * request replayed straight to the simulator). The killed gateway runs under a parent that never
 * reaps it, so it stays a zombie through the restart, as under a container init that does not
 * reap: a takeover that waited for its lease would show as ~30 s (`gateway.leaseTtlMs`).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelSimulator } from "../src/simulator/model-simulator.js";
import { type GatewayChild, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { fmt, median, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const RESTARTS = 8;
const TARGET_BEYOND_MODEL_MS = 1_000;

/** The process state letter of `pid` (`Z` for a zombie), or undefined when it is gone. */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return undefined;
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs)
      throw new Error(`restart-answer: no ${what} in ${timeoutMs} ms`);
    await sleep(2);
  }
}

/** Time from a restart to the answer of the conversation its predecessor was running. */
export const restartAnswer: Benchmark = {
  id: "restart-answer",
  async run(): Promise<BenchRow[]> {
    const simulator = new ModelSimulator({ chunkDelayMs: 20, chunkChars: 8 });
    await simulator.start();
    const client = new HttpClient({ maxSockets: 8, timeoutMs: 60_000 });
    const home = mkdtempSync(join(tmpdir(), "sy-bench-restart-"));
    const configYaml = [
      "agent:",
      "  model: anthropic/claude-bench",
      "providers:",
      "  anthropic:",
      "    apiKey: sk-ant-bench-key",
      `    baseUrl: ${simulator.url}`,
      "heartbeat:",
      "  everyMs: 0",
      "logging:",
      "  level: warn",
    ].join("\n");
    const children: GatewayChild[] = [];
    const start = async () => {
      const gw = await spawnGateway({ configYaml, home, unreaped: true });
      children.push(gw);
      return gw;
    };
    const totals: number[] = [];
    const startups: number[] = [];
    const models: number[] = [];
    const beyond: number[] = [];
    const toModel: number[] = [];
    try {
      let gw = await start();
      await waitReady(gw, client);
      for (let i = 0; i < RESTARTS; i++) {
        const message = {
          sender: `restart-${i}`,
          text: `question ${i}, asked just before a crash`,
          id: `m-${i}`,
        };
        simulator.script({ hang: true });
        const seen = simulator.requests.length;
        client.postJson(`${gw.url}/v1/chat`, message).catch(() => undefined); // dropped by the kill
        await until("model call", () => simulator.requests.length > seen);
        const dead = gw;
        process.kill(dead.pid, "SIGKILL");
        await until("zombie", () => procState(dead.pid) !== "R" && procState(dead.pid) !== "S");
        if (procState(dead.pid) !== "Z")
          throw new Error(`restart-answer: the killed gateway is not a zombie`);

        // The redone turn may call the model before the new gateway is ready (recovery schedules
        // it during start-up): count from before the spawn.
        const asked = simulator.requests.length;
        gw = await start();
        const startupMs = await waitReady(gw, client, 2);
        const answer = await client.postJson(`${gw.url}/v1/chat`, message);
        const totalMs = performance.now() - gw.spawnedAtMs;
        if (!isAnswered(answer)) throw new Error(`restart-answer: no answer after restart: ${answer.text}`);
        await dead.kill(); // the sleeping parent, and with it the zombie
        const redone = simulator.requests.at(-1);
        if (simulator.requests.length !== asked + 1 || !redone)
          throw new Error("restart-answer: the redone turn did not make exactly one model call");
        // The model's own time for that call: its exact request, straight to the simulator.
        const t0 = performance.now();
        const direct = await client.postJson(`${simulator.url}/v1/messages`, redone.body, {
          "x-api-key": "sk-ant-bench-key",
          "anthropic-version": "2023-06-01",
        });
        const modelMs = performance.now() - t0;
        if (!direct.text.includes("message_stop"))
          throw new Error("restart-answer: the replay did not stream");
        totals.push(totalMs);
        // Spawn → the redone call reached the model (the simulator stamps it in epoch ms).
        toModel.push(redone.timeMs - (performance.timeOrigin + gw.spawnedAtMs));
        startups.push(startupMs);
        models.push(modelMs);
        beyond.push(totalMs - modelMs);
        progress(
          `restart-answer: restart ${i + 1}: ${fmt(totalMs, 0)} ms to the answer (start-up ${fmt(startupMs, 0)}, model call at ${fmt(toModel.at(-1) ?? 0, 0)}, model ${fmt(modelMs, 0)})`,
        );
      }
    } finally {
      for (const child of children) await child.kill();
      client.close();
      await simulator.close();
      rmSync(home, { recursive: true, force: true });
    }
    const maxBeyond = Math.max(...beyond);
    return [
      {
        benchmark: `Restart → answer of a conversation mid-turn at the SIGKILL (ms, ${RESTARTS} restarts; the killed gateway a zombie)`,
        figure: `beyond the model p50 ${fmt(median(beyond), 0)} / max ${fmt(maxBeyond, 0)} (start-up p50 ${fmt(median(startups), 0)}, spawn → model call p50 ${fmt(median(toModel), 0)}, model p50 ${fmt(median(models), 0)}, total p50 ${fmt(median(totals), 0)})`,
        target: `< ${TARGET_BEYOND_MODEL_MS} beyond the model`,
        met: maxBeyond < TARGET_BEYOND_MODEL_MS,
        values: {
          beyondModelP50Ms: median(beyond),
          beyondModelMaxMs: maxBeyond,
          startupP50Ms: median(startups),
          toModelCallP50Ms: median(toModel),
          modelP50Ms: median(models),
          totalP50Ms: median(totals),
        },
      },
    ];
  },
};
