/**
 * Several nodes on one PostgreSQL (#27 Speed): N separate gateway PROCESSES (the built
 * `bin/switchyard.js gateway`, see gateway-child.ts) on one throwaway local cluster
 * (test/helpers/postgres.ts, fsync off), sharing one database and one workspace folder, their
 * Anthropic provider pointed at a zero-latency ModelSimulator in this process.
 *
 * - `pg-nodes`: turns/s with 1, 2 and 3 nodes, SENDERS HTTP senders spread round-robin over the
 *   nodes, each sending PER_SENDER messages one after another (each sender its own session).
 *   Everything (nodes, PostgreSQL, simulator, clients) shares this machine's cores.
 * - `pg-takeover`: node A holds a session mid-turn (its simulator holds the model call open),
 *   A is SIGKILLed, and the same session's next message goes to node B: the time from the kill
 *   to B's answer, against `gateway.leaseTtlMs` (B cannot run the session before A's lease has
 *   expired: a lease is only taken over once expired, and a dead owner is retired at start-up).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelSimulator } from "../src/simulator/model-simulator.js";
import { startPostgres } from "../test/helpers/postgres.js";
import { type GatewayChild, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { fmt, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";

const SENDERS = 24;
const PER_SENDER = 25;
const WARMUP_PER_NODE = 20;
/** The lease TTL of the takeover case (short, so the case stays short; the target scales with it). */
const TAKEOVER_TTL_MS = 5_000;

/** A node's switchyard.yaml (JSON is YAML): the shared store and workspace, the simulator. */
function nodeConfig(url: string, workspace: string, simulatorUrl: string, leaseTtlMs?: number): string {
  return JSON.stringify({
    store: { engine: "postgres", url, poolSize: 10 },
    agent: { model: "anthropic/claude-bench", workspace },
    providers: { anthropic: { apiKey: "sk-ant-bench-key", baseUrl: simulatorUrl } },
    ...(leaseTtlMs ? { gateway: { leaseTtlMs } } : {}),
  });
}

/** Starts `n` nodes one after another (the first one migrates and marks the workspace). */
async function startNodes(
  n: number,
  client: HttpClient,
  config: (i: number) => string,
): Promise<GatewayChild[]> {
  const nodes: GatewayChild[] = [];
  for (let i = 0; i < n; i++) {
    const node = await spawnGateway({ configYaml: config(i) });
    nodes.push(node);
    await waitReady(node, client, 20, 60_000);
  }
  return nodes;
}

/** Turns/s of `n` nodes on a fresh database. */
async function throughput(
  n: number,
  url: string,
  simulatorUrl: string,
): Promise<{ perSecond: number; failed: number }> {
  const workspace = mkdtempSync(join(tmpdir(), "sy-bench-ws-"));
  const client = new HttpClient({ maxSockets: SENDERS, timeoutMs: 60_000 });
  let nodes: GatewayChild[] = [];
  try {
    nodes = await startNodes(n, client, () => nodeConfig(url, workspace, simulatorUrl));
    for (const [i, node] of nodes.entries())
      for (let m = 0; m < WARMUP_PER_NODE; m++)
        await client.postJson(`${node.url}/v1/chat`, { sender: `warm-${i}-${m % 4}`, text: `warm ${m}` });
    let failed = 0;
    let sent = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: SENDERS }, async (_, s) => {
        const node = nodes[s % nodes.length] as GatewayChild;
        for (let m = 0; m < PER_SENDER; m++) {
          const res = await client.postJson(`${node.url}/v1/chat`, {
            sender: `tp-${s}`,
            text: `message ${m}`,
          });
          sent++;
          if (!isAnswered(res)) failed++;
        }
      }),
    );
    return { perSecond: (sent / (performance.now() - start)) * 1000, failed };
  } finally {
    client.close();
    for (const node of nodes) await node.kill();
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** 1, 2 and 3 nodes on one PostgreSQL: turns/s. */
export const pgNodes: Benchmark = {
  id: "pg-nodes",
  async run(): Promise<BenchRow[]> {
    const server = await startPostgres();
    const sim = new ModelSimulator({ firstByteDelayMs: 0, chunkDelayMs: 0, keepRequests: 10 });
    await sim.start();
    const figures: Array<{ perSecond: number; failed: number }> = [];
    try {
      for (const n of [1, 2, 3]) {
        const url = await server.createDatabase(`nodes${n}`);
        figures.push(await throughput(n, url, sim.url));
        progress(`pg-nodes: ${n} node(s): ${fmt(figures.at(-1)?.perSecond ?? 0, 0)} turns/s`);
      }
    } finally {
      await sim.close();
      await server.stop();
    }
    const [one, two, three] = figures.map((f) => f.perSecond) as [number, number, number];
    const failed = figures.reduce((sum, f) => sum + f.failed, 0);
    return [
      {
        benchmark: `Turns/s on one local PostgreSQL, 1 / 2 / 3 gateway processes, ${SENDERS} senders × ${PER_SENDER} spread over them, zero-latency simulator`,
        figure: `${fmt(one, 0)} / ${fmt(two, 0)} / ${fmt(three, 0)} (2 nodes ${fmt(two / one, 2)}×)${failed > 0 ? `; ${failed} FAILED` : ""}`,
        target: "2 nodes ≥ 1.6× one node (4 cores)",
        met: two / one >= 1.6 && failed === 0,
        values: { oneNodePerSecond: one, twoNodesPerSecond: two, threeNodesPerSecond: three, failed },
      },
    ];
  },
};

/** A node's SIGKILL mid-turn: the time until another node answers that session. */
export const pgTakeover: Benchmark = {
  id: "pg-takeover",
  async run(): Promise<BenchRow[]> {
    const server = await startPostgres();
    // A's model call hangs (far longer than the case); B's answers at once.
    const simA = new ModelSimulator({ firstByteDelayMs: 600_000, keepRequests: 10 });
    const simB = new ModelSimulator({ firstByteDelayMs: 0, chunkDelayMs: 0, keepRequests: 10 });
    await simA.start();
    await simB.start();
    const workspace = mkdtempSync(join(tmpdir(), "sy-bench-ws-"));
    const client = new HttpClient({ maxSockets: 4, timeoutMs: TAKEOVER_TTL_MS + 60_000 });
    let nodes: GatewayChild[] = [];
    let takeoverMs: number;
    let answered: boolean;
    try {
      const url = await server.createDatabase("takeover");
      const sims = [simA, simB];
      nodes = await startNodes(2, client, (i) =>
        nodeConfig(url, workspace, (sims[i] as ModelSimulator).url, TAKEOVER_TTL_MS),
      );
      const [a, b] = nodes as [GatewayChild, GatewayChild];
      // A takes the session and calls its model, which does not answer.
      const held = client
        .postJson(`${a.url}/v1/chat`, { sender: "taken", text: "first" })
        .catch(() => undefined);
      const waitStart = performance.now();
      while (simA.requests.length === 0) {
        if (performance.now() - waitStart > 20_000) throw new Error("node A never called its model");
        await sleep(10);
      }
      const killedAt = performance.now();
      await a.kill();
      const res = await client.postJson(`${b.url}/v1/chat`, { sender: "taken", text: "second" });
      takeoverMs = performance.now() - killedAt;
      answered = isAnswered(res);
      await held;
    } finally {
      client.close();
      for (const node of nodes) await node.kill();
      await simA.close();
      await simB.close();
      await server.stop();
      rmSync(workspace, { recursive: true, force: true });
    }
    progress(`pg-takeover: ${fmt(takeoverMs, 0)} ms after the SIGKILL (leaseTtlMs ${TAKEOVER_TTL_MS})`);
    return [
      {
        benchmark: `Takeover: node A SIGKILLed mid-turn, the session's next message answered by node B (ms from the kill; gateway.leaseTtlMs ${TAKEOVER_TTL_MS})`,
        figure: `${fmt(takeoverMs, 0)}${answered ? "" : "; NOT ANSWERED"}`,
        target: `< leaseTtl + 1 s (${TAKEOVER_TTL_MS + 1_000})`,
        met: answered && takeoverMs < TAKEOVER_TTL_MS + 1_000,
        values: { takeoverMs, leaseTtlMs: TAKEOVER_TTL_MS },
      },
    ];
  },
};
